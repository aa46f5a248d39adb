#pragma once

// Internal to the SQLite implementation: the state behind SqliteStore (its path and connection
// pool) and the two ways a call uses a connection, read() and write(). Shared by the files that
// implement SqliteStore's methods (sqlite_store.cpp, sqlite_audit_retention.cpp), so that each
// concept keeps a file of its own.

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <Poco/Data/Session.h>
#include <Poco/Exception.h>

#include "log/log.h"
#include "store/sqlite_connection_pool.h"
#include "store/sqlite_sql.h"
#include "store/sqlite_statement_cache.h"
#include "store/sqlite_store.h"
#include "util/error.h"

namespace crank::store {

struct SqliteStore::Impl {
    Impl(std::string database_path, std::vector<std::unique_ptr<Poco::Data::Session>> sessions,
         std::chrono::milliseconds busy_timeout)
        : path(std::move(database_path)), pool(std::move(sessions), busy_timeout) {}

    /// Runs `body(session)` on a pooled connection, in autocommit mode (each statement sees the
    /// last committed state). Turns exceptions into Errors that start with `context`.
    template <typename Body>
    auto read(std::string_view context, Body&& body)
        -> decltype(body(std::declval<Poco::Data::Session&>())) {
        auto lease = pool.acquire();
        if (!lease) {
            return lease.error();
        }
        try {
            return body(lease->session());
        } catch (const Poco::Exception& e) {
            return sqlite::errorFromPoco(e, context);
        } catch (const std::exception& e) {
            return Error{ErrorCode::internal, std::string(context) + ": " + e.what()};
        }
    }

    /// Runs `body(session)` in a BEGIN IMMEDIATE transaction: committed when it returns a value,
    /// rolled back when it returns an Error or throws. The three statements come from `statements`.
    template <typename Body>
    auto write(std::string_view context, Body&& body)
        -> decltype(body(std::declval<Poco::Data::Session&>())) {
        auto lease = pool.acquire();
        if (!lease) {
            return lease.error();
        }
        Poco::Data::Session& session = lease->session();
        try {
            sqlite::runCached(statements, session, "BEGIN IMMEDIATE");
        } catch (const Poco::Exception& e) {
            return sqlite::errorFromPoco(e, context);
        }
        try {
            auto result = body(session);
            if (!result.ok()) {
                // Keep the body's error even if the rollback fails too.
                rollbackQuietly(session);
                return result;
            }
            sqlite::runCached(statements, session, "COMMIT");
            return result;
        } catch (const Poco::Exception& e) {
            rollbackQuietly(session);
            return sqlite::errorFromPoco(e, context);
        } catch (const std::exception& e) {
            rollbackQuietly(session);
            return Error{ErrorCode::internal, std::string(context) + ": " + e.what()};
        }
    }

    void rollbackQuietly(Poco::Data::Session& session) {
        try {
            sqlite::runCached(statements, session, "ROLLBACK");
        } catch (const Poco::Exception& e) {
            // The pool retries when the connection is handed back.
            log::warn("store: rollback failed: {}", e.displayText());
        }
    }

    std::string path;
    sqlite::SqliteConnectionPool pool;
    /// The transaction bracket and the audit INSERT, prepared once per connection; declared after
    /// `pool`, so its statements are finalized before the connections close.
    sqlite::StatementCache statements;
};

namespace sqlite {

/// A list or cleanup limit: invalid_argument below 1 (the message names `field`), else at most
/// `max`.
inline Result<int> clampLimit(int limit, int max, std::string_view field) {
    if (limit < 1) {
        return Error{ErrorCode::invalid_argument,
                     std::string(field) + ": must be at least 1, got " + std::to_string(limit)};
    }
    return std::min(limit, max);
}

}  // namespace sqlite
}  // namespace crank::store
