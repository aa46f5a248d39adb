#include "admin/api_json.h"

#include <algorithm>
#include <utility>

#include <crank/plugin.h>

namespace crank::admin::api {

void str(Writer& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void key(Writer& w, std::string_view k) {
    w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
}

/// Writes stored JSON text as a value (null when empty). The text comes from the store or the
/// runtime, which only keep well-formed JSON.
void raw(Writer& w, std::string_view json) {
    if (json.empty()) {
        w.Null();
    } else {
        w.RawValue(json.data(), json.size(), rapidjson::kObjectType);
    }
}

void optInt(Writer& w, const std::optional<std::int64_t>& v) {
    if (v) {
        w.Int64(*v);
    } else {
        w.Null();
    }
}

void optStr(Writer& w, const std::optional<std::string>& s) {
    if (s) {
        str(w, *s);
    } else {
        w.Null();
    }
}

void optRaw(Writer& w, const std::optional<std::string>& json) {
    if (json) {
        raw(w, *json);
    } else {
        w.Null();
    }
}

std::string text(const rapidjson::StringBuffer& b) {
    return {b.GetString(), b.GetSize()};
}

std::string errorBody(const ApiError& e) {
    rapidjson::StringBuffer b;
    Writer w(b);
    w.StartObject();
    key(w, "error");
    w.StartObject();
    key(w, "code");
    str(w, e.code);
    key(w, "message");
    str(w, e.message);
    if (!e.fields.empty()) {
        key(w, "fields");
        w.StartArray();
        for (const config::ConfigError& f : e.fields) {
            w.StartObject();
            key(w, "path");
            str(w, f.path);
            key(w, "message");
            str(w, f.message);
            w.EndObject();
        }
        w.EndArray();
    }
    if (e.latest_version) {
        key(w, "latest_version");
        w.Int64(*e.latest_version);
    }
    if (e.published_version) {
        key(w, "published_version");
        w.Int64(*e.published_version);
    }
    w.EndObject();
    w.EndObject();
    return text(b);
}

ApiError badRequest(std::string message) {
    return ApiError{400, "bad_request", std::move(message), {}, {}, {}};
}

ApiError notFound(std::string message) {
    return ApiError{404, "not_found", std::move(message), {}, {}, {}};
}

ApiError invalid(std::string message, std::vector<config::ConfigError> fields) {
    return ApiError{422, "invalid", std::move(message), std::move(fields), {}, {}};
}

std::string modeNames(std::uint32_t modes) {
    std::string out;
    for (const auto& [bit, name] :
         {std::pair{CRANK_MODE_UNARY, "unary"}, std::pair{CRANK_MODE_WINDOW, "window"},
          std::pair{CRANK_MODE_SESSION, "session"}, std::pair{CRANK_MODE_ASYNC_JOB, "async_job"}}) {
        if ((modes & bit) != 0U) {
            out += out.empty() ? "" : ",";
            out += name;
        }
    }
    return out;
}

void writeList(Writer& w, std::string_view commaSeparated) {
    w.StartArray();
    std::size_t at = 0;
    while (at < commaSeparated.size()) {
        const std::size_t end = std::min(commaSeparated.find(',', at), commaSeparated.size());
        str(w, commaSeparated.substr(at, end - at));
        at = end + 1;
    }
    w.EndArray();
}

}  // namespace crank::admin::api
