// The register of opened request states in SQLite (Store::recordUsedState,
// Store::deleteExpiredUsedStates). Plain SQL that PostgreSQL runs unchanged: the insert is
// `ON CONFLICT (id) DO NOTHING`, so of two nodes opening the same state at once exactly one
// records it, and the callers' shares are counted in the same write transaction.

#include <cstdint>
#include <string>

#include <Poco/Data/Session.h>

#include "store/sqlite_sql.h"
#include "store/sqlite_store.h"
#include "store/sqlite_store_impl.h"

namespace crank::store {

using Poco::Data::Session;
using sqlite::clampLimit;
using sqlite::execute;
using sqlite::queryInt;

namespace {

Result<void> checkRecord(const UsedStateRecord& record) {
    if (record.id.empty() || record.id.size() > kMaxShortTextBytes) {
        return Error{ErrorCode::invalid_argument,
                     "used state: id must be 1.." + std::to_string(kMaxShortTextBytes) + " bytes"};
    }
    if (record.workspace.empty() || record.workspace.size() > kMaxShortTextBytes ||
        record.agent.size() > kMaxShortTextBytes) {
        return Error{ErrorCode::invalid_argument,
                     "used state: workspace (required) and agent must be at most " +
                         std::to_string(kMaxShortTextBytes) + " bytes"};
    }
    return {};
}

}  // namespace

Result<UsedStateOutcome> SqliteStore::recordUsedState(const UsedStateRecord& record,
                                                      std::int64_t now_ms,
                                                      const UsedStateLimits& limits) {
    if (auto checked = checkRecord(record); !checked) {
        return checked.error();
    }
    return impl_->write(
        "store: cannot record a used request state", [&](Session& s) -> Result<UsedStateOutcome> {
            if (queryInt(s, "SELECT count(*) FROM used_request_states WHERE id = ?", {record.id})
                    .value_or(0) > 0) {
                return UsedStateOutcome::used_before;
            }
            if (limits.per_agent >= 0 &&
                queryInt(s,
                         "SELECT count(*) FROM used_request_states WHERE workspace_id = ? AND "
                         "agent_id = ? AND expires_at > ?",
                         {record.workspace, record.agent, now_ms})
                        .value_or(0) >= limits.per_agent) {
                return UsedStateOutcome::agent_full;
            }
            if (limits.per_workspace >= 0 &&
                queryInt(s,
                         "SELECT count(*) FROM used_request_states WHERE workspace_id = ? AND "
                         "expires_at > ?",
                         {record.workspace, now_ms})
                        .value_or(0) >= limits.per_workspace) {
                return UsedStateOutcome::workspace_full;
            }
            const std::size_t inserted =
                execute(s,
                        "INSERT INTO used_request_states (id, workspace_id, agent_id, expires_at) "
                        "VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                        {record.id, record.workspace, record.agent, record.expires_at});
            return inserted == 1 ? UsedStateOutcome::recorded : UsedStateOutcome::used_before;
        });
}

Result<std::int64_t> SqliteStore::deleteExpiredUsedStates(std::int64_t now_ms, int limit) {
    auto batch = clampLimit(limit, kMaxCleanupBatch, "used state cleanup limit");
    if (!batch) {
        return batch.error();
    }
    return impl_->write("store: cannot delete expired used request states",
                        [&](Session& s) -> Result<std::int64_t> {
                            return static_cast<std::int64_t>(execute(
                                s,
                                "DELETE FROM used_request_states WHERE id IN (SELECT id FROM "
                                "used_request_states WHERE expires_at <= ? ORDER BY expires_at "
                                "LIMIT ?)",
                                {now_ms, std::int64_t{*batch}}));
                        });
}

}  // namespace crank::store
