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

/// Routing table of exact paths and path prefixes, built at start-up and read-only while serving
/// (so it needs no lock).
class Router {
public:
    /// Registers `handler` for `path` (e.g. "/healthz"); a second registration replaces the first.
    void add(std::string path, Handler handler) { routes_[std::move(path)] = std::move(handler); }
    /// Registers `handler` for every path that starts with `prefix` (e.g. "/admin/api/") and has
    /// no exact route; the longest matching prefix wins.
    void addPrefix(std::string prefix, Handler handler) {
        prefixes_[std::move(prefix)] = std::move(handler);
    }

    /// The handler for `path` (query string already stripped), or null.
    const Handler* find(std::string_view path) const {
        if (const auto it = routes_.find(path); it != routes_.end()) {
            return &it->second;
        }
        const Handler* best = nullptr;
        std::size_t bestLength = 0;
        for (const auto& [prefix, handler] : prefixes_) {  // a handful: /admin/api/, /ui/
            if (prefix.size() >= bestLength && path.substr(0, prefix.size()) == prefix) {
                best = &handler;
                bestLength = prefix.size();
            }
        }
        if (best != nullptr) {
            return best;
        }
        return nullptr;
    }

private:
    std::map<std::string, Handler, std::less<>> routes_;
    std::map<std::string, Handler, std::less<>> prefixes_;
};

}  // namespace crank::http
