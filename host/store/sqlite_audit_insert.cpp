#include "store/sqlite_audit_insert.h"

#include <array>
#include <cstddef>
#include <memory>
#include <string>

#include <Poco/Data/SQLite/Utility.h>

#include <sqlite3.h>

namespace crank::store::sqlite {
namespace {

constexpr std::string_view kInsert =
    "INSERT INTO audit_events (ts, workspace_id, agent_id, operation_id, action, outcome,"
    " detail_json) VALUES (?, ?, ?, ?, ?, ?, ?)";

struct Finalize {
    void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
};

/// Binds `text` as parameter `index`; SQLITE_STATIC: the event outlives the step.
int bindText(sqlite3_stmt* statement, int index, const std::string& text) {
    return sqlite3_bind_text(statement, index, text.data(), static_cast<int>(text.size()),
                             SQLITE_STATIC);
}

}  // namespace

void insertAuditEvents(Poco::Data::Session& session, std::vector<AuditEvent>& events) {
    namespace sq = Poco::Data::SQLite;
    sqlite3* db = sq::Utility::dbHandle(session);
    sqlite3_stmt* raw = nullptr;
    if (const int rc =
            sqlite3_prepare_v2(db, kInsert.data(), static_cast<int>(kInsert.size()), &raw, nullptr);
        rc != SQLITE_OK) {
        sq::Utility::throwException(db, rc);
    }
    const std::unique_ptr<sqlite3_stmt, Finalize> statement(raw);
    for (AuditEvent& e : events) {
        int rc = sqlite3_bind_int64(raw, 1, e.ts);
        const std::array<const std::string*, 6> texts = {
            &e.workspace_id, &e.agent_id, &e.operation_id, &e.action, &e.outcome, &e.detail_json};
        for (std::size_t i = 0; i < texts.size() && rc == SQLITE_OK; ++i) {
            rc = bindText(raw, static_cast<int>(i) + 2, *texts[i]);
        }
        if (rc == SQLITE_OK) {
            rc = sqlite3_step(raw);
        }
        if (rc != SQLITE_DONE) {
            // The step's own error code and message (sqlite3_reset() would repeat them).
            sq::Utility::throwException(db, rc == SQLITE_ROW ? SQLITE_MISUSE : rc);
        }
        e.id = sqlite3_last_insert_rowid(db);
        sqlite3_reset(raw);
    }
}

}  // namespace crank::store::sqlite
