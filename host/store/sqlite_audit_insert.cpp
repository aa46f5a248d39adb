#include "store/sqlite_audit_insert.h"

#include <array>
#include <cstddef>
#include <string>

#include <Poco/Data/SQLite/Utility.h>

#include <sqlite3.h>

namespace crank::store::sqlite {
namespace {

constexpr std::string_view kInsert =
    "INSERT INTO audit_events (ts, workspace_id, agent_id, operation_id, action, outcome,"
    " detail_json) VALUES (?, ?, ?, ?, ?, ?, ?)";

/// Binds `text` as parameter `index`; SQLITE_STATIC: the event outlives the step.
int bindText(sqlite3_stmt* statement, int index, const std::string& text) {
    return sqlite3_bind_text(statement, index, text.data(), static_cast<int>(text.size()),
                             SQLITE_STATIC);
}

/// Leaves the cached statement as the cache wants it, however the batch ends: reset, and no
/// longer pointing at the batch's strings.
class ClearBindings {
public:
    explicit ClearBindings(sqlite3_stmt* statement) : statement_(statement) {}
    ClearBindings(const ClearBindings&) = delete;
    ClearBindings& operator=(const ClearBindings&) = delete;
    ~ClearBindings() {
        sqlite3_reset(statement_);
        sqlite3_clear_bindings(statement_);
    }

private:
    sqlite3_stmt* statement_;
};

}  // namespace

void insertAuditEvents(Poco::Data::Session& session, StatementCache& cache,
                       std::vector<AuditEvent>& events) {
    sqlite3* db = handleOf(session);
    sqlite3_stmt* statement = cache.get(db, kInsert);
    const ClearBindings clear(statement);
    for (AuditEvent& e : events) {
        int rc = sqlite3_bind_int64(statement, 1, e.ts);
        const std::array<const std::string*, 6> texts = {
            &e.workspace_id, &e.agent_id, &e.operation_id, &e.action, &e.outcome, &e.detail_json};
        for (std::size_t i = 0; i < texts.size() && rc == SQLITE_OK; ++i) {
            rc = bindText(statement, static_cast<int>(i) + 2, *texts[i]);
        }
        if (rc != SQLITE_OK) {
            Poco::Data::SQLite::Utility::throwException(db, rc);
        }
        stepToDone(db, statement);
        e.id = sqlite3_last_insert_rowid(db);
    }
}

}  // namespace crank::store::sqlite
