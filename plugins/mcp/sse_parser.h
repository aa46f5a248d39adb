#pragma once

// An incremental parser of server-sent events (the WHATWG HTML "event stream" format) for the
// HTTP transports of plugins/mcp: the SSE response of a Streamable HTTP POST, the standalone GET
// stream, and the legacy HTTP+SSE stream. Bytes arrive in chunks of any size; events come out as
// soon as their blank line arrives. Memory is bounded: an event (or one line) larger than the
// limit stops the parser with an error instead of growing.
//
// The format, as implemented:
// - a UTF-8 byte order mark at the very start of the stream is skipped;
// - lines end with CRLF, LF or CR (a CR ending one chunk and an LF starting the next are one end);
// - a line starting with ':' is a comment (keep-alive);
// - "field:value" (one space after the colon is dropped), or "field" alone (empty value);
// - event: the event type; data: appended to the data, lines joined with '\n'; id: the last event
//   id (ignored when it contains NUL; it stays for later events and is what a reconnection sends
//   as Last-Event-ID); retry: the reconnection delay in ms (only when all ASCII digits); every
//   other field is ignored;
// - a blank line ends the event: the last event id is updated even when the event has no data
//   (the "priming" event of MCP's resumable streams, `data:` with an empty value), and the event
//   is dispatched when its data is not empty; the type and data are reset either way.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crank::mcpc {

/// One dispatched event.
struct SseEvent {
    std::string type;  ///< "" when the stream gave none (the default "message" type)
    std::string data;
    std::string id;  ///< the stream's last event id when the event was dispatched ("" if none)
};

class SseParser {
public:
    /// `max_event_bytes`: the largest data of one event (and, plus a little, of one line).
    explicit SseParser(std::size_t max_event_bytes);

    /// Parses `bytes`, appending every event they complete to `events`. False when the limit was
    /// passed: error() says so, and every later call fails too.
    bool feed(std::string_view bytes, std::vector<SseEvent>& events);

    /// A new connection continues the same stream (a reconnection with Last-Event-ID): a partial
    /// line or event of the broken connection is dropped, and so is an error; the last event id,
    /// the retry delay and the count of events are kept.
    void restart();

    /// Why feed() failed, or empty.
    const std::string& error() const { return error_; }
    /// The last event id seen ("" before any).
    const std::string& lastEventId() const { return last_id_; }
    /// The reconnection delay the stream asked for with `retry:`, if any.
    std::optional<std::int64_t> retryMs() const { return retry_ms_; }
    /// Events ended (blank lines after at least one field), with or without data.
    std::uint64_t eventsEnded() const { return events_ended_; }

private:
    bool line(std::string_view text, std::vector<SseEvent>& events);
    bool fail(std::string message);

    std::size_t max_event_bytes_;
    std::size_t max_line_bytes_;
    std::string line_;  // the line being read, without its end
    std::string data_;  // the event's data lines, each followed by '\n'
    std::string type_;
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

}  // namespace crank::mcpc
