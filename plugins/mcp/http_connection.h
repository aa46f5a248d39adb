#pragma once

// A connection to an upstream MCP server over HTTP: the Streamable HTTP transport (MCP
// 2025-03-26, 2025-06-18, 2025-11-25 "Transports") or the legacy HTTP+SSE transport (2024-11-05),
// or whichever of the two the server speaks (the specification's backwards-compatibility
// detection).
//
// Streamable HTTP: every message is a POST to the URL. The answer to a request is a JSON body or
// an SSE stream that carries the server's related messages (progress, logs, its own requests)
// before the answer; a stream that ends before the answer is resumed with GET + Last-Event-ID
// after the stream's `retry:` delay. The session id from the initialize response and the
// negotiated protocol version are sent on every later request; a 404 to the session id means the
// session expired (RpcOutcome::session_expired). After initialize, a background thread keeps the
// standalone GET stream open (when the server offers one) for the server's other messages.
// close() deletes the session (DELETE).
//
// Legacy HTTP+SSE: a GET of the URL opens the SSE stream; its first `endpoint` event names the URL
// to POST messages to (it must be on the same origin); every answer and server message arrives on
// that one stream. When it breaks, the connection ends.
//
// Detection (HttpMode::automatic): the first request (initialize) is POSTed to the URL; an answer
// of 400, 404 or 405 switches to the legacy transport, which sends the same request again.
//
// Every wait is bounded (the request's timeout, connect_timeout, max_message_bytes) and polled
// every 50 ms, so that a cancellation or close() is honoured promptly. The exchanges run on the
// SDK's HTTP client (crank::sdk_http): keep-alive connections pooled per connection (a stream
// holds its own while it lasts), one TLS policy, gzip and deflate bodies decoded, the SDK's SSE
// parser. Header values (credentials) are never logged, nor the URL's query.
//
// The code: http_connection.cpp (requests, routing, notifications, close), streamable_http.cpp
// (the Streamable HTTP POST, its answer stream and the standalone GET stream), legacy_sse.cpp
// (the 2024-11-05 transport), http_wire.cpp (one exchange).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "connection.h"
#include "http_wire.h"
#include "upstream_session.h"
#include <crank/sdk/http/exchange.hpp>
#include <crank/sdk/http/url.hpp>

namespace crank::sdk::http {
class SseParser;
}

