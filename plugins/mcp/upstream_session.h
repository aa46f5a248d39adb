#pragma once

// The MCP lifecycle over one upstream connection, whatever its transport (issue 7): initialize
// with version negotiation, notifications/initialized, requests that reconnect (with backoff)
// when the server has gone, a new session after the server expired ours (Streamable HTTP 404),
// paged lists, a one-off connection test (initialize plus ping), and the upstream's status for
// operators (connected since, last used, last error).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "connection.h"
#include "modern_tools.h"
#include "stdio_connection.h"

namespace crank::mcpc {

/// Opens a transport's connection (not yet initialized); null after setting `error`.
using ConnectionFactory = std::function<std::unique_ptr<Connection>(
    Connection::MessageHandler on_message, Connection::LogHandler on_log, std::string& error)>;

/// The stdio transport: starts `options.command` for every connection.
ConnectionFactory stdioTransport(StdioOptions options);

struct UpstreamOptions {
    ConnectionFactory transport;
    std::chrono::milliseconds request_timeout{30'000};
    std::chrono::milliseconds initialize_timeout{10'000};
    /// After a failed connect the next attempt waits this long, doubling up to the maximum.
    std::chrono::milliseconds backoff_initial{200};
    std::chrono::milliseconds backoff_max{30'000};
    /// The versions initialize offers, newest first: the first is asked for, any of them is
    /// accepted.
    std::vector<std::string> protocol_versions{"2025-11-25", "2025-06-18", "2025-03-26"};
    /// "auto": the 2026-07-28 era where the transport and the server speak it, else initialize
    /// with protocol_versions (handshake.h); or one version, pinned: "2026-07-28", or a 2025
    /// revision that initialize then asks for alone.
    std::string protocol_version = "auto";
    /// The client capabilities declared in initialize (JSON object text).
    std::string client_capabilities_json = "{}";
    /// clientInfo.name and .version.
    std::string client_name = "crank";
    std::string client_version = "0";
};

/// What an operator sees of one upstream.
struct UpstreamStatus {
    bool connected = false;
    std::int64_t connected_since_ms = 0;  ///< Unix ms, 0 when not connected
    std::int64_t last_used_ms = 0;        ///< Unix ms of the last request, 0 when none
    std::string last_error;               ///< empty when none yet
    std::string protocol_version;         ///< negotiated
    std::string server_name;
    std::string server_version;
    std::int64_t reconnects = 0;           ///< connections made after the first
    std::string transport;                 ///< Connection::transportName() of the last connection
    std::string capabilities_json = "{}";  ///< the server's capabilities (JSON object text)
    std::string instructions;              ///< the server's `instructions`, empty for none
    /// 2026 era: the tools the last listing left out for an invalid x-mcp-header, and why.
    std::vector<RefusedTool> refused_tools;
};

class UpstreamSession {
public:
    /// `on_connected` runs after every successful initialize (the first and each reconnect),
    /// outside the session's lock: the place to fetch lists again.
    UpstreamSession(UpstreamOptions options, Connection::MessageHandler on_message,
                    Connection::LogHandler on_log, std::function<void()> on_connected = nullptr);
    ~UpstreamSession();
    UpstreamSession(const UpstreamSession&) = delete;
    UpstreamSession& operator=(const UpstreamSession&) = delete;
    UpstreamSession(UpstreamSession&&) = delete;
    UpstreamSession& operator=(UpstreamSession&&) = delete;

    /// Connects and initializes unless connected; false (status().last_error says why) when it
    /// cannot, or when the backoff after the last failure has not passed yet.
    bool connect();
    /// A request on the live connection, connecting first when needed. A request that fails
    /// because the server went away is not sent again (it may have had effects); the next one
    /// reconnects. One refused with an expired session (nothing was processed) is sent once
    /// more on a new session. `timeout`: options.request_timeout when not given. 2026 era: with
    /// hooks.answer_inputs, an input_required result is answered and the request sent again
    /// (input_rounds.h), each round bounded by `timeout`.
    RpcOutcome request(std::string_view method, std::string_view params_json,
                       const RequestHooks& hooks = {},
                       std::optional<std::chrono::milliseconds> timeout = std::nullopt);
    /// A notification on the live connection (not connecting for it); false when there is none.
    bool notify(std::string_view method, std::string_view params_json);
    /// A message as it is (an answer to the server's request) on the live connection.
    bool send(std::string_view message_json);
    /// Every item of a paged list method ("tools/list", "resources/list", ...): the JSON text of
    /// each element of `array_member`, following nextCursor for at most `max_pages` pages.
    RpcOutcome listAll(std::string_view method, const char* array_member,
                       std::vector<std::string>& items, int max_pages = 100);
    /// listAll("tools/list", "tools", ...).
    RpcOutcome listTools(std::vector<std::string>& tools, int max_pages = 100) {
        return listAll("tools/list", "tools", tools, max_pages);
    }

    UpstreamStatus status() const;
    void close();

    /// Starts the server, initializes and pings it, then shuts it down: the operator's "test
    /// connection". The outcome of the ping, or of the step that failed.
    static RpcOutcome test(const UpstreamOptions& options);

private:
    /// One request (and, after a session expiry, once more), without MRTR rounds.
    RpcOutcome requestOnce(std::string_view method, std::string_view params_json,
                           const RequestHooks& hooks,
                           std::optional<std::chrono::milliseconds> timeout);
    /// Connects unless connected; `fresh` is set when this call made the connection.
    bool connectLocked(bool& fresh);
    /// The live connection, connecting first; null (with the reason) when there is none.
    std::shared_ptr<Connection> live(std::string& why);

    UpstreamOptions options_;
    Connection::MessageHandler on_message_;
    Connection::LogHandler on_log_;
    std::function<void()> on_connected_;

    mutable std::mutex mutex_;
    std::shared_ptr<Connection> connection_;
    UpstreamStatus status_;
    bool ever_connected_ = false;
    std::chrono::milliseconds backoff_{0};
    std::chrono::steady_clock::time_point next_attempt_{};
    ModernTools modern_tools_;  // 2026 era: the listed tools' Mcp-Param-* headers
};

}  // namespace crank::mcpc
