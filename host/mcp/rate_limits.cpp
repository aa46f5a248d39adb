#include "mcp/rate_limits.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "mcp/tool_registry.h"

namespace crank::mcp {

namespace {

std::string rateText(const config::RateLimit& rate) {
    return fmt::format("{:g} calls a second, {} at once", rate.calls_per_second, rate.burst);
}

}  // namespace

RateLimits::RateLimits(const config::AuthConfig& auth, Now now) : now_(std::move(now)) {
    for (const config::Workspace& workspace : auth.workspaces) {
        if (workspace.limits.rate) {
            workspace_rates_.emplace(workspace.id, *workspace.limits.rate);
        }
    }
    for (const config::Agent& agent : auth.agents) {
        if (agent.limits.rate) {
            agent_rates_.emplace(agent.workspace + "/" + agent.id, *agent.limits.rate);
        }
    }
}

double RateLimits::refilled(const Bucket& b, const config::RateLimit& rate, Clock::time_point now) {
    const double seconds =
        std::chrono::duration<double>(std::max(now - b.at, Clock::duration::zero())).count();
    return std::min(static_cast<double>(rate.burst), b.tokens + seconds * rate.calls_per_second);
}

RateLimits::Bucket& RateLimits::bucket(const std::string& key, const config::RateLimit& rate,
                                       Clock::time_point now) {
    auto it = buckets_.find(key);
    if (it == buckets_.end()) {
        if (buckets_.size() >= kMaxIdleBuckets) {
            dropFull(now);
        }
        it = buckets_.emplace(key, Bucket{static_cast<double>(rate.burst), now}).first;
    }
    bucket_rates_[key] = rate;  // a rate changed by a reload applies from now on
    Bucket& b = it->second;
    b.tokens = refilled(b, rate, now);
    b.at = now;
    return b;
}

void RateLimits::dropFull(Clock::time_point now) {
    for (auto it = buckets_.begin(); it != buckets_.end();) {
        const auto rate = bucket_rates_.find(it->first);
        if (rate == bucket_rates_.end() ||
            refilled(it->second, rate->second, now) >= static_cast<double>(rate->second.burst)) {
            bucket_rates_.erase(it->first);
            it = buckets_.erase(it);
        } else {
            ++it;
        }
    }
}

std::optional<std::string> RateLimits::take(const Caller& caller, std::string_view tool,
                                            const std::optional<config::RateLimit>& tool_rate) {
    std::vector<Applied> applied;
    if (const auto it = workspace_rates_.find(caller.workspace); it != workspace_rates_.end()) {
        applied.push_back({"w:" + caller.workspace, it->second,
                           "workspace " + caller.workspace + "'s rate limit"});
    }
    if (!caller.agent.empty()) {
        const std::string agent = caller.workspace + "/" + caller.agent;
        if (const auto it = agent_rates_.find(agent); it != agent_rates_.end()) {
            applied.push_back(
                {"a:" + agent, it->second, "agent " + caller.agent + "'s rate limit"});
        }
    }
    if (tool_rate) {
        applied.push_back({"t:" + caller.workspace + "/" + std::string(tool), *tool_rate,
                           "tool " + std::string(tool) + "'s rate limit"});
    }
    if (applied.empty()) {
        return std::nullopt;
    }
    const std::lock_guard lock(mutex_);
    const Clock::time_point now = now_();
    std::vector<Bucket*> taken;
    taken.reserve(applied.size());
    for (const Applied& a : applied) {
        Bucket& b = bucket(a.key, a.rate, now);
        if (b.tokens < 1.0) {
            const double wait_ms = std::ceil((1.0 - b.tokens) / a.rate.calls_per_second * 1000.0);
            return fmt::format("refused: {} ({}) is reached; retry in {} ms", a.what,
                               rateText(a.rate), static_cast<std::int64_t>(wait_ms));
        }
        taken.push_back(&b);
    }
    for (Bucket* b : taken) {
        b->tokens -= 1.0;
    }
    return std::nullopt;
}

std::size_t RateLimits::buckets() const {
    const std::lock_guard lock(mutex_);
    return buckets_.size();
}

}  // namespace crank::mcp
