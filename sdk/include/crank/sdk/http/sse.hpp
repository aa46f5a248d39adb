#pragma once

// An incremental parser of server-sent events (the WHATWG HTML "event stream" format), the one
// every plugin shares: the REST plugin's SSE upstreams, and the mcp plugin's Streamable HTTP
// answers, standalone GET streams and legacy HTTP+SSE streams. Bytes arrive in chunks of any
// size; events come out as soon as their blank line arrives. Memory is bounded: a line or an
// event larger than its limit stops the parser with an error instead of growing.
//
// The format, as implemented:
// - a UTF-8 byte order mark at the very start of the stream is skipped;
// - lines end with CRLF, LF or CR (a CR ending one chunk and an LF starting the next are one end);
// - a line starting with ':' is a comment (a keep-alive);
// - "field:value" (one space after the colon is dropped), or "field" alone (empty value);
// - event: the event type; data: appended to the data, lines joined with '\n'; id: the event's id
//   (ignored when it contains NUL or is longer than kMaxEventIdBytes); retry: the reconnection
//   delay in ms (only when all ASCII digits, at most 12 of them); every other field is ignored;
// - a blank line after at least one field ends the event: the stream's last event id becomes the
//   event's id (even when the event has no data: the "priming" event of MCP's resumable streams),
//   and the event is dispatched when its data is not empty (type "message" when none was given);
//   the type and data are reset either way;
// - an event not ended by its blank line when the stream ends is dropped (finish()); a
//   reconnection continues the same stream (restart()).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crank::sdk::http {

/// The longest `id:` value kept (every event carries a copy of it).
inline constexpr std::size_t kMaxEventIdBytes = 1024;

/// One dispatched event.
struct SseEvent {
    std::string type = "message";
    std::string data;
    std::string id;  ///< the stream's last event id when the event was dispatched ("" if none)
};

/// Bounds of one parser.
struct SseLimits {
    std::size_t max_line_bytes = std::size_t{1024} * 1024;   ///< one line, without its end
    std::size_t max_event_bytes = std::size_t{1024} * 1024;  ///< one event's data

    /// Lines long enough for a whole event's data plus its field name.
    static SseLimits forEvents(std::size_t max_event_bytes) {
        return SseLimits{max_event_bytes + 64, max_event_bytes};
    }
};

class SseParser {
public:
    explicit SseParser(SseLimits limits = {});

    /// Parses `bytes`, appending every event they complete to `events`. False when a limit was
    /// passed: error() says which, and every later call fails too (until restart()).
    bool feed(std::string_view bytes, std::vector<SseEvent>& events);
    /// The stream ended: a partial line and an event without its blank line are dropped.
    void finish();
    /// A new connection continues the same stream (a reconnection with Last-Event-ID): a partial
    /// line or event of the broken connection is dropped, and so is an error; the last event id,
    /// the retry delay and the count of events are kept.
    void restart();

    /// Why feed() failed ("a line of the event stream is longer than 16 bytes"), or empty.
    const std::string& error() const { return error_; }
    /// The last event id seen ("" before any), to resume with Last-Event-ID.
    const std::string& lastEventId() const { return last_id_; }
    /// The reconnection delay the stream asked for with `retry:`, if any.
    std::optional<std::int64_t> retryMs() const { return retry_ms_; }
    /// Events ended (blank lines after at least one field), with or without data.
    std::uint64_t eventsEnded() const { return events_ended_; }
    const SseLimits& limits() const { return limits_; }

private:
    bool line(std::string_view text, std::vector<SseEvent>& events);
    bool fail(std::string message);
    void dropPartial();

    SseLimits limits_;
    std::string line_;         // the line being read, without its end
    std::string data_;         // the event's data lines, each followed by '\n'
    std::string type_;         // its event type ("" = message)
    bool has_fields_ = false;  // the event being read has had a field
    std::string id_buffer_;    // the id of the event being read (becomes last_id_ at its end)
    std::string last_id_;
    std::optional<std::int64_t> retry_ms_;
    std::uint64_t events_ended_ = 0;
    std::string error_;
    bool after_cr_ = false;     // the previous byte was a CR ending a line
    std::size_t bom_seen_ = 0;  // bytes of a byte order mark matched so far
    bool started_ = false;      // past the optional byte order mark
};

}  // namespace crank::sdk::http
