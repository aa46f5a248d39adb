#include "mcp/legacy/session_manager.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <vector>

#include "log/log.h"
#include "util/random.h"

namespace crank::mcp {

SessionManager::SessionManager(SessionLimits limits) : limits_(std::move(limits)) {
    if (limits_.replay.budget) {
        limits_.replay.budget->setTrimmer([this](std::size_t target) { trimReplay(target); });
    }
}

void SessionManager::trimReplay(std::size_t target) {
    const std::shared_ptr<ReplayBudget>& budget = limits_.replay.budget;
    std::vector<std::shared_ptr<McpSession>> sessions;
    {
        std::lock_guard lock(mutex_);
        sessions.reserve(sessions_.size());
        for (const auto& [id, session] : sessions_) {
            sessions.push_back(session);
        }
    }
    // Oldest event first across the node: a heap of sessions by their oldest kept event; each
    // turn drops a little of the oldest session's, then puts it back by its new oldest.
    using Entry = std::pair<std::chrono::steady_clock::time_point, McpSession*>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
    for (const auto& session : sessions) {
        if (const auto oldest = session->oldestReplayEvent()) {
            heap.emplace(*oldest, session.get());
        }
    }
    constexpr std::size_t kChunk = std::size_t{16} * 1024;
    std::size_t trimmed = 0;
    while (budget->bytes() > target && !heap.empty()) {
        McpSession* session = heap.top().second;
        heap.pop();
        trimmed += session->dropOldestReplay(std::min(kChunk, budget->bytes() - target));
        if (const auto oldest = session->oldestReplayEvent()) {
            heap.emplace(*oldest, session);
        }
    }
    log::debug(
        "mcp: replay buffers over mcp.replay_budget_bytes ({}): dropped the oldest {} "
        "bytes",
        budget->maxBytes(), trimmed);
}

SessionManager::~SessionManager() {
    if (limits_.replay.budget) {
        limits_.replay.budget->setTrimmer(nullptr);
    }
    {
        std::lock_guard lock(sweeperMutex_);
        stopping_ = true;
    }
    sweeperWake_.notify_all();
    if (sweeper_.joinable()) {
        sweeper_.join();
    }
    closeAll();
}

Result<std::shared_ptr<McpSession>> SessionManager::create(std::string protocolVersion) {
    auto session =
        std::make_shared<McpSession>(randomHex(24), std::move(protocolVersion), limits_.replay);
    std::lock_guard lock(mutex_);
    if (sessions_.size() >= limits_.max_sessions) {
        return Error{ErrorCode::unavailable, "the server holds its maximum of " +
                                                 std::to_string(limits_.max_sessions) +
                                                 " sessions (mcp.max_sessions); retry later"};
    }
    sessions_.emplace(session->id(), session);
    return session;
}

std::shared_ptr<McpSession> SessionManager::find(std::string_view id) {
    std::shared_ptr<McpSession> session;
    {
        std::lock_guard lock(mutex_);
        const auto it = sessions_.find(std::string(id));
        if (it == sessions_.end()) {
            return nullptr;
        }
        session = it->second;
    }
    // Expired, even if the sweeper has not come round yet; as there, a session with a live
    // stream is in use even when the client sends nothing.
    if (std::chrono::steady_clock::now() - session->lastUsed() > limits_.idle_timeout &&
        session->attachedStreams() == 0) {
        remove(id);
        return nullptr;
    }
    session->touch();
    return session;
}

std::shared_ptr<McpSession> SessionManager::peek(std::string_view id) const {
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(std::string(id));
    return it == sessions_.end() ? nullptr : it->second;
}

bool SessionManager::remove(std::string_view id) {
    std::shared_ptr<McpSession> session;
    {
        std::lock_guard lock(mutex_);
        const auto it = sessions_.find(std::string(id));
        if (it == sessions_.end()) {
            return false;
        }
        session = std::move(it->second);
        sessions_.erase(it);
    }
    ended(*session);
    return true;
}

void SessionManager::onEnded(std::function<void(const std::string& id)> fn) {
    const std::lock_guard lock(mutex_);
    on_ended_ = std::move(fn);
}

void SessionManager::ended(McpSession& session) const {
    session.closeAll();
    std::function<void(const std::string&)> fn;
    {
        const std::lock_guard lock(mutex_);
        fn = on_ended_;
    }
    if (fn) {
        fn(session.id());
    }
}

std::size_t SessionManager::expireIdle() {
    const auto cutoff = std::chrono::steady_clock::now() - limits_.idle_timeout;
    std::vector<std::shared_ptr<McpSession>> expired;
    {
        std::lock_guard lock(mutex_);
        for (auto it = sessions_.begin(); it != sessions_.end();) {
            // A session with a live stream is in use even when the client sends nothing.
            if (it->second->lastUsed() < cutoff && it->second->attachedStreams() == 0) {
                expired.push_back(std::move(it->second));
                it = sessions_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& session : expired) {
        ended(*session);
    }
    if (!expired.empty()) {
        log::debug("mcp: {} idle session(s) expired", expired.size());
    }
    return expired.size();
}

void SessionManager::closeAll() {
    std::unordered_map<std::string, std::shared_ptr<McpSession>> all;
    {
        std::lock_guard lock(mutex_);
        all.swap(sessions_);
    }
    for (auto& [id, session] : all) {
        ended(*session);
    }
}

std::size_t SessionManager::size() const {
    std::lock_guard lock(mutex_);
    return sessions_.size();
}

void SessionManager::forEach(const std::function<void(McpSession&)>& fn) const {
    std::vector<std::shared_ptr<McpSession>> all;
    {
        std::lock_guard lock(mutex_);
        all.reserve(sessions_.size());
        for (const auto& [id, session] : sessions_) {
            all.push_back(session);
        }
    }
    for (const auto& session : all) {
        fn(*session);
    }
}

void SessionManager::startSweeper(std::chrono::milliseconds interval) {
    sweeper_ = std::thread([this, interval] {
        std::unique_lock lock(sweeperMutex_);
        while (!stopping_) {
            sweeperWake_.wait_for(lock, interval, [this] { return stopping_; });
            if (!stopping_) {
                lock.unlock();
                expireIdle();
                lock.lock();
            }
        }
    });
}

}  // namespace crank::mcp
