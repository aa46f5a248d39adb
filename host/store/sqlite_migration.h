#pragma once

#include <string>
#include <vector>

namespace crank::store {

/// One step of the SQLite schema. Steps are applied in version order, each in its own
/// transaction, and recorded in schema_migrations (version, description, applied_at).
///
/// RULES for whoever adds a step: append it with the next version number; never edit or reorder
/// a step that has shipped (databases in the field have applied it); one SQL statement per
/// element of `statements`; no PRAGMAs that cannot run inside a transaction.
struct SqliteMigration {
    int version = 0;  ///< 1, 2, 3, ... without gaps
    std::string description;
    std::vector<std::string> statements;
};

/// The schema this build knows, oldest first. Its last version is the newest schema this build
/// can open; a database with a newer one is refused.
const std::vector<SqliteMigration>& sqliteMigrations();

}  // namespace crank::store
