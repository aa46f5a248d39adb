// VersionedRows of the admin operations: found by id, published through the operation catalog.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <rapidjson/stringbuffer.h>

#include "admin/operation_views.h"
#include "admin/resources.h"
#include "admin/versioned_rows.h"
#include "util/json_string.h"

namespace crank::admin {
namespace {

class OperationRows final : public OperationResource, public VersionedRows {
public:
    using OperationResource::OperationResource;

    const char* collection() const override { return "operations"; }
    const char* noun() const override { return "operation"; }

    std::optional<ApiError> find(const std::string& key,
                                 store::OperationRecord& record) const override {
        return adminRecord(key, record);
    }

    std::optional<ApiError> publish(const store::OperationRecord& record, std::int64_t version,
                                    std::optional<std::optional<std::int64_t>> expected,
                                    std::string& extra) override {
        std::vector<std::string> tools;
        std::optional<ApiError> failed = catalog.publish(record.id, version, expected, tools);
        if (!failed) {
            extra = R"(,"tools":[)";
            for (std::size_t i = 0; i < tools.size(); ++i) {
                extra += (i == 0 ? "" : ",") + jsonString(tools[i]);
            }
            extra += "]";
        }
        return failed;
    }

    std::string summary(const store::OperationRecord& record) const override {
        rapidjson::StringBuffer b;
        api::Writer w(b);
        writeView(w, viewOf(record, latestOf(record.id)));
        return api::text(b);
    }
};

}  // namespace

std::unique_ptr<AdminResource> addOperationVersionsRoutes(AdminContext& ctx, ApiRouter& router) {
    return addVersionsRoutes(ctx, router, std::make_unique<OperationRows>(ctx));
}

}  // namespace crank::admin
