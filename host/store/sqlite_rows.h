#pragma once

// Internal to the SQLite implementation: reading rows into records. A Rows type attaches one
// vector per column to a statement (attach()) and turns them into records (records()).

#include <cstdint>
#include <optional>
#include <string>

#include <Poco/Data/Session.h>
#include <Poco/Data/Statement.h>
#include <Poco/Nullable.h>

#include "store/sqlite_sql.h"

namespace crank::store::sqlite {

/// Runs a query and maps its rows. Throws Poco::Exception on failure.
template <typename Rows>
auto select(Poco::Data::Session& session, const std::string& sql, const SqlParams& params) {
    Rows rows;
    Poco::Data::Statement statement(session);
    statement << sql;
    bindAll(statement, params);
    rows.attach(statement);
    statement.execute();
    return rows.records();
}

/// A nullable column's value.
inline std::optional<std::string> optionalOf(const Poco::Nullable<std::string>& value) {
    if (value.isNull()) {
        return std::nullopt;
    }
    return value.value();
}

inline std::optional<std::int64_t> optionalOf(const Poco::Nullable<std::int64_t>& value) {
    if (value.isNull()) {
        return std::nullopt;
    }
    return value.value();
}

}  // namespace crank::store::sqlite
