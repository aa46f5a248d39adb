#pragma once

// Server-Sent Events wire format (WHATWG HTML, "Server-sent events", event stream interpretation),
// as MCP's Streamable HTTP transport uses it. Pure functions: no I/O, thread-safe.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace crank::http {

/// Longest Last-Event-ID that parseLastEventId() accepts. Crank's own ids are far shorter; the
/// bound keeps a hostile header from reaching the event store.
inline constexpr std::size_t kMaxLastEventIdLength = 256;

/// One SSE event, terminated by the blank line that dispatches it:
///
///     id: <id>\n            (omitted when `id` is empty: the client keeps its last id)
///     event: <eventType>\n  (omitted when `eventType` is empty: the client sees "message")
///     retry: <retryMs>\n    (only when `retryMs` is given and not negative)
///     data: <line>\n        (one per line of `data`; an empty line is written as "data:")
///     \n
///
/// `data` is split on "\r\n", "\r" and "\n" (each is one line break), so a client reassembles the
/// same text with every break normalised to "\n". An empty `data` yields a single "data:" line:
/// that is the MCP 2025-11-25 priming event when an id is given (id plus empty data).
///
/// `id` and `eventType` are SANITIZED, not rejected: CR, LF and NUL are removed from them, because
/// a line break would end the field and inject others, and a client ignores an id with NUL in it.
/// A field with nothing left is omitted (an empty "id:" would reset the client's cursor). Crank's
/// ids never contain those characters, so this is a defence, not a feature: callers that
/// take ids from outside should validate them first.
std::string formatSseEvent(std::string_view id, std::string_view eventType, std::string_view data,
                           std::optional<int> retryMs = {});

/// An SSE comment, which clients ignore; used as a heartbeat that keeps proxies from timing the
/// connection out. ": <text>\n\n", one ": " line per line of `text`; ":\n\n" for an empty text.
std::string formatSseComment(std::string_view text);

/// The cursor from a Last-Event-ID request header: surrounding spaces and tabs are trimmed.
/// nullopt when there is no usable id: the header is empty or blank, longer than
/// kMaxLastEventIdLength once trimmed, or contains a control character (below 0x20, or 0x7F).
/// Over-long ids are rejected rather than truncated, since a truncated cursor would point at a
/// different event. A caller that wants to answer 400 to a malformed header can tell the cases
/// apart by checking whether the raw header was blank.
std::optional<std::string> parseLastEventId(std::string_view header);

}  // namespace crank::http
