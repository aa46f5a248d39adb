#include <memory>
#include <optional>
#include <string>

#include "admin/api_json.h"
#include "admin/resources.h"

namespace crank::admin {
namespace {

/// The federated upstreams as they are now: for each, where it comes from, its counts, the
/// names it could not publish and the tools its policy left out, its last error and its
/// connection (docs/admin-api.md, "Upstreams"). Read-only: upstreams come from the config file.
class UpstreamsResource final : public AdminResource {
public:
    using AdminResource::AdminResource;

    void addRoutes(ApiRouter& router) {
        router.add("GET", {"upstreams"}, [this](ApiCall& c) {
            const UpstreamStatus& status = context().upstreams;
            c.out = R"({"upstreams":)" + (status.all ? status.all() : std::string("[]")) + "}";
            return std::optional<ApiError>();
        });
        router.add("GET", {"upstreams", "{}"}, [this](ApiCall& c) -> std::optional<ApiError> {
            const UpstreamStatus& status = context().upstreams;
            std::optional<std::string> one;
            if (status.one) {
                one = status.one(c.path[1]);
            }
            if (!one) {
                return api::notFound("no upstream \"" + c.path[1].substr(0, 64) +
                                     "\" (see GET /admin/api/upstreams)");
            }
            c.out = R"({"upstream":)" + *one + "}";
            return std::nullopt;
        });
    }
};

}  // namespace

std::unique_ptr<AdminResource> addUpstreamsRoutes(AdminContext& ctx, ApiRouter& router) {
    auto resource = std::make_unique<UpstreamsResource>(ctx);
    resource->addRoutes(router);
    return resource;
}

}  // namespace crank::admin
