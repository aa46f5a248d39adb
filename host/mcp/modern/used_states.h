#pragma once

// The register that makes a sealed requestState single-use: each state's id is recorded the first
// time it opens, until the state would have expired anyway. Each caller may hold only its share of
// the register, so that no agent can fill it for the others, and opens at most at its pace.
//   - runtime::StoreUsedStates: in the store, so every node of a deployment sees the others' ids
//     (what crankd uses).
//   - MemoryUsedStates: in this process's memory (a node on its own; the tests).
//   - PacedUsedStates: a bound on how fast one agent opens states, in front of either.
//
// THREADING: consume() may be called from any thread, concurrently.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "log/throttle.h"
#include "util/error.h"

namespace crank::mcp {

/// The caller a state was sealed for (and who opens it).
struct StateOwner {
    std::string_view workspace;
    std::string_view agent;
};

/// How many unexpired ids one caller may hold (a negative bound is no bound).
struct StateShares {
    std::int64_t per_agent = -1;      ///< mcp.max_request_states_per_agent
    std::int64_t per_workspace = -1;  ///< mcp.max_request_states_per_workspace
};

class UsedStates {
public:
    virtual ~UsedStates() = default;
    /// Records `id`, opened by `owner`, as used until `expires_at_ms` (Unix milliseconds): true
    /// the first time, false when it was recorded before. An error (ErrorCode::unavailable, in
    /// words that name the caller's own limit) when the owner holds its share already or the
    /// register cannot tell: the state is then refused, since a replay is worse than a re-prompt.
    virtual Result<bool> consume(std::string_view id, const StateOwner& owner,
                                 std::int64_t expires_at_ms) = 0;
};

/// The refusals of a caller past its share, the same from every register.
Error agentStatesFull(const StateOwner& owner, std::int64_t limit);
Error workspaceStatesFull(const StateOwner& owner, std::int64_t limit);

/// UsedStates in this process's memory: each caller's share, and at most `max_ids` ids in all
/// (a bound on memory: expired ids are dropped first; when every one is live a new id is refused
/// rather than an old one forgotten).
class MemoryUsedStates final : public UsedStates {
public:
    explicit MemoryUsedStates(std::size_t max_ids = 100'000, StateShares shares = {})
        : max_ids_(max_ids), shares_(shares) {}
    Result<bool> consume(std::string_view id, const StateOwner& owner,
                         std::int64_t expires_at_ms) override;

private:
    struct Entry {
        std::int64_t expires_at = 0;
        std::string workspace;
        std::string agent;
    };
    void forget(std::map<std::string, Entry, std::less<>>::iterator it);

    std::mutex mutex_;
    std::size_t max_ids_;
    StateShares shares_;
    std::map<std::string, Entry, std::less<>> ids_;
    std::multimap<std::int64_t, std::string> by_expiry_;
    std::map<std::pair<std::string, std::string>, std::int64_t> held_by_agent_;
    std::map<std::string, std::int64_t> held_by_workspace_;
};

/// At most `per_minute` states opened by one agent (of one workspace) in each minute on this
/// node (a log::KeyedThrottle per agent), before `inner` is asked: a caller looping "call, retry"
/// is slowed before it reaches the register. The pace is this node's own (a node on its own is
/// bounded exactly; n nodes allow n times it).
class PacedUsedStates final : public UsedStates {
public:
    PacedUsedStates(std::shared_ptr<UsedStates> inner, std::int64_t per_minute);
    Result<bool> consume(std::string_view id, const StateOwner& owner,
                         std::int64_t expires_at_ms) override;

private:
    std::shared_ptr<UsedStates> inner_;
    std::int64_t per_minute_;
    log::KeyedThrottle pace_;
};

}  // namespace crank::mcp
