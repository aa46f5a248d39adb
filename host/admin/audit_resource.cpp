#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "admin/api_json.h"
#include "admin/api_request.h"
#include "admin/resources.h"
#include "runtime/operation_runner.h"

namespace crank::admin {
namespace {

using api::badRequest;
using api::intParam;
using api::key;
using api::limitParam;
using api::Params;
using api::raw;
using api::str;
using api::strParam;
using api::text;
using api::Writer;

/// The audit trail, filtered and paged (docs/admin-api.md, "Audit").
class AuditResource final : public AdminResource {
public:
    using AdminResource::AdminResource;

    void addRoutes(ApiRouter& router) {
        router.add("GET", {"audit"}, [this](ApiCall& c) { return queryAudit(c.params, c.out); });
    }

private:
    std::optional<ApiError> queryAudit(const Params& params, std::string& out) const {
        store::AuditQuery q;
        q.workspace_id = strParam(params, "workspace");
        q.agent_id = strParam(params, "agent");
        q.operation_id = strParam(params, "operation");
        q.action = strParam(params, "action");
        std::optional<ApiError> error;
        q.from_ts = intParam(params, "from", error);
        q.to_ts = intParam(params, "to", error);
        q.limit = limitParam(params, error);
        if (error) {
            return error;
        }
        if (q.from_ts && q.to_ts && *q.from_ts > *q.to_ts) {
            return badRequest("from must not be after to");
        }
        if (const auto order = strParam(params, "order")) {
            if (*order == "oldest_first") {
                q.order = store::SortOrder::oldest_first;
            } else if (*order != "newest_first") {
                return badRequest("order must be newest_first or oldest_first");
            }
        }
        // This node's tool calls are written behind: the reader sees their own last calls.
        catalog.runner().flushAudit();
        auto events = catalog.store().queryAudit(q);
        if (!events) {
            return storeError(events.error());
        }
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "events");
        w.StartArray();
        for (const store::AuditEvent& e : *events) {
            w.StartObject();
            key(w, "id");
            w.Int64(e.id);
            key(w, "ts");
            w.Int64(e.ts);
            key(w, "workspace_id");
            str(w, e.workspace_id);
            key(w, "agent_id");
            str(w, e.agent_id);
            key(w, "operation_id");
            str(w, e.operation_id);
            key(w, "action");
            str(w, e.action);
            key(w, "outcome");
            str(w, e.outcome);
            key(w, "detail");
            raw(w, e.detail_json);
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
        out = text(b);
        return std::nullopt;
    }
};

}  // namespace

std::unique_ptr<AdminResource> addAuditRoutes(AdminContext& ctx, ApiRouter& router) {
    auto resource = std::make_unique<AuditResource>(ctx);
    resource->addRoutes(router);
    return resource;
}

}  // namespace crank::admin
