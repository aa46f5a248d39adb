#pragma once

// The register that makes a sealed requestState single-use: each state's id is recorded the first
// time it opens, until the state would have expired anyway. The store-backed register (every node
// of a deployment sees the others' ids) is crankd's; MemoryUsedStates serves a node on its own and
// the tests.
//
// THREADING: consume() may be called from any thread, concurrently.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "util/error.h"

namespace crank::mcp {

class UsedStates {
public:
    virtual ~UsedStates() = default;
    /// Records `id` as used until `expires_at_ms` (Unix milliseconds): true the first time, false
    /// when it was recorded before. An error when the register cannot tell (the state is then
    /// refused: a replay is worse than a re-prompt).
    virtual Result<bool> consume(std::string_view id, std::int64_t expires_at_ms) = 0;
};

/// UsedStates in this process's memory, at most `max_ids` ids at once: the expired ones are
/// dropped first, and when every one is live a new id is refused (ErrorCode::unavailable)
/// rather than an old one forgotten.
class MemoryUsedStates final : public UsedStates {
public:
    explicit MemoryUsedStates(std::size_t max_ids = 100'000) : max_ids_(max_ids) {}
    Result<bool> consume(std::string_view id, std::int64_t expires_at_ms) override;

private:
    std::mutex mutex_;
    std::size_t max_ids_;
    std::map<std::string, std::int64_t, std::less<>> ids_;  // id → expiry
    std::multimap<std::int64_t, std::string> by_expiry_;    // expiry → id
};

}  // namespace crank::mcp
