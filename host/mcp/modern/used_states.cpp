#include "mcp/modern/used_states.h"

#include <fmt/core.h>

#include "util/clock.h"
#include "util/json_string.h"

namespace crank::mcp {

Error agentStatesFull(const StateOwner& owner, std::int64_t limit) {
    return Error{ErrorCode::unavailable,
                 fmt::format("agent {} has opened {} request states that have not expired yet, "
                             "its limit (mcp.max_request_states_per_agent); call again without a "
                             "requestState, or retry when older ones expire",
                             jsonString(owner.agent), limit)};
}

Error workspaceStatesFull(const StateOwner& owner, std::int64_t limit) {
    return Error{ErrorCode::unavailable,
                 fmt::format("workspace {} has opened {} request states that have not expired "
                             "yet, its limit (mcp.max_request_states_per_workspace); retry when "
                             "older ones expire",
                             jsonString(owner.workspace), limit)};
}

void MemoryUsedStates::forget(std::map<std::string, Entry, std::less<>>::iterator it) {
    const auto agent = held_by_agent_.find({it->second.workspace, it->second.agent});
    if (agent != held_by_agent_.end() && --agent->second <= 0) {
        held_by_agent_.erase(agent);
    }
    const auto workspace = held_by_workspace_.find(it->second.workspace);
    if (workspace != held_by_workspace_.end() && --workspace->second <= 0) {
        held_by_workspace_.erase(workspace);
    }
    ids_.erase(it);
}

Result<bool> MemoryUsedStates::consume(std::string_view id, const StateOwner& owner,
                                       std::int64_t expires_at_ms) {
    const std::int64_t now = nowUnixMs();
    const std::lock_guard lock(mutex_);
    while (!by_expiry_.empty() && by_expiry_.begin()->first <= now) {
        if (const auto it = ids_.find(by_expiry_.begin()->second); it != ids_.end()) {
            forget(it);
        }
        by_expiry_.erase(by_expiry_.begin());
    }
    if (ids_.find(id) != ids_.end()) {
        return false;
    }
    std::pair<std::string, std::string> agent{std::string(owner.workspace),
                                              std::string(owner.agent)};
    if (shares_.per_agent >= 0) {
        const auto held = held_by_agent_.find(agent);
        if (held != held_by_agent_.end() && held->second >= shares_.per_agent) {
            return agentStatesFull(owner, shares_.per_agent);
        }
    }
    if (shares_.per_workspace >= 0) {
        const auto held = held_by_workspace_.find(agent.first);
        if (held != held_by_workspace_.end() && held->second >= shares_.per_workspace) {
            return workspaceStatesFull(owner, shares_.per_workspace);
        }
    }
    if (ids_.size() >= max_ids_) {
        return Error{ErrorCode::unavailable,
                     "too many request states in use at once on this node; try again later"};
    }
    ++held_by_workspace_[agent.first];
    ++held_by_agent_[agent];
    ids_.emplace(std::string(id), Entry{expires_at_ms, agent.first, agent.second});
    by_expiry_.emplace(expires_at_ms, std::string(id));
    return true;
}

namespace {

/// Agents whose pace is kept apart; beyond them (agents are configured, so never in practice)
/// the others share one.
constexpr std::size_t kMaxPacedAgents = 65'536;

}  // namespace

PacedUsedStates::PacedUsedStates(std::shared_ptr<UsedStates> inner, std::int64_t per_minute)
    : inner_(std::move(inner)),
      per_minute_(per_minute < 1 ? 1 : per_minute),
      pace_(static_cast<std::size_t>(per_minute_), std::chrono::minutes(1), kMaxPacedAgents) {}

Result<bool> PacedUsedStates::consume(std::string_view id, const StateOwner& owner,
                                      std::int64_t expires_at_ms) {
    std::string agent(owner.workspace);
    agent.append(1, '\0').append(owner.agent);
    std::uint64_t refused_before = 0;
    if (!pace_.admit(agent, refused_before)) {
        return Error{ErrorCode::unavailable,
                     fmt::format("agent {} opened request states faster than its limit "
                                 "(mcp.max_input_rounds_per_minute: {}); retry within a minute",
                                 jsonString(owner.agent), per_minute_)};
    }
    return inner_->consume(id, owner, expires_at_ms);
}

}  // namespace crank::mcp
