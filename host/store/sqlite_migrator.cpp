#include "store/sqlite_migrator.h"

#include <string>

#include <Poco/Data/Session.h>
#include <Poco/Exception.h>

#include "log/log.h"
#include "store/sqlite_sql.h"
#include "util/clock.h"

namespace crank::store::sqlite {

namespace {

using Poco::Data::Keywords::now;

void rollbackQuietly(Poco::Data::Session& session) {
    try {
        session << "ROLLBACK", now;
    } catch (const Poco::Exception&) {  // NOLINT(bugprone-empty-catch): the error is reported
    }
}

std::string inQuotes(std::string_view path) {
    return "'" + std::string(path) + "'";
}

Result<void> checkList(const std::vector<SqliteMigration>& migrations) {
    for (std::size_t i = 0; i < migrations.size(); ++i) {
        if (migrations[i].version != static_cast<int>(i) + 1) {
            return Error{ErrorCode::internal, "store: SQLite migration list is malformed: entry " +
                                                  std::to_string(i) + " has version " +
                                                  std::to_string(migrations[i].version) +
                                                  ", expected " + std::to_string(i + 1)};
        }
        if (migrations[i].statements.empty()) {
            return Error{ErrorCode::internal, "store: SQLite migration " +
                                                  std::to_string(migrations[i].version) +
                                                  " has no statements"};
        }
    }
    return {};
}

}  // namespace

std::int64_t currentSchemaVersion(Poco::Data::Session& session) {
    const auto exists =
        queryInt(session, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
                 {std::string("schema_migrations")});
    if (exists.value_or(0) == 0) {
        return 0;
    }
    return queryInt(session, "SELECT max(version) FROM schema_migrations").value_or(0);
}

Result<std::int64_t> applyMigrations(Poco::Data::Session& session, std::string_view path,
                                     const std::vector<SqliteMigration>& migrations) {
    if (auto listed = checkList(migrations); !listed) {
        return listed.error();
    }
    const std::int64_t latest = migrations.empty() ? 0 : migrations.back().version;
    std::int64_t current = 0;
    try {
        execute(session,
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version INTEGER PRIMARY KEY,"
                " description TEXT NOT NULL,"
                " applied_at INTEGER NOT NULL)");
        current = currentSchemaVersion(session);
    } catch (const Poco::Exception& e) {
        return errorFromPoco(e, "store: cannot read the schema version of " + inQuotes(path));
    }
    if (current > latest) {
        return Error{
            ErrorCode::conflict,
            "store: database " + inQuotes(path) + " has schema version " + std::to_string(current) +
                ", but this build of Crank knows versions up to " + std::to_string(latest) +
                "; refusing to open it (run a newer Crank, or point store.path at another "
                "file)"};
    }
    for (const SqliteMigration& migration : migrations) {
        if (migration.version <= current) {
            continue;
        }
        const std::string name =
            "migration " + std::to_string(migration.version) + " (" + migration.description + ")";
        try {
            session << "BEGIN IMMEDIATE", now;
        } catch (const Poco::Exception& e) {
            return errorFromPoco(e, "store: cannot start " + name + " on " + inQuotes(path));
        }
        try {
            // Another process may have applied it while we waited for the write lock.
            if (currentSchemaVersion(session) >= migration.version) {
                rollbackQuietly(session);
                current = migration.version;
                continue;
            }
            for (const std::string& statement : migration.statements) {
                execute(session, statement);
            }
            execute(session,
                    "INSERT INTO schema_migrations (version, description, applied_at)"
                    " VALUES (?, ?, ?)",
                    {std::int64_t{migration.version}, migration.description, nowUnixMs()});
            session << "COMMIT", now;
        } catch (const Poco::Exception& e) {
            rollbackQuietly(session);
            Error error =
                errorFromPoco(e, "store: " + name + " failed on " + inQuotes(path) +
                                     " and was rolled back; the schema stays at version " +
                                     std::to_string(current));
            if (error.code != ErrorCode::io && error.code != ErrorCode::unavailable) {
                error.code = ErrorCode::internal;
            }
            return error;
        }
        current = migration.version;
        log::info("store: applied SQLite {} to '{}'", name, path);
    }
    return current;
}

}  // namespace crank::store::sqlite
