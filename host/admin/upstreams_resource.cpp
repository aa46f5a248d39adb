#include <memory>
#include <optional>
#include <string>

#include <rapidjson/document.h>

#include "admin/api_json.h"
#include "admin/resources.h"
#include "json/json_members.h"
#include "util/json_string.h"

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
        router.add("POST", {"upstreams", "{}", "test"},
                   [this](ApiCall& c) { return test(c.path[1], c.out); });
    }

private:
    /// A test connection of its own to upstream `name` (opened, pinged, closed: nothing kept),
    /// a test run's worth: bounded by admin.test_run_timeout_ms, counted in admin.max_test_runs,
    /// audited.
    std::optional<ApiError> test(const std::string& name, std::string& out) {
        const UpstreamStatus& status = context().upstreams;
        const std::optional<std::string> live =
            status.test && status.one ? status.one(name) : std::nullopt;
        if (!live) {
            return api::notFound("no upstream \"" + name.substr(0, 64) +
                                 "\" (see GET /admin/api/upstreams)");
        }
        json::Document upstream;
        const std::string workspace =
            json::parseObject(*live, upstream) ? json::stringMember(upstream, "workspace") : "";
        std::optional<ApiError> busy;
        const auto slot = takeTestRun(busy);
        if (!slot) {
            return busy;
        }
        const std::optional<std::string> result =
            status.test(name, config.admin.test_run_timeout_ms);
        if (!result) {
            return api::notFound("no upstream \"" + name.substr(0, 64) + "\"");
        }
        json::Document answer;
        const bool ok = json::parseObject(*result, answer) && answer.HasMember("ok") &&
                        answer["ok"].IsBool() && answer["ok"].GetBool();
        audit(workspace, name, "upstream.test", ok ? "ok" : "failed",
              R"({"upstream":)" + jsonString(name) + "}");
        out = R"({"test":)" + *result + "}";
        return std::nullopt;
    }
};

}  // namespace

std::unique_ptr<AdminResource> addUpstreamsRoutes(AdminContext& ctx, ApiRouter& router) {
    auto resource = std::make_unique<UpstreamsResource>(ctx);
    resource->addRoutes(router);
    return resource;
}

}  // namespace crank::admin
