#include "store/sqlite_sql.h"

#include <string>
#include <type_traits>
#include <utility>

#include <Poco/Data/DataException.h>
#include <Poco/Data/SQLite/SQLiteException.h>
#include <Poco/Data/Session.h>
#include <Poco/Data/Statement.h>
#include <Poco/Exception.h>
#include <Poco/Nullable.h>

namespace crank::store::sqlite {

using Poco::Data::Keywords::bind;
using Poco::Data::Keywords::into;

SqlValue sqlValue(const std::optional<std::string>& value) {
    if (value) {
        return *value;
    }
    return nullptr;
}

SqlValue sqlValue(const std::optional<std::int64_t>& value) {
    if (value) {
        return *value;
    }
    return nullptr;
}

void bindAll(Poco::Data::Statement& statement, const SqlParams& params) {
    for (const SqlValue& param : params) {
        std::visit(
            [&statement](const auto& value) {
                using T = std::decay_t<decltype(value)>;
                if constexpr (std::is_same_v<T, std::nullptr_t>) {
                    statement.addBind(bind(Poco::Data::NullData(Poco::NULL_GENERIC)));
                } else {
                    statement.addBind(bind(value));
                }
            },
            param);
    }
}

std::size_t execute(Poco::Data::Session& session, const std::string& sql, const SqlParams& params) {
    Poco::Data::Statement statement(session);
    statement << sql;
    bindAll(statement, params);
    // For INSERT/UPDATE/DELETE Poco returns sqlite3_changes(): the rows the WHERE clause matched,
    // even when an UPDATE wrote the values they already had.
    return statement.execute();
}

namespace {

/// The first column of the first row, or nullopt when there is no row or it is NULL.
template <typename T>
std::optional<T> queryOne(Poco::Data::Session& session, const std::string& sql,
                          const SqlParams& params) {
    std::vector<Poco::Nullable<T>> values;
    Poco::Data::Statement statement(session);
    statement << sql;
    bindAll(statement, params);
    statement.addExtract(into(values));
    statement.execute();
    if (values.empty() || values.front().isNull()) {
        return std::nullopt;
    }
    return values.front().value();
}

}  // namespace

std::optional<std::int64_t> queryInt(Poco::Data::Session& session, const std::string& sql,
                                     const SqlParams& params) {
    return queryOne<std::int64_t>(session, sql, params);
}

std::optional<std::string> queryText(Poco::Data::Session& session, const std::string& sql,
                                     const SqlParams& params) {
    return queryOne<std::string>(session, sql, params);
}

namespace {

// Poco builds SQLite messages as "<reason>: <sqlite3_errmsg>", which for most errors repeats the
// same words ("file is not a database: file is not a database"); keep one copy.
std::string reasonOf(const Poco::Exception& exception) {
    std::string message = exception.message();
    if (message.empty()) {
        return exception.name();
    }
    const std::size_t half = message.size() / 2;
    if (message.size() >= 3 && message.size() % 2 == 0 && message.compare(half - 1, 2, ": ") == 0 &&
        message.compare(0, half - 1, message, half + 1, std::string::npos) == 0) {
        message.resize(half - 1);
    }
    return message;
}

template <typename T>
bool is(const Poco::Exception& exception) {
    return dynamic_cast<const T*>(&exception) != nullptr;
}

}  // namespace

Error errorFromPoco(const Poco::Exception& exception, std::string_view context) {
    namespace sq = Poco::Data::SQLite;
    ErrorCode code = ErrorCode::internal;
    std::string hint;
    if (is<sq::DBLockedException>(exception) || is<sq::TableLockedException>(exception)) {
        code = ErrorCode::unavailable;
        hint = " (another connection or process held the lock for longer than busy_timeout_ms)";
    } else if (is<sq::ConstraintViolationException>(exception)) {
        code = ErrorCode::conflict;
    } else if (is<sq::CorruptImageException>(exception) || is<sq::IOErrorException>(exception) ||
               is<sq::CantOpenDBFileException>(exception) ||
               is<sq::DatabaseFullException>(exception) || is<sq::ReadOnlyException>(exception) ||
               is<sq::DBAccessDeniedException>(exception) ||
               is<sq::AuthorizationDeniedException>(exception) ||
               is<Poco::Data::ConnectionFailedException>(exception)) {
        code = ErrorCode::io;
    }
    std::string message(context);
    message += ": ";
    message += reasonOf(exception);
    message += hint;
    return Error{code, std::move(message)};
}

}  // namespace crank::store::sqlite
