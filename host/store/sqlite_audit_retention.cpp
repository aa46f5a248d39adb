// Retention of the audit log in SQLite (Store::deleteAuditBefore, Store::deleteAuditBeyond).
// Plain SQL that PostgreSQL runs unchanged: `DELETE ... WHERE id IN (SELECT id ... ORDER BY ts,
// id LIMIT ?)` removes the oldest events first, through the audit_events_ts (ts, id) index, in
// batches short enough that a backlog never holds the write lock for long.

#include <algorithm>
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

constexpr const char* kDeleteOldest =
    "DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events ORDER BY ts, id LIMIT ?)";

}  // namespace

Result<std::int64_t> SqliteStore::deleteAuditBefore(std::int64_t before_ts, int limit) {
    auto batch = clampLimit(limit, kMaxCleanupBatch, "audit cleanup limit");
    if (!batch) {
        return batch.error();
    }
    return impl_->write("store: cannot delete old audit events",
                        [&](Session& s) -> Result<std::int64_t> {
                            return static_cast<std::int64_t>(
                                execute(s,
                                        "DELETE FROM audit_events WHERE id IN (SELECT id FROM "
                                        "audit_events WHERE ts < ? ORDER BY ts, id LIMIT ?)",
                                        {before_ts, std::int64_t{*batch}}));
                        });
}

Result<std::int64_t> SqliteStore::deleteAuditBeyond(std::int64_t keep, int limit) {
    auto batch = clampLimit(limit, kMaxCleanupBatch, "audit cleanup limit");
    if (!batch) {
        return batch.error();
    }
    if (keep < 0) {
        return Error{ErrorCode::invalid_argument,
                     "audit cleanup: keep must be at least 0, got " + std::to_string(keep)};
    }
    return impl_->write(
        "store: cannot delete audit events beyond the size bound",
        [&](Session& s) -> Result<std::int64_t> {
            // Counted and deleted in one write transaction: no append slips in between, so the
            // newest `keep` events are exactly the ones that stay.
            const std::int64_t count = queryInt(s, "SELECT count(*) FROM audit_events").value_or(0);
            const std::int64_t excess = std::min<std::int64_t>(count - keep, *batch);
            if (excess <= 0) {
                return std::int64_t{0};
            }
            return static_cast<std::int64_t>(execute(s, kDeleteOldest, {excess}));
        });
}

}  // namespace crank::store
