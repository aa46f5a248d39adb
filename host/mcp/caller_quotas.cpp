#include "mcp/caller_quotas.h"

#include <algorithm>

#include <fmt/core.h>

namespace crank::mcp {
namespace {

std::string_view nameOf(CallerQuotas::Kind kind) {
    switch (kind) {
        case CallerQuotas::Kind::call:
            return "calls running";
        case CallerQuotas::Kind::session:
            return "MCP sessions open";
        case CallerQuotas::Kind::stream:
            return "SSE streams open";
    }
    return "";
}

std::string_view keyOf(CallerQuotas::Kind kind) {
    switch (kind) {
        case CallerQuotas::Kind::call:
            return "max_concurrent_calls";
        case CallerQuotas::Kind::session:
            return "max_mcp_sessions";
        case CallerQuotas::Kind::stream:
            return "max_streams";
    }
    return "";
}

std::string_view adviceOf(CallerQuotas::Kind kind) {
    switch (kind) {
        case CallerQuotas::Kind::call:
            return "retry when one ends";
        case CallerQuotas::Kind::session:
            return "end one (DELETE) or wait for an idle one to expire";
        case CallerQuotas::Kind::stream:
            return "close one first";
    }
    return "";
}

}  // namespace

CallerQuotas::CallerQuotas(std::map<std::string, Bounds> workspaces,
                           std::map<std::string, Bounds> agents, Bounds node,
                           std::map<std::string, std::int64_t> reserved_calls)
    : workspace_bounds_(std::move(workspaces)),
      agent_bounds_(std::move(agents)),
      node_bounds_(node),
      reserved_calls_(std::move(reserved_calls)) {}

void CallerQuotas::setBounds(std::map<std::string, Bounds> workspaces,
                             std::map<std::string, Bounds> agents,
                             std::map<std::string, std::int64_t> reserved_calls) {
    const std::lock_guard lock(mutex_);
    workspace_bounds_.swap(workspaces);
    agent_bounds_.swap(agents);
    reserved_calls_.swap(reserved_calls);
}

std::int64_t CallerQuotas::reservedByOthers(const std::string& workspace) const {
    std::int64_t kept = 0;
    for (const auto& [id, reserved] : reserved_calls_) {
        if (id == workspace || reserved <= 0) {
            continue;
        }
        const auto held = by_workspace_.find(id);
        const std::int64_t used = held == by_workspace_.end() ? 0 : held->second.calls;
        kept += std::max<std::int64_t>(0, reserved - used);
    }
    return kept;
}

std::int64_t& CallerQuotas::of(Held& held, Kind kind) {
    switch (kind) {
        case Kind::call:
            return held.calls;
        case Kind::session:
            return held.sessions;
        case Kind::stream:
            return held.streams;
    }
    return held.calls;
}

std::int64_t CallerQuotas::of(const Bounds& bounds, Kind kind) {
    switch (kind) {
        case Kind::call:
            return bounds.calls;
        case Kind::session:
            return bounds.sessions;
        case Kind::stream:
            return bounds.streams;
    }
    return -1;
}

std::string CallerQuotas::acquire(Kind kind, const std::string& agent,
                                  const std::string& workspace) {
    const std::lock_guard lock(mutex_);
    if (const auto bound = agent_bounds_.find(agent);
        !agent.empty() && bound != agent_bounds_.end() && of(bound->second, kind) >= 0) {
        const auto held = by_agent_.find(agent);
        const std::int64_t now = held == by_agent_.end() ? 0 : of(held->second, kind);
        if (now >= of(bound->second, kind)) {
            return fmt::format(
                "agent \"{}\" already has {} {}, its limit "
                "(auth.agents[].limits.{}); {}",
                agent, of(bound->second, kind), nameOf(kind), keyOf(kind), adviceOf(kind));
        }
    }
    if (const auto bound = workspace_bounds_.find(workspace);
        bound != workspace_bounds_.end() && of(bound->second, kind) >= 0) {
        const auto held = by_workspace_.find(workspace);
        const std::int64_t now = held == by_workspace_.end() ? 0 : of(held->second, kind);
        if (now >= of(bound->second, kind)) {
            return fmt::format(
                "workspace \"{}\" already has {} {}, its limit "
                "(auth.workspaces[].limits.{}); {}",
                workspace, of(bound->second, kind), nameOf(kind), keyOf(kind), adviceOf(kind));
        }
    }
    if (const std::int64_t bound = of(node_bounds_, kind); bound >= 0 && of(node_, kind) >= bound) {
        if (kind == Kind::call) {
            return fmt::format(
                "crankd already has {} calls running, its limit (server.max_concurrent_calls: "
                "each call holds a worker thread); retry when one ends",
                bound);
        }
        return fmt::format("crankd already has {} {}, its limit; {}", bound, nameOf(kind),
                           adviceOf(kind));
    }
    if (const std::int64_t bound = of(node_bounds_, kind); kind == Kind::call && bound >= 0) {
        if (const std::int64_t kept = reservedByOthers(workspace); node_.calls + kept >= bound) {
            return fmt::format(
                "the {} call slots crankd has free are reserved for other workspaces "
                "(auth.workspaces[].limits.reserved_calls); retry when one of this "
                "workspace's calls ends",
                bound - node_.calls);
        }
    }
    ++of(by_agent_[agent], kind);
    ++of(by_workspace_[workspace], kind);
    ++of(node_, kind);
    return {};
}

void CallerQuotas::release(Kind kind, const std::string& agent, const std::string& workspace) {
    const std::lock_guard lock(mutex_);
    --of(node_, kind);
    const auto drop = [kind](std::map<std::string, Held>& map, const std::string& key) {
        const auto it = map.find(key);
        if (it == map.end()) {
            return;
        }
        --of(it->second, kind);
        if (it->second.calls <= 0 && it->second.sessions <= 0 && it->second.streams <= 0) {
            map.erase(it);
        }
    };
    drop(by_agent_, agent);
    drop(by_workspace_, workspace);
}

std::int64_t CallerQuotas::heldByAgent(Kind kind, const std::string& agent) const {
    const std::lock_guard lock(mutex_);
    const auto it = by_agent_.find(agent);
    if (it == by_agent_.end()) {
        return 0;
    }
    Held copy = it->second;
    return of(copy, kind);
}

CallerQuotas::Hold::Hold(std::shared_ptr<CallerQuotas> quotas, Kind kind, std::string agent,
                         std::string workspace)
    : quotas_(std::move(quotas)),
      kind_(kind),
      agent_(std::move(agent)),
      workspace_(std::move(workspace)) {}

CallerQuotas::Hold::~Hold() {
    quotas_->release(kind_, agent_, workspace_);
}

std::unique_ptr<CallerQuotas::Hold> CallerQuotas::hold(const std::shared_ptr<CallerQuotas>& quotas,
                                                       Kind kind, const std::string& agent,
                                                       const std::string& workspace,
                                                       std::string& refusal) {
    refusal = quotas->acquire(kind, agent, workspace);
    if (!refusal.empty()) {
        return nullptr;
    }
    return std::make_unique<Hold>(quotas, kind, agent, workspace);
}

}  // namespace crank::mcp
