#pragma once

// What the admin API's resources share to write their answers: the JSON writer's small helpers,
// and the error body every resource answers with (docs/admin-api.md, "Errors").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "admin/operation_catalog.h"
#include "config/config.h"

namespace crank::admin::api {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// A string value.
void str(Writer& w, std::string_view s);

/// A member name.
void key(Writer& w, std::string_view k);

/// Writes stored JSON text as a value (null when empty). The text comes from the store or the
/// runtime, which only keep well-formed JSON.
void raw(Writer& w, std::string_view json);

/// The value, or null.
void optInt(Writer& w, const std::optional<std::int64_t>& v);

/// The string, or null.
void optStr(Writer& w, const std::optional<std::string>& s);

/// raw() of the text, or null.
void optRaw(Writer& w, const std::optional<std::string>& json);

/// What a writer wrote.
std::string text(const rapidjson::StringBuffer& b);

/// `{"error": {"code", "message", "fields"?, "latest_version"?, "published_version"?}}`.
std::string errorBody(const ApiError& e);

/// 400 bad_request.
ApiError badRequest(std::string message);

/// 404 not_found.
ApiError notFound(std::string message);

/// 422 invalid, with the fields found wrong (by path).
ApiError invalid(std::string message, std::vector<config::ConfigError> fields);

/// The execution modes of a CRANK_MODE_* bit set, comma-separated ("unary,window").
std::string modeNames(std::uint32_t modes);

/// An array of the items of a comma-separated list.
void writeList(Writer& w, std::string_view commaSeparated);

/// `{"name": VALUE}`, VALUE being what `value` writes.
template <typename F>
std::string wrapped(std::string_view name, F&& value) {
    rapidjson::StringBuffer b;
    Writer w(b);
    w.StartObject();
    key(w, name);
    value(w);
    w.EndObject();
    return text(b);
}

/// An array of `rows`, each written by `write`.
template <typename T, typename F>
void writeArray(Writer& w, const std::vector<T>& rows, F&& write) {
    w.StartArray();
    for (const T& row : rows) {
        write(w, row);
    }
    w.EndArray();
}

}  // namespace crank::admin::api
