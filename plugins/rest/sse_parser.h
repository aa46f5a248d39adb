#pragma once

// An incremental parser of server-sent events (the WHATWG HTML "event stream" format), for the
// REST plugin's SSE upstreams. Bytes arrive in chunks of any size; events come out as soon as
// their blank line arrives. Memory is bounded: a line or an event larger than its limit stops
// the parser with an error instead of growing.
//
// The format, as implemented:
// - a UTF-8 byte order mark at the very start is skipped;
// - lines end with CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the
//   next are one line end);
// - a line starting with ':' is a comment;
// - "field: value" (one space after the colon is dropped), or "field" alone (empty value);
// - event: the event type; data: appended to the data, lines joined with '\n'; id: the last event
//   id (ignored when it contains NUL; it stays for later events); retry: the reconnection time in
//   ms (only when the value is all ASCII digits); other fields are ignored;
// - a blank line dispatches the event when it has data (type "message" by default), and resets
//   the type and data either way; an event not ended by a blank line when the stream ends is
//   dropped (finish()).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crank::rest {

/// One dispatched event.
struct SseEvent {
    std::string type = "message";
    std::string data;
    std::string id;  ///< the stream's last event id when the event was dispatched ("" if none)
};

/// Bounds of one parser (the REST plugin sets them from the operation's limits).
struct SseLimits {
    std::size_t max_line_bytes = std::size_t{1024} * 1024;   ///< one line, without its end
    std::size_t max_event_bytes = std::size_t{1024} * 1024;  ///< one event's data
};

class SseParser {
public:
    explicit SseParser(SseLimits limits = {});

    /// Parses `bytes`, appending every event completed by them to `events`. False when a limit
    /// was passed: error() says which, and the parser refuses everything after.
    bool feed(std::string_view bytes, std::vector<SseEvent>& events);
    /// The stream ended: a partial line and an event without its blank line are dropped.
    void finish();

    /// Why feed() failed ("a line of the event stream is longer than 1048576 bytes"), or empty.
    const std::string& error() const { return error_; }
    /// The last event id seen ("" before any), to resume with Last-Event-ID.
    const std::string& lastEventId() const { return last_id_; }
    /// The reconnection time the stream asked for with `retry:`, if any.
    std::optional<std::int64_t> retryMs() const { return retry_ms_; }

private:
    bool line(std::string_view text, std::vector<SseEvent>& events);
    bool fail(std::string message);

    SseLimits limits_;
    std::string line_;  // the line being read, without its end
    std::string data_;  // data lines of the event being read, each followed by '\n'
    std::string type_;  // its event type ("" = message)
    std::string last_id_;
    std::optional<std::int64_t> retry_ms_;
    std::string error_;
    bool started_ = false;      // past the optional byte order mark
    bool after_cr_ = false;     // the previous byte was a CR ending a line
    std::size_t bom_seen_ = 0;  // bytes of a byte order mark matched so far
};

}  // namespace crank::rest
