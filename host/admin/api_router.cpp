#include "admin/api_router.h"

#include <utility>

#include <Poco/Net/HTTPServerRequest.h>

#include "admin/api_json.h"

namespace crank::admin {

void ApiRouter::add(std::string_view method, std::vector<std::string> pattern, ApiHandler handler) {
    routes_.push_back(Route{std::string(method), std::move(pattern), std::move(handler)});
}

bool ApiRouter::matches(const std::vector<std::string>& pattern,
                        const std::vector<std::string>& path) {
    if (pattern.size() != path.size()) {
        return false;
    }
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != "{}" && pattern[i] != path[i]) {
            return false;
        }
    }
    return true;
}

ApiRouter::Match ApiRouter::match(std::string_view method,
                                  const std::vector<std::string>& path) const {
    Match found;
    const Route* first = nullptr;
    for (const Route& route : routes_) {
        if (first == nullptr) {
            if (!matches(route.pattern, path)) {
                continue;
            }
            first = &route;
        } else if (route.pattern != first->pattern) {
            continue;  // the first matching pattern is the path's resource
        }
        if (route.method == method) {
            found.handler = &route.handler;
            return found;
        }
        found.allowed += found.allowed.empty() ? "" : ",";
        found.allowed += route.method;
    }
    return found;
}

std::optional<ApiError> ApiRouter::dispatch(ApiCall& call) const {
    Match found = match(call.request.getMethod(), call.path);
    if (found.handler != nullptr) {
        return (*found.handler)(call);
    }
    if (found.allowed.empty()) {
        return api::notFound("no admin API resource " + call.request.getURI().substr(0, 200) +
                             " (see docs/admin-api.md)");
    }
    return ApiError{405, "method_not_allowed", std::move(found.allowed), {}, {}, {}};
}

}  // namespace crank::admin
