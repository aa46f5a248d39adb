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
    setRates(auth);
}

void RateLimits::setRates(const config::AuthConfig& auth) {
    Rates workspaces;
    Rates agents;
    for (const config::Workspace& workspace : auth.workspaces) {
        if (workspace.limits.rate) {
            workspaces.emplace(workspace.id, *workspace.limits.rate);
        }
    }
    for (const config::Agent& agent : auth.agents) {
        if (agent.limits.rate) {
            agents.emplace(agent.workspace + "/" + agent.id, *agent.limits.rate);
        }
    }
    const std::lock_guard lock(rates_mutex_);
    workspace_rates_.swap(workspaces);
    agent_rates_.swap(agents);
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
        it = buckets_.emplace(key, Bucket{static_cast<double>(rate.burst), now}).first;
        bucket_rates_[key] = rate;
    } else if (const auto known = bucket_rates_.find(key);
               known->second.calls_per_second != rate.calls_per_second ||
               known->second.burst != rate.burst) {
        known->second = rate;  // a rate changed by a reload applies from now on
    }
    Bucket& b = it->second;
    if (now > b.at) {  // never back: the time since `at` would be counted twice
        b.tokens = refilled(b, rate, now);
        b.at = now;
    }
    return b;
}

void RateLimits::prune(std::size_t adding, Clock::time_point now) {
    if (buckets_.size() + adding < prune_at_) {
        return;
    }
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
    if (buckets_.size() + adding > kMaxBuckets) {
        // Still too many in use: the least recently used go, a quarter of the bound at once (so
        // that the next evictions are as many new buckets away).
        std::vector<std::pair<Clock::time_point, std::string>> byUse;
        byUse.reserve(buckets_.size());
        for (const auto& [key, b] : buckets_) {
            byUse.emplace_back(b.at, key);
        }
        const std::size_t drop = buckets_.size() + adding - kMaxBuckets * 3 / 4;
        std::nth_element(byUse.begin(), byUse.begin() + static_cast<std::ptrdiff_t>(drop),
                         byUse.end());
        for (std::size_t i = 0; i < drop; ++i) {
            buckets_.erase(byUse[i].second);
            bucket_rates_.erase(byUse[i].second);
        }
    }
    // Looked at again once the table has doubled (or reaches the bound): a scan is paid for by
    // as many new buckets as it looked at.
    prune_at_ = std::min(kMaxBuckets + 1, std::max(kMaxIdleBuckets, buckets_.size() * 2));
}

std::optional<std::string> RateLimits::take(const Caller& caller, std::string_view tool,
                                            const std::optional<config::RateLimit>& tool_rate) {
    std::vector<Applied> applied;
    {
        const std::lock_guard rates(rates_mutex_);
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
    }
    if (tool_rate) {
        applied.push_back({"t:" + caller.workspace + "/" + std::string(tool), *tool_rate,
                           "tool " + std::string(tool) + "'s rate limit"});
    }
    if (applied.empty()) {
        return std::nullopt;
    }
    const std::lock_guard lock(mutex_);
    // Read under the lock: a bucket's time only moves forward (refilled() and bucket()).
    const Clock::time_point now = now_();
    std::size_t adding = 0;
    for (const Applied& a : applied) {
        adding += buckets_.count(a.key) == 0 ? 1 : 0;
    }
    if (adding > 0) {
        prune(adding, now);  // before any bucket is held: nothing below is dropped
    }
    std::vector<Bucket*> taken;
    taken.reserve(applied.size());
    const Applied* empty = nullptr;
    double wait_ms = 0;
    for (const Applied& a : applied) {
        Bucket& b = bucket(a.key, a.rate, now);
        if (b.tokens < 1.0) {
            // The longest wait of the empty buckets: retrying sooner would be refused again.
            const double wait = std::ceil((1.0 - b.tokens) / a.rate.calls_per_second * 1000.0);
            if (empty == nullptr || wait > wait_ms) {
                empty = &a;
                wait_ms = wait;
            }
        }
        taken.push_back(&b);
    }
    if (empty != nullptr) {
        return fmt::format("refused: {} ({}) is reached; retry in {} ms", empty->what,
                           rateText(empty->rate), static_cast<std::int64_t>(wait_ms));
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
