#include "runtime/store_used_states.h"

#include <string>
#include <utility>

#include "log/log.h"
#include "util/clock.h"

namespace crank::runtime {

namespace {

/// Batches one cleanup deletes at most: a backlog is worked off over several intervals, and no
/// consume() waits long behind one.
constexpr int kCleanupBatches = 8;

}  // namespace

StoreUsedStates::StoreUsedStates(std::shared_ptr<store::Store> store, store::UsedStateLimits limits,
                                 std::chrono::milliseconds cleanup_every)
    : store_(std::move(store)), limits_(limits), cleanup_every_(cleanup_every) {}

Result<bool> StoreUsedStates::consume(std::string_view id, const mcp::StateOwner& owner,
                                      std::int64_t expires_at_ms) {
    const std::int64_t now = nowUnixMs();
    cleanup(now);
    store::UsedStateRecord record;
    record.id = std::string(id);
    record.workspace = std::string(owner.workspace);
    record.agent = std::string(owner.agent);
    record.expires_at = expires_at_ms;
    const Result<store::UsedStateOutcome> outcome = store_->recordUsedState(record, now, limits_);
    if (!outcome) {
        // The register cannot tell whether the state was opened before: refused, since a replay
        // is worse than a re-prompt.
        return Error{ErrorCode::unavailable,
                     "the register of used request states cannot be read now (" +
                         outcome.error().message + "); try again later"};
    }
    switch (*outcome) {
        case store::UsedStateOutcome::recorded:
            return true;
        case store::UsedStateOutcome::used_before:
            return false;
        case store::UsedStateOutcome::agent_full:
            return mcp::agentStatesFull(owner, limits_.per_agent);
        case store::UsedStateOutcome::workspace_full:
            return mcp::workspaceStatesFull(owner, limits_.per_workspace);
    }
    return Error{ErrorCode::internal, "used request states: unknown outcome"};
}

void StoreUsedStates::cleanup(std::int64_t now_ms) {
    std::int64_t due = next_cleanup_ms_.load();
    if (now_ms < due ||
        !next_cleanup_ms_.compare_exchange_strong(due, now_ms + cleanup_every_.count())) {
        return;  // not due, or another thread took this round
    }
    for (int i = 0; i < kCleanupBatches; ++i) {
        const Result<std::int64_t> deleted =
            store_->deleteExpiredUsedStates(now_ms, store::kMaxCleanupBatch);
        if (!deleted) {
            log::warn("used request states: cleanup failed: {}", deleted.error().message);
            return;
        }
        if (*deleted < store::kMaxCleanupBatch) {
            return;
        }
    }
}

}  // namespace crank::runtime
