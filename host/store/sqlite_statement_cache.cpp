#include "store/sqlite_statement_cache.h"

#include <Poco/Data/SQLite/Utility.h>

#include <sqlite3.h>

namespace crank::store::sqlite {

namespace sq = Poco::Data::SQLite;

StatementCache::~StatementCache() {
    for (auto& [db, statements] : statements_) {
        for (auto& [sql, statement] : statements) {
            sqlite3_finalize(statement);
        }
    }
}

sqlite3_stmt* StatementCache::get(sqlite3* db, std::string_view sql) {
    const std::lock_guard lock(mutex_);
    auto& statements = statements_[db];
    if (const auto it = statements.find(sql); it != statements.end()) {
        return it->second;
    }
    sqlite3_stmt* statement = nullptr;
    if (const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                          SQLITE_PREPARE_PERSISTENT, &statement, nullptr);
        rc != SQLITE_OK) {
        sqlite3_finalize(statement);
        sq::Utility::throwException(db, rc);
    }
    statements.emplace(std::string(sql), statement);
    return statement;
}

sqlite3* handleOf(Poco::Data::Session& session) {
    return sq::Utility::dbHandle(session);
}

void stepToDone(sqlite3* db, sqlite3_stmt* statement) {
    const int rc = sqlite3_step(statement);
    // Reset either way, so the statement holds no lock and is ready for its next use; on an error
    // sqlite3_reset() returns the same code again, which the step's own code already says.
    sqlite3_reset(statement);
    if (rc != SQLITE_DONE) {
        sq::Utility::throwException(db, rc == SQLITE_ROW ? SQLITE_MISUSE : rc);
    }
}

void runCached(StatementCache& cache, Poco::Data::Session& session, std::string_view sql) {
    sqlite3* db = handleOf(session);
    stepToDone(db, cache.get(db, sql));
}

}  // namespace crank::store::sqlite
