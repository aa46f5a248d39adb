#pragma once

// The MCP lifecycle over one upstream connection (issue 7): initialize with version negotiation,
// notifications/initialized, requests that reconnect (with backoff) when the server has gone,
// paged tools/list, a one-off connection test (initialize plus ping), and the upstream's status
// for operators (connected since, last used, last error).

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "stdio_connection.h"

namespace crank::mcpc {

struct UpstreamOptions {
    StdioOptions stdio;
    std::chrono::milliseconds request_timeout{30'000};
    std::chrono::milliseconds initialize_timeout{10'000};
    /// After a failed connect the next attempt waits this long, doubling up to the maximum.
    std::chrono::milliseconds backoff_initial{200};
    std::chrono::milliseconds backoff_max{30'000};
    /// The versions offered, newest first: the first is asked for, any of them is accepted.
    std::vector<std::string> protocol_versions{"2025-11-25", "2025-06-18", "2025-03-26"};
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
    std::int64_t reconnects = 0;  ///< connections made after the first
};

class UpstreamSession {
public:
    UpstreamSession(UpstreamOptions options, StdioConnection::MessageHandler on_message,
                    StdioConnection::LogHandler on_log);
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
    /// reconnects.
    RpcOutcome request(std::string_view method, std::string_view params_json);
    /// Every tool of the server (tools/list followed through nextCursor, at most `max_pages`),
    /// as the JSON text of each tool object; the error when a page fails.
    RpcOutcome listTools(std::vector<std::string>& tools, int max_pages = 100);

    UpstreamStatus status() const;
    void close();

    /// Starts the server, initializes and pings it, then shuts it down: the operator's "test
    /// connection". The outcome of the ping, or of the step that failed.
    static RpcOutcome test(const UpstreamOptions& options);

private:
    bool connectLocked();

    UpstreamOptions options_;
    StdioConnection::MessageHandler on_message_;
    StdioConnection::LogHandler on_log_;

    mutable std::mutex mutex_;
    std::shared_ptr<StdioConnection> connection_;
    UpstreamStatus status_;
    bool ever_connected_ = false;
    std::chrono::milliseconds backoff_{0};
    std::chrono::steady_clock::time_point next_attempt_{};
};

}  // namespace crank::mcpc
