#pragma once

// A connection to one upstream MCP server, whatever the transport (stdio, Streamable HTTP,
// legacy HTTP+SSE): JSON-RPC requests correlated by id and bounded in time, notifications, and
// the answers crank sends to the server's own requests. Everything else the server sends
// (notifications, its requests) goes to a handler: the request's own handler when the transport
// ties the message to a request (a message on the SSE stream of a Streamable HTTP POST), the
// connection's handler otherwise.
//
// THREADING: every member may be called from any thread, concurrently. Handlers run on the
// transport's reader threads; with Streamable HTTP, the messages on a POST's stream (on_related,
// or the handler) and RequestHooks::cancelled run on the thread that called request(). A handler
// may block (a server-to-client request waits for the downstream client) but only for a bounded
// time.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crank::mcpc {

struct MirroredParam;  // param_headers.h

/// An answer to a request: the `result` JSON text, or the server's (or the transport's) error.
struct RpcOutcome {
    std::string result_json;  ///< set when ok
    bool ok = false;
    std::int64_t error_code = 0;  ///< JSON-RPC code; 0 for a transport failure
    std::string error_message;
    std::string error_data_json;  ///< the server's `error.data` as JSON text; empty for none
    /// The request was given up because RequestHooks::cancelled said so (the server was told
    /// with notifications/cancelled).
    bool cancelled = false;
    /// Streamable HTTP: the server answered 404 to our session id. The session has expired;
    /// nothing was processed, and a new session (initialize again) may send the request again.
    bool session_expired = false;
};

/// What a caller of Connection::request can attach to its request. Every member is optional.
struct RequestHooks {
    /// Polled while the request waits (every ~50 ms). Once true, the connection sends
    /// notifications/cancelled for the request and returns an outcome with `cancelled` set.
    std::function<bool()> cancelled;
    /// Called with the request's JSON-RPC id before the request is sent (so that what the server
    /// says about that id, such as progress, can be routed before the answer).
    std::function<void(std::int64_t id)> on_id;
    /// Messages the transport ties to this request (server-to-client requests, progress and
    /// log notifications on the request's own stream). Null: they go to the connection's
    /// handler like every other message.
    std::function<void(std::string_view message_json)> on_related;
    /// 2026-07-28 era: the client capabilities this request declares in its `_meta` (a JSON
    /// object's text: the downstream caller's, as far as crank relays them); empty: none.
    std::string client_capabilities_json;
    /// 2026-07-28 era, tools/call: the called tool's Mcp-Param-* headers (param_headers.h).
    const std::vector<MirroredParam>* mirrored = nullptr;
    /// 2026-07-28 era: answers the `inputRequests` of an input_required result (the object's
    /// text) with the `inputResponses` object's text, for UpstreamSession to send the request
    /// again (input_rounds.h); nullopt gives the input_required result back as it is. Unset:
    /// every input_required result is given back.
    std::function<std::optional<std::string>(const std::string& input_requests_json)> answer_inputs;
};

class Connection {
public:
    /// Every message of the server that is not an answer to one of our requests (JSON text).
    using MessageHandler = std::function<void(std::string_view message_json)>;
    /// One line of the server's diagnostics (stderr of a subprocess), or a note of the
    /// connection's own (malformed output, a dropped stream...).
    using LogHandler = std::function<void(std::string_view line)>;

    virtual ~Connection() = default;
    Connection() = default;
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    Connection(Connection&&) = delete;
    Connection& operator=(Connection&&) = delete;

    /// Sends `{"jsonrpc":"2.0","id":N,"method":..,"params":..}` and waits up to `timeout` for
    /// the answer. `params_json` is a JSON object's text, or empty for none.
    virtual RpcOutcome request(std::string_view method, std::string_view params_json,
                               std::chrono::milliseconds timeout, const RequestHooks& hooks) = 0;
    RpcOutcome request(std::string_view method, std::string_view params_json,
                       std::chrono::milliseconds timeout) {
        return request(method, params_json, timeout, RequestHooks{});
    }
    /// Sends a notification (no answer). False when the connection is closed.
    virtual bool notify(std::string_view method, std::string_view params_json) = 0;
    /// Sends any message as it is (an answer to the server's request). False when closed.
    virtual bool send(std::string_view message_json) = 0;

    /// Tells the transport the negotiated protocol version (after initialize): the HTTP
    /// transports send it as MCP-Protocol-Version on every later request.
    virtual void setProtocolVersion(const std::string& /*version*/) {}

    /// Switches the connection to the 2026-07-28 era with `version` (every request then carries
    /// `_meta` and, over HTTP, the routing headers; no session, no initialize), or back to the
    /// 2025 era with "". False when the transport cannot speak that era.
    virtual bool setModernVersion(const std::string& version) { return version.empty(); }
    /// The 2026-era version in use ("" in the 2025 era).
    virtual std::string modernVersion() const { return {}; }
    /// clientInfo of the 2026-era `_meta` (the 2025 era sends it in initialize).
    virtual void setClientInfo(const std::string& /*name*/, const std::string& /*version*/) {}

    /// Ends the connection (a subprocess is shut down in the specified order, an HTTP session is
    /// deleted) and fails every request still waiting. Idempotent.
    virtual void close() = 0;
    /// False once the connection has ended (the server exited, the stream broke for good...).
    virtual bool open() const = 0;
    /// Why the connection ended (empty while it is open).
    virtual std::string endReason() const = 0;
    /// "stdio", "streamable_http" or "sse" (the legacy 2024-11-05 transport).
    virtual std::string transportName() const = 0;
};

}  // namespace crank::mcpc
