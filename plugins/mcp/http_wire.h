#pragma once

// One HTTP exchange of the mcp plugin's HTTP transports, on the SDK's client (crank::sdk_http:
// keep-alive pool, TLS policy, framing, decoding): the request sent, the response head read,
// the body read in pieces as it arrives (an SSE stream) or whole. Every wait is bounded by a
// deadline and polls a halt check (a cancellation, close(), an answer that arrived on another
// stream), so that none outlives what it waits for. Failures are HttpWireFailure, whose message
// names the request ("POST http://127.0.0.1:8080/mcp: ...") and never its query or headers.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <crank/sdk/http/exchange.hpp>
#include <crank/sdk/http/sse.hpp>

namespace crank::mcpc {

using Clock = std::chrono::steady_clock;

/// Why an exchange stopped before it was done.
enum class HttpHalt {
    none,
    cancelled,  ///< RequestHooks::cancelled said so
    closed,     ///< the connection is closing or ended
    answered,   ///< the answer arrived another way (on another stream)
};
using HaltCheck = std::function<HttpHalt()>;

class HttpWireFailure : public std::exception {
public:
    enum class Kind {
        halted,   ///< the halt check said stop (halt() says why)
        timeout,  ///< the deadline of the exchange passed
        failed,   ///< anything else; what() says what, naming the request ("POST http://...")
    };
    HttpWireFailure(Kind kind, HttpHalt halt, std::string message)
        : kind_(kind), halt_(halt), message_(std::move(message)) {}
    Kind kind() const noexcept { return kind_; }
    HttpHalt halt() const noexcept { return halt_; }
    const char* what() const noexcept override { return message_.c_str(); }

private:
    Kind kind_;
    HttpHalt halt_;
    std::string message_;
};

/// Throws HttpWireFailure when `halt` says stop or `deadline` has passed.
void checkHalt(const HaltCheck& halt, Clock::time_point deadline);
/// Waits `wait` (at most until `deadline`), polling `halt`; throws as checkHalt() does.
void pause(Clock::duration wait, Clock::time_point deadline, const HaltCheck& halt);

/// What every exchange of one connection shares.
struct WireSettings {
    sdk::http::ConnectionPool* pool = nullptr;
    sdk::http::ExchangeOptions options;
    std::chrono::milliseconds connect_timeout{10'000};  ///< TCP connect plus TLS handshake
};

class HttpWire {
public:
    /// Sends `request` and reads the response head (1xx answers skipped). The connect gets at
    /// most settings.connect_timeout, and ends at `deadline` anyway. Throws HttpWireFailure.
    HttpWire(const WireSettings& settings, const sdk::http::HttpRequest& request,
             Clock::time_point deadline, const HaltCheck& halt);
    /// Ends the exchange: a connection read to the end of its response goes back to the pool.
    ~HttpWire();
    HttpWire(const HttpWire&) = delete;
    HttpWire& operator=(const HttpWire&) = delete;
    HttpWire(HttpWire&&) = delete;
    HttpWire& operator=(HttpWire&&) = delete;

    const sdk::http::ResponseHead& head() const { return exchange_->head(); }
    int status() const { return head().status; }
    /// The media type of Content-Type, lowercase, without parameters ("" when none).
    std::string mediaType() const;
    /// The body's Content-Length, when it has one (and is not compressed).
    std::optional<std::uint64_t> contentLength() const;
    /// "HTTP 404 Not Found", for messages.
    std::string statusText() const;
    /// Appends body bytes to `out`; false (nothing appended) at the end of the body.
    bool readBody(std::string& out, Clock::time_point deadline, const HaltCheck& halt);
    /// Up to `max` bytes of the body, read until `until` at most (an error's explanation).
    /// Never throws: what could be read.
    std::string readAtMost(std::size_t max, Clock::time_point until);
    /// After the answer arrived on an SSE body: reads what is left (at most `max` bytes, until
    /// `until`), so that a server that ends the stream right after its answer, as it should,
    /// leaves a connection that goes back to the pool. What is read is dropped. Never throws.
    void drainAfterAnswer(std::size_t max, Clock::time_point until);
    /// "POST http://host:port/path", for messages.
    const std::string& what() const { return what_; }

private:
    /// Turns the SDK's failure into this request's, with the halt that cancelled it.
    [[noreturn]] void fail(const sdk::http::ExchangeFailure& failure, HttpHalt halt,
                           Clock::time_point deadline, Clock::time_point connect_deadline) const;

    const WireSettings& settings_;
    std::string what_;
    std::unique_ptr<sdk::http::HttpExchange> exchange_;
};

/// How readEvents() ended.
enum class EventsEnd {
    body_ended,  ///< the server ended the body
    stopped,     ///< `on_event` said stop
    refused,     ///< the parser refused a line or an event over its limit
};

/// Reads the SSE body of `wire` into `parser`, handing every event it completes to `on_event` as
/// soon as it arrives, until `on_event` returns false, the body ends, or the parser refuses (the
/// events before the refusal are handed over first). Throws HttpWireFailure.
EventsEnd readEvents(HttpWire& wire, sdk::http::SseParser& parser, Clock::time_point deadline,
                     const HaltCheck& halt,
                     const std::function<bool(const sdk::http::SseEvent&)>& on_event);

/// `text` with A-Z lowercased (header names compare case-insensitively).
std::string asciiLower(std::string_view text);
/// True when `text` is an RFC 9110 token (a header name, an x-mcp-header): at least one
/// character, each a letter, a digit or one of !#$%&'*+-.^_`|~.
bool isHttpToken(std::string_view text);

/// At most about `max` bytes of `text` for a message: valid UTF-8, control characters shown as
/// spaces ('\n', '\t'...) or '?', "..." after a cut.
std::string excerpt(std::string_view text, std::size_t max = 300);

}  // namespace crank::mcpc
