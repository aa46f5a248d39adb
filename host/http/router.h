#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace Poco::Net {
class HTTPServerRequest;
class HTTPServerResponse;
}  // namespace Poco::Net

namespace crank::http {

/// Handles one request. Runs on a server worker thread; may throw (the server answers 500 if the
/// response was not sent yet, and logs the exception).
using Handler = std::function<void(Poco::Net::HTTPServerRequest&, Poco::Net::HTTPServerResponse&)>;

/// Exact-path routing table, built at start-up and read-only while serving (so it needs no lock).
class Router {
public:
    /// Registers `handler` for `path` (e.g. "/healthz"); a second registration replaces the first.
    void add(std::string path, Handler handler) { routes_[std::move(path)] = std::move(handler); }

    /// The handler for `path` (query string already stripped), or null.
    const Handler* find(std::string_view path) const {
        const auto it = routes_.find(path);
        return it == routes_.end() ? nullptr : &it->second;
    }

private:
    std::map<std::string, Handler, std::less<>> routes_;
};

}  // namespace crank::http
