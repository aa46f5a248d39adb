#include <memory>
#include <optional>
#include <string>

#include "admin/api_json.h"
#include "admin/resources.h"

namespace crank::admin {
namespace {

/// POST /admin/api/reload: the config file read again, validated in full, and what can change
/// without a restart applied (docs/operations.md, "Reload"). 200 with the report when applied;
/// 422 with every error (nothing changed) when the file was refused. Audited as config.reload.
class ReloadResource final : public AdminResource {
public:
    using AdminResource::AdminResource;

    void addRoutes(ApiRouter& router) {
        router.add("POST", {"reload"}, [this](ApiCall& c) -> std::optional<ApiError> {
            ConfigReloadTarget* target = context().reload;
            if (target == nullptr) {
                return ApiError{503, "unavailable", "this crankd cannot reload its config", {}, {},
                                {}};
            }
            const ConfigReloadTarget::Outcome outcome = target->reload();
            audit("", "", "config.reload", outcome.applied ? "ok" : "refused", outcome.json);
            c.status = outcome.applied ? 200 : 422;
            c.out = R"({"reload":)" + outcome.json + "}";
            return std::nullopt;
        });
    }
};

}  // namespace

std::unique_ptr<AdminResource> addReloadRoutes(AdminContext& ctx, ApiRouter& router) {
    auto resource = std::make_unique<ReloadResource>(ctx);
    resource->addRoutes(router);
    return resource;
}

}  // namespace crank::admin
