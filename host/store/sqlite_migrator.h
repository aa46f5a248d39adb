#pragma once

// Internal to the SQLite implementation.

#include <cstdint>
#include <string_view>
#include <vector>

#include "store/sqlite_migration.h"
#include "util/error.h"

namespace Poco::Data {  // NOLINT(readability-identifier-naming): Poco's name
class Session;
}  // namespace Poco::Data

namespace crank::store::sqlite {

/// Creates schema_migrations when missing and applies, in order, every migration whose version
/// is above the database's. Each migration runs in its own BEGIN IMMEDIATE transaction, so two
/// processes opening the same new file do not apply a step twice, and a failing step leaves the
/// database at the previous version. Returns the schema version the database has afterwards.
/// Errors: conflict when the database is newer than `migrations` knows (nothing is changed);
/// internal when the list is malformed or a step fails, naming the step; io for file problems.
/// `path` only appears in messages.
Result<std::int64_t> applyMigrations(Poco::Data::Session& session, std::string_view path,
                                     const std::vector<SqliteMigration>& migrations);

/// The highest version recorded in schema_migrations (0 for a database without that table).
/// Throws Poco::Exception on failure.
std::int64_t currentSchemaVersion(Poco::Data::Session& session);

}  // namespace crank::store::sqlite
