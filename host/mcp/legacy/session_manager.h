#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "mcp/legacy/mcp_session.h"
#include "util/error.h"

namespace crank::mcp {

struct SessionLimits {
    std::size_t max_sessions = 10'000;
    std::chrono::milliseconds idle_timeout{1'800'000};
    ReplayLimits replay;
};

/// The MCP sessions of this process. Sessions hold live SSE connections, so they are per node;
/// what must outlive a node (stream sessions, jobs) lives in the store. Thread-safe.
class SessionManager {
public:
    explicit SessionManager(SessionLimits limits);
    ~SessionManager();
    SessionManager(const SessionManager&) = delete;
    SessionManager& operator=(const SessionManager&) = delete;

    /// A new session with a cryptographically random id (visible ASCII). ErrorCode::unavailable
    /// when max_sessions are open.
    Result<std::shared_ptr<McpSession>> create(std::string protocolVersion);
    /// The live session with this id (and marks it used), or null when unknown, expired or
    /// deleted.
    std::shared_ptr<McpSession> find(std::string_view id);
    /// The live session with this id without marking it used (a notification to it is not the
    /// client's activity); null when unknown.
    std::shared_ptr<McpSession> peek(std::string_view id) const;
    /// Ends a session (DELETE): closes its streams, cancels its requests. False when unknown.
    bool remove(std::string_view id);
    /// Ends every session unused for longer than the idle timeout; returns how many.
    std::size_t expireIdle();
    /// Ends every session (shutdown).
    void closeAll();
    std::size_t size() const;
    /// Calls `fn` for every live session (outside the manager's lock).
    void forEach(const std::function<void(McpSession&)>& fn) const;

    /// `fn` runs with the id of every session that ends (deleted, expired, closed), after its
    /// streams closed, on the thread that ended it.
    void onEnded(std::function<void(const std::string& id)> fn);

    /// Starts a thread that runs expireIdle() every `interval` until the manager is destroyed.
    void startSweeper(std::chrono::milliseconds interval);

private:
    /// The budget's trimmer: drops the node's oldest replay events until `target` bytes are kept.
    void trimReplay(std::size_t target);

    void ended(McpSession& session) const;

    const SessionLimits limits_;
    std::function<void(const std::string&)> on_ended_;
    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::shared_ptr<McpSession>> sessions_;

    std::mutex sweeperMutex_;
    std::condition_variable sweeperWake_;
    bool stopping_ = false;
    std::thread sweeper_;
};

}  // namespace crank::mcp
