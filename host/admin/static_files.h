#pragma once

// The web UI's files under /ui/ (docs/admin-api.md, "Web UI"): plain relative names only, each at
// most 4 MiB, served with a Content-Security-Policy that keeps the page to its own origin.

#include <string>
#include <string_view>

namespace Poco::Net {
class HTTPServerRequest;
class HTTPServerResponse;
}  // namespace Poco::Net

namespace crank::admin {

class StaticFiles {
public:
    explicit StaticFiles(std::string directory) : directory_(std::move(directory)) {}

    /// GET or HEAD of /ui or a file under /ui/.
    void serve(Poco::Net::HTTPServerRequest& request,
               Poco::Net::HTTPServerResponse& response) const;

private:
    static std::string_view contentType(std::string_view ext);

    std::string directory_;
};

}  // namespace crank::admin
