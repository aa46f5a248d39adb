#include "mcp/used_states.h"

#include "util/clock.h"

namespace crank::mcp {

Result<bool> MemoryUsedStates::consume(std::string_view id, std::int64_t expires_at_ms) {
    const std::int64_t now = nowUnixMs();
    const std::lock_guard lock(mutex_);
    while (!by_expiry_.empty() && by_expiry_.begin()->first <= now) {
        ids_.erase(by_expiry_.begin()->second);
        by_expiry_.erase(by_expiry_.begin());
    }
    if (ids_.find(id) != ids_.end()) {
        return false;
    }
    if (ids_.size() >= max_ids_) {
        return Error{ErrorCode::unavailable,
                     "too many request states in use at once on this node; try again later"};
    }
    ids_.emplace(std::string(id), expires_at_ms);
    by_expiry_.emplace(expires_at_ms, std::string(id));
    return true;
}

}  // namespace crank::mcp