namespace crank::mcpc {

enum class HttpMode {
    automatic,        ///< Streamable HTTP, or legacy HTTP+SSE when the server refuses the POST
    streamable_http,  ///< Streamable HTTP only
    sse,              ///< legacy HTTP+SSE (2024-11-05) only
};

/// "auto", "streamable_http" or "sse"; false for any other name.
bool parseHttpMode(std::string_view name, HttpMode& mode);

struct HttpOptions {
    std::string url;  ///< http:// or https://; for sse (and auto) the URL of the SSE stream
    HttpMode mode = HttpMode::automatic;
    /// Sent with every HTTP request (Authorization from an auth profile...). The values are
    /// never logged. The transport's own headers (Accept, Content-Type, Mcp-Session-Id,
    /// MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*, Last-Event-ID, Host,
    /// Content-Length, Connection, Transfer-Encoding) cannot be set here.
    std::vector<std::pair<std::string, std::string>> headers;
    /// TCP connect plus TLS handshake of one HTTP exchange (also bounded by the request's own).
    std::chrono::milliseconds connect_timeout{10'000};
    /// The largest JSON body or SSE event accepted; a larger one fails its request (or stream).
    std::size_t max_message_bytes = std::size_t{16} * 1024 * 1024;
    /// How many times in a row a broken SSE stream is reconnected without getting anything: the
    /// stream of a request (resumed with Last-Event-ID) and the standalone GET stream.
    int max_reconnect_attempts = 3;
    /// The wait before reconnecting a stream whose server gave no `retry:` value (doubling
    /// after each failed attempt), and the most any wait may be (the server's `retry:` included).
    std::chrono::milliseconds retry_delay{1'000};
    std::chrono::milliseconds max_retry_delay{30'000};
    /// Bounds a notification or a response to the server (a POST answered with 202).
    std::chrono::milliseconds send_timeout{10'000};
    /// Bounds the DELETE of the session at close().
    std::chrono::milliseconds close_timeout{2'000};
    /// https: verify the server's certificate (chain and name) against `ca_file`, or the
    /// system's CAs when it is empty.
    bool tls_verify = true;
    std::string ca_file;
};

class HttpConnection final : public Connection {
public:
    /// Checks the options (the URL, the headers) and makes the connection; nothing is sent
    /// until the first request. Null, after setting `error`, when an option is wrong.
    static std::unique_ptr<HttpConnection> create(HttpOptions options, MessageHandler on_message,
                                                  LogHandler on_log, std::string& error);
    ~HttpConnection() override;
    HttpConnection(const HttpConnection&) = delete;
    HttpConnection& operator=(const HttpConnection&) = delete;
    HttpConnection(HttpConnection&&) = delete;
    HttpConnection& operator=(HttpConnection&&) = delete;

    using Connection::request;
    RpcOutcome request(std::string_view method, std::string_view params_json,
                       std::chrono::milliseconds timeout, const RequestHooks& hooks) override;
    /// A POST answered with 202 (any 2xx). False when the connection is closed or the server
    /// refused it (the reason is logged).
    bool notify(std::string_view method, std::string_view params_json) override;
    bool send(std::string_view message_json) override;
    void setProtocolVersion(const std::string& version) override;
    /// 2026-07-28 era (streamable_modern.cpp): every request a POST of its own with `_meta` and
    /// the routing headers, answered as JSON or as an SSE stream that is never resumed; a
    /// cancellation closes the stream; no session, no standalone stream, no DELETE. Only over
    /// Streamable HTTP (false once the legacy HTTP+SSE transport is in use).
    bool setModernVersion(const std::string& version) override;
    std::string modernVersion() const override;
    void setClientInfo(const std::string& name, const std::string& version) override;

    /// Stops the background stream (its thread is joined), deletes the Streamable HTTP session
    /// (DELETE; 405 is fine) and fails every request still waiting. Idempotent; the destructor
    /// calls it, then waits for the requests still running on other threads to return.
    void close() override;
    bool open() const override;
    std::string endReason() const override;
    /// "streamable_http" or "sse" (the legacy transport, once detected or configured).
    std::string transportName() const override;

    /// The Streamable HTTP session id the server gave ("" for none).
    std::string sessionId() const;

private:
    enum class Active { undecided, streamable, legacy };
    struct Call;

    HttpConnection(HttpOptions options, MessageHandler on_message, LogHandler on_log);

    Active active() const;
    /// Auto mode: waits for another request's detection to end; true when the transport is still
    /// undecided and this call is to find it out.
    bool startDetection(Call& call);
    RpcOutcome streamableCall(Call& call, bool detecting, std::string& refused);
    RpcOutcome answerStream(Call& call, std::unique_ptr<HttpWire> wire);
    /// The answer in a JSON body (application/json or +json), bounded by max_message_bytes.
    RpcOutcome jsonAnswer(HttpWire& wire, Call& call);
    /// How long to wait before reconnecting a stream after `failures` failed attempts.
    std::chrono::milliseconds reconnectDelay(const sdk::http::SseParser& parser,
                                             int failures) const;
    RpcOutcome legacyCall(Call& call, const std::string& detection);
    /// A 2026-era request: sent again once, with a new id, when the server refuses the version
    /// with -32022 and names one crank speaks.
    RpcOutcome modernCall(Call& call, std::string_view params_json);
    RpcOutcome modernExchange(Call& call, const std::string& body,
                              const sdk::http::HeaderList& headers);
    std::string openLegacy(Call& call);
    RpcOutcome waitAnswer(Call& call);
    /// The outcome of an HTTP error answer: the status and an excerpt of the body, or the
    /// JSON-RPC error it carries.
    RpcOutcome httpError(HttpWire& wire, const Call& call, const sdk::http::Url& target);
    /// Routes the message(s) of an SSE event or a JSON body: an answer to `call` becomes `own`,
    /// an answer to another waiting request is handed to it, anything else goes to the call's
    /// on_related or the handler. False (and `problem` set) for something that is no message.
    bool routeText(std::string_view text, Call* call, std::optional<RpcOutcome>& own,
                   std::string& problem);
    bool deliver(std::int64_t id, RpcOutcome outcome);
    bool post(std::string_view message, std::chrono::milliseconds bound, std::string_view what);
    void sendCancelled(std::int64_t id, const char* reason);
    /// A request to `target`: POST with `body` (or GET/DELETE without), the transport's headers
    /// (the session's when `streamable`), then the configured ones.
    sdk::http::HttpRequest makeRequest(const char* method, const sdk::http::Url& target,
                                       bool streamable, const std::string* body,
                                       const std::string& last_event_id) const;
    /// Takes the session id of the initialize answer; false (and `error`) for an invalid one.
    bool noteSessionId(const std::string* header, std::string& error);
    void maybeStartStandaloneStream();
    void markStreamRequested();
    /// Waits (at most connect_timeout) until the standalone stream's GET is sent.
    void awaitStreamRequested();
    void standaloneStream();
    void legacyStream();
    void end(const std::string& reason);
    /// The server answered 404 to the session id: the session is gone (nothing to DELETE).
    void expire();
    void log(const std::string& line) const;

    HttpOptions options_;
    MessageHandler on_message_;
    LogHandler on_log_;
    sdk::http::Url url_;
    sdk::http::HeaderList headers_;  // options_.headers, checked
    sdk::http::ConnectionPool pool_;
    WireSettings wire_;

    mutable std::mutex mutex_;
    std::condition_variable changed_;  // an answer, the endpoint, the end, a request returning
    Active active_ = Active::undecided;
    bool detecting_ = false;  // a request is finding out which transport the server speaks
    std::string session_id_;
    std::string protocol_version_;
    std::string modern_version_;  // the 2026-era version in use; "" in the 2025 era
    std::string client_name_ = "crank";
    std::string client_version_ = "0";
    std::optional<sdk::http::Url> endpoint_;  // legacy: where messages are POSTed
    bool stream_started_ = false;
    /// The standalone stream's first GET is on the wire (or will never be): requests sent after
    /// notifications/initialized reach the server after it, as a client's would.
    bool stream_requested_ = false;
    std::thread stream_thread_;  // the standalone GET stream, or the legacy SSE stream
    bool ended_ = false;
    std::string end_reason_;
    bool deleted_ = false;
    std::int64_t next_id_ = 1;
    std::map<std::int64_t, std::optional<RpcOutcome>> waiting_;
    int running_ = 0;  // requests and notifications in progress on callers' threads
    std::atomic<bool> stop_{false};
    std::atomic<bool> dropped_requests_{false};  // a 2026 server's request was dropped (logged)
};

/// The HTTP transports: a new HttpConnection for every connection.
ConnectionFactory httpTransport(HttpOptions options);

}  // namespace crank::mcpc
