#include "admin/api_request.h"

#include <istream>
#include <set>
#include <utility>

#include <Poco/Net/HTTPServerRequest.h>
#include <fmt/core.h>
#include <rapidjson/document.h>

#include "admin/api_json.h"
#include "json/json_parse.h"
#include "json/json_text.h"
#include "store/store.h"

namespace crank::admin::api {
namespace {

using Poco::Net::HTTPServerRequest;

constexpr std::size_t kMaxBodyDepth = 64;

}  // namespace

std::optional<ApiError> readJsonBody(HTTPServerRequest& request, std::size_t limit,
                                     json::Document& doc) {
    if (request.hasContentLength() &&
        request.getContentLength64() > static_cast<std::int64_t>(limit)) {
        return ApiError{413,
                        "too_large",
                        fmt::format("the body is larger than {} bytes "
                                    "(server.max_request_body_bytes)",
                                    limit),
                        {},
                        {},
                        {}};
    }
    std::string text;
    std::istream& in = request.stream();
    char chunk[8192];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
        text.append(chunk, static_cast<std::size_t>(in.gcount()));
        if (text.size() > limit) {
            return ApiError{413,
                            "too_large",
                            fmt::format("the body is larger than {} bytes "
                                        "(server.max_request_body_bytes)",
                                        limit),
                            {},
                            {},
                            {}};
        }
    }
    json::ParseLimits limits;
    limits.max_depth = kMaxBodyDepth;
    if (auto parsed = json::parseJson(text, doc, "body", limits); !parsed) {
        return badRequest(text.empty() ? "a JSON object body is required" : parsed.error().message);
    }
    if (!doc.IsObject()) {
        return badRequest("the body must be a JSON object, got " + json::describeValue(doc));
    }
    // A member given twice would be read as one of its values, silently: refused.
    std::set<std::string_view> names;
    for (const auto& m : std::as_const(doc).GetObject()) {
        const std::string_view name(m.name.GetString(), m.name.GetStringLength());
        if (!names.insert(name).second) {
            return badRequest("the body gives \"" + std::string(name.substr(0, 64)) + "\" twice");
        }
    }
    return std::nullopt;
}

std::optional<ApiError> allowMethods(HTTPServerRequest& request, std::string_view allowed) {
    const std::string& m = request.getMethod();
    std::size_t at = 0;
    while (at <= allowed.size()) {
        const std::size_t end = std::min(allowed.find(',', at), allowed.size());
        if (allowed.substr(at, end - at) == m) {
            return std::nullopt;
        }
        at = end + 1;
    }
    return ApiError{405, "method_not_allowed", std::string(allowed), {}, {}, {}};
}

std::optional<std::int64_t> intParam(const Params& params, std::string_view name,
                                     std::optional<ApiError>& error) {
    const auto it = params.find(name);
    if (it == params.end() || it->second.empty()) {
        return std::nullopt;
    }
    try {
        std::size_t used = 0;
        const std::int64_t v = std::stoll(it->second, &used);
        if (used == it->second.size()) {
            return v;
        }
    } catch (const std::exception&) {
    }
    error = badRequest(fmt::format("query parameter {} must be an integer, got \"{}\"", name,
                                   it->second.substr(0, 40)));
    return std::nullopt;
}

std::optional<std::string> strParam(const Params& params, std::string_view name) {
    const auto it = params.find(name);
    if (it == params.end() || it->second.empty()) {
        return std::nullopt;
    }
    return it->second;
}

int limitParam(const Params& params, std::optional<ApiError>& error) {
    const auto limit = intParam(params, "limit", error);
    if (limit && (*limit < 1 || *limit > store::kMaxListLimit)) {
        error =
            badRequest(fmt::format("limit must be 1 to {}, got {}", store::kMaxListLimit, *limit));
    }
    return limit ? static_cast<int>(*limit) : store::kDefaultListLimit;
}

}  // namespace crank::admin::api
