#pragma once

// The admin API's route table: one row per method and path pattern, added by each resource
// (resources.h). A path goes to the first pattern added that matches it: a method of that pattern
// runs its handler, any other method gets 405 listing the pattern's methods, and a path no
// pattern matches gets 404.
//
// THREADING: rows are added before serving; dispatch() only reads them.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/api_request.h"
#include "admin/operation_catalog.h"

namespace Poco::Net {
class HTTPServerRequest;
}  // namespace Poco::Net

namespace crank::admin {

/// One request as a resource's handler sees it, and its answer.
struct ApiCall {
    Poco::Net::HTTPServerRequest& request;
    const std::vector<std::string>& path;  ///< the segments after /admin/api/, decoded
    const api::Params& params;             ///< the query parameters, decoded
    int status = 200;
    std::string out;  ///< the answer's JSON body
};

/// A resource's handler: the answer in `call`, or the error to answer instead.
using ApiHandler = std::function<std::optional<ApiError>(ApiCall& call)>;

class ApiRouter {
public:
    /// Routes `method` on `pattern` to `handler`. A pattern's segments are matched literally,
    /// but for "{}", which matches any one segment (an id, found in ApiCall::path).
    void add(std::string_view method, std::vector<std::string> pattern, ApiHandler handler);

    /// What `method` on `path` routes to: a handler; or none, and the methods of the path's
    /// pattern (comma-separated, in the order added, as an Allow header lists them); or neither
    /// when no pattern matches the path.
    struct Match {
        const ApiHandler* handler = nullptr;
        std::string allowed;
    };
    Match match(std::string_view method, const std::vector<std::string>& path) const;

    /// The answer of the handler `call` routes to; 405 (its message the allowed methods) or 404
    /// when there is none.
    std::optional<ApiError> dispatch(ApiCall& call) const;

private:
    struct Route {
        std::string method;
        std::vector<std::string> pattern;
        ApiHandler handler;
    };
    static bool matches(const std::vector<std::string>& pattern,
                        const std::vector<std::string>& path);

    std::vector<Route> routes_;
};

}  // namespace crank::admin
