#pragma once

// A connection to an upstream MCP server run as a subprocess (the stdio transport, MCP
// 2025-11-25 "Transports"): newline-delimited JSON-RPC messages on its stdin and stdout; its
// stderr is log output, never an error. Requests are correlated by id and bounded in time;
// everything else the server sends (notifications, its own requests) goes to a handler.
//
// Shutdown follows the specification's order: close the server's stdin, wait; SIGTERM, wait;
// SIGKILL. The server runs in its own process group, which gets the signals, and has
// PR_SET_PDEATHSIG set, so that no server outlives crankd even when crankd is killed.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "connection.h"
#include <sys/types.h>

namespace crank::mcpc {

struct StdioOptions {
    std::string command;  ///< an absolute path, or a name looked up in PATH
    std::vector<std::string> args;
    /// Added to (or replacing in) crankd's environment.
    std::map<std::string, std::string> env;
    std::string cwd;  ///< empty: crankd's working directory
    /// Shutdown: how long the server gets after its stdin closes, then after SIGTERM.
    std::chrono::milliseconds close_wait{2'000};
    std::chrono::milliseconds term_wait{2'000};
    /// The longest message (one line) accepted from the server; a longer one ends the connection.
    std::size_t max_message_bytes = std::size_t{16} * 1024 * 1024;
};

class StdioConnection final : public Connection {
public:
    /// Starts the server. The error says why it could not (no such command, fork failed...).
    static std::unique_ptr<StdioConnection> start(StdioOptions options, MessageHandler on_message,
                                                  LogHandler on_log, std::string& error);
    ~StdioConnection() override;
    StdioConnection(const StdioConnection&) = delete;
    StdioConnection& operator=(const StdioConnection&) = delete;
    StdioConnection(StdioConnection&&) = delete;
    StdioConnection& operator=(StdioConnection&&) = delete;

    using Connection::request;
    /// The stdio transport ties nothing to a request: RequestHooks::on_related is never called.
    RpcOutcome request(std::string_view method, std::string_view params_json,
                       std::chrono::milliseconds timeout, const RequestHooks& hooks) override;
    bool notify(std::string_view method, std::string_view params_json) override;
    bool send(std::string_view message_json) override;

    /// Shuts the server down in order (stdin, SIGTERM, SIGKILL), reaps it and fails every
    /// request still waiting. Idempotent; the destructor calls it.
    void close() override;

    pid_t pid() const { return pid_; }
    /// False once the server exited or the connection was closed.
    bool open() const override;
    std::string endReason() const override;
    std::string transportName() const override { return "stdio"; }
    /// 2026-07-28 era: every request carries `_meta` (modern_request.h); no initialize; a
    /// cancellation is still notifications/cancelled, as the stdio binding says.
    bool setModernVersion(const std::string& version) override;
    std::string modernVersion() const override;
    void setClientInfo(const std::string& name, const std::string& version) override;

private:
    StdioConnection(StdioOptions options, MessageHandler on_message, LogHandler on_log);
    void readStdout();
    void readStderr();
    void dispatch(std::string_view line);
    bool writeLine(std::string_view json);
    /// The connection is over: every waiting request fails with `reason`.
    void end(const std::string& reason);
    /// Waits up to `wait` for the process to exit; true when it has (and was reaped).
    bool waitExit(std::chrono::milliseconds wait);

    StdioOptions options_;
    MessageHandler on_message_;
    LogHandler on_log_;
    pid_t pid_ = -1;
    int stdin_fd_ = -1;
    int stdout_fd_ = -1;
    int stderr_fd_ = -1;
    std::thread stdout_thread_;
    std::thread stderr_thread_;

    mutable std::mutex mutex_;
    std::condition_variable answered_;
    std::mutex write_mutex_;
    std::int64_t next_id_ = 1;
    std::map<std::int64_t, std::optional<RpcOutcome>> waiting_;
    bool ended_ = false;
    bool reaped_ = false;
    std::string end_reason_;
    std::string modern_version_;  // "" in the 2025 era
    std::string client_name_ = "crank";
    std::string client_version_ = "0";
};

}  // namespace crank::mcpc
