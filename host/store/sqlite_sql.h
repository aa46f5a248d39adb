#pragma once

// Internal to the SQLite implementation: small helpers over Poco::Data so that the store code
// reads as SQL plus parameters. Poco types are only forward-declared here.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "util/error.h"

namespace Poco {
class Exception;
namespace Data {  // NOLINT(readability-identifier-naming): Poco's name
class Session;
class Statement;
}  // namespace Data
}  // namespace Poco

namespace crank::store::sqlite {

/// A value bound to one `?` of a statement; nullptr binds SQL NULL.
using SqlValue = std::variant<std::nullptr_t, std::int64_t, std::string>;
using SqlParams = std::vector<SqlValue>;

SqlValue sqlValue(const std::optional<std::string>& value);
SqlValue sqlValue(const std::optional<std::int64_t>& value);

/// Binds `params` (copies) to the statement's placeholders, in order.
void bindAll(Poco::Data::Statement& statement, const SqlParams& params);

/// Runs one statement that returns no rows; returns the number of rows it inserted, updated or
/// deleted. Throws Poco::Exception on failure.
std::size_t execute(Poco::Data::Session& session, const std::string& sql,
                    const SqlParams& params = {});

/// Runs a query whose first column of the first row is an integer; nullopt when there is no row
/// or the value is NULL. Throws Poco::Exception on failure.
std::optional<std::int64_t> queryInt(Poco::Data::Session& session, const std::string& sql,
                                     const SqlParams& params = {});

/// Same for a text value.
std::optional<std::string> queryText(Poco::Data::Session& session, const std::string& sql,
                                     const SqlParams& params = {});

/// Turns an exception from Poco Data into an Error whose message starts with `context` (e.g.
/// "store: cannot create session") and ends with SQLite's reason. The reason never contains
/// bound values, so no secret can leak through it.
Error errorFromPoco(const Poco::Exception& exception, std::string_view context);

}  // namespace crank::store::sqlite
