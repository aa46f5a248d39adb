#pragma once

// Request rates: token buckets for the tools/call of an agent, of a workspace and of one tool
// (`limits.rate` of agents and workspaces, `rate` of an operation), beside the concurrency
// bounds (caller_quotas.h, upstream_slots.h). A bucket holds `burst` calls and refills at
// `calls_per_second`. A call takes one call from every bucket that applies to it, or from none:
// the first empty one refuses it, at once, in words that name the limit and say when a call
// will be let through again. Like every bound here it is per node: on N nodes behind a balancer
// each lets its own share through (docs/configuration.md).
//
// Memory: one bucket per workspace and per agent the config names, and one per (workspace,
// tool) with a rate that was called. Tools come and go (operations, an upstream's lists), so
// once there are more than kMaxIdleBuckets buckets, the refilled ones (they hold nothing a new
// bucket would not) are dropped, and again each time the table has doubled since; and never
// more than kMaxBuckets are kept: beyond, the least recently used go, down to three quarters of
// it (such a key starts full again: a burst more at worst).
//
// THREADING: every function may be called from any thread.

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"
#include "config/rate_limit.h"

namespace crank::mcp {

struct Caller;

class RateLimits {
public:
    using Clock = std::chrono::steady_clock;
    using Now = std::function<Clock::time_point()>;

    /// Beyond this many buckets, the full ones are dropped (they are made again as full).
    static constexpr std::size_t kMaxIdleBuckets = 4096;
    /// Never more buckets than this.
    static constexpr std::size_t kMaxBuckets = 65536;

    /// The rates of `auth`'s workspaces and agents. `now`: the clock (tests give their own).
    explicit RateLimits(const config::AuthConfig& auth, Now now = Clock::now);

    /// A reload's rates of the workspaces and agents: buckets kept, refilled at the new rates.
    void setRates(const config::AuthConfig& auth);

    /// One call of `caller` on `tool` (whose own rate is `tool_rate`), taken from the buckets of
    /// the workspace, the agent and the tool; nullopt when it may run. Otherwise nothing is taken
    /// and the answer is the refusal, for the model to read: the limit and when to retry.
    std::optional<std::string> take(const Caller& caller, std::string_view tool,
                                    const std::optional<config::RateLimit>& tool_rate);

    /// Buckets held now (tests).
    std::size_t buckets() const;

private:
    struct Bucket {
        double tokens = 0;
        Clock::time_point at;  ///< when `tokens` was counted
    };
    struct Applied {
        std::string key;
        config::RateLimit rate;
        std::string what;  ///< the limit as the refusal names it
    };

    Bucket& bucket(const std::string& key, const config::RateLimit& rate, Clock::time_point now);
    static double refilled(const Bucket& b, const config::RateLimit& rate, Clock::time_point now);
    /// Makes room before `adding` new buckets are made (never while buckets are held).
    void prune(std::size_t adding, Clock::time_point now);

    using Rates = std::map<std::string, config::RateLimit, std::less<>>;
    Now now_;
    mutable std::mutex rates_mutex_;  ///< a leaf lock: the two maps below
    Rates workspace_rates_;
    Rates agent_rates_;  ///< "workspace/agent"
    mutable std::mutex mutex_;
    std::map<std::string, Bucket, std::less<>> buckets_;
    std::map<std::string, config::RateLimit, std::less<>> bucket_rates_;  ///< for prune()
    std::size_t prune_at_ = kMaxIdleBuckets;  ///< the size at which prune() next looks
};

}  // namespace crank::mcp
