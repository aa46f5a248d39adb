#pragma once

// Internal to the SQLite implementation: prepared statements kept per connection, for the
// statements the store runs on every write (the transaction bracket, the audit INSERT). Preparing
// one costs more than running it: about a tenth of an audit batch's CPU went to preparing its
// INSERT, and Poco::Data prepares BEGIN and COMMIT anew on every transaction.

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include <Poco/Data/Session.h>

struct sqlite3;
struct sqlite3_stmt;

namespace crank::store::sqlite {

/// THREADING: get() may be called from any thread; a statement it returns is used only by the
/// thread that holds its connection's lease (a connection is lent to one thread at a time).
/// OWNERSHIP: finalizes every statement when destroyed, which must happen before its connections
/// close.
class StatementCache {
public:
    StatementCache() = default;
    ~StatementCache();
    StatementCache(const StatementCache&) = delete;
    StatementCache& operator=(const StatementCache&) = delete;

    /// The statement for `sql` on `db`, prepared on first use (SQLITE_PREPARE_PERSISTENT). Its
    /// users leave it reset and with no parameters bound (sqlite3_clear_bindings()). Throws what
    /// Poco's SQLite statements throw for the same error
    /// (Poco::Data::SQLite::Utility::throwException) when it does not prepare.
    sqlite3_stmt* get(sqlite3* db, std::string_view sql);

private:
    std::mutex mutex_;
    std::unordered_map<sqlite3*, std::map<std::string, sqlite3_stmt*, std::less<>>> statements_;
};

/// The connection behind `session`.
sqlite3* handleOf(Poco::Data::Session& session);

/// Runs `sql`, a statement without parameters or rows (BEGIN IMMEDIATE, COMMIT, ROLLBACK), from
/// `cache` on `session`; throws as StatementCache::get() does when it fails.
void runCached(StatementCache& cache, Poco::Data::Session& session, std::string_view sql);

/// Steps `statement` once to its end (SQLITE_DONE) and resets it; on any other outcome throws as
/// StatementCache::get() does, with the step's own error.
void stepToDone(sqlite3* db, sqlite3_stmt* statement);

}  // namespace crank::store::sqlite
