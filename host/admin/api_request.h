#pragma once

// What the admin API's resources share to read a request: the JSON body (bounded, an object, no
// member twice), the methods a resource allows, and query parameters (docs/admin-api.md).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "admin/operation_catalog.h"
#include "json/json_value.h"

namespace Poco::Net {
class HTTPServerRequest;
}  // namespace Poco::Net

namespace crank::admin::api {

/// A request's query parameters, decoded.
using Params = std::map<std::string, std::string, std::less<>>;

/// The request body as a JSON object; 413 past `limit` bytes (whatever Content-Length says), 400
/// for a missing or malformed body, one that is not an object, nests deeper than 64 levels or
/// gives a member twice.
std::optional<ApiError> readJsonBody(Poco::Net::HTTPServerRequest& request, std::size_t limit,
                                     json::Document& doc);

/// 405 naming `allowed` (comma-separated, as the Allow header lists them) unless the request's
/// method is one of them.
std::optional<ApiError> allowMethods(Poco::Net::HTTPServerRequest& request,
                                     std::string_view allowed);

/// Query parameter `name` as an integer; nullopt when absent or empty, and `error` set when it
/// is not an integer.
std::optional<std::int64_t> intParam(const Params& params, std::string_view name,
                                     std::optional<ApiError>& error);

/// Query parameter `name`; nullopt when absent or empty.
std::optional<std::string> strParam(const Params& params, std::string_view name);

/// The `limit` query parameter of a list: 1 to store::kMaxListLimit, store::kDefaultListLimit
/// when absent; `error` set when out of range.
int limitParam(const Params& params, std::optional<ApiError>& error);

}  // namespace crank::admin::api
