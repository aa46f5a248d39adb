#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <Poco/Net/HTTPServerRequest.h>
#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "admin/api_json.h"
#include "admin/api_request.h"
#include "admin/operation_views.h"
#include "admin/resources.h"
#include "admin/row_versions.h"
#include "json/json_members.h"
#include "json/json_text.h"
#include "log/log.h"
#include "runtime/operation_runner.h"
#include "util/json_string.h"

namespace crank::admin {
namespace {

using api::badRequest;
using api::invalid;
using api::key;
using api::notFound;
using api::Params;
using api::raw;
using api::str;
using api::strParam;
using api::text;
using api::wrapped;
using api::writeArray;
using api::Writer;
using Poco::Net::HTTPServerRequest;

/// Operations as the admin keeps them: list, create, read, edit (a new version), delete, and
/// validate one without saving it (docs/admin-api.md, "Operations").
class OperationsResource final : public OperationResource {
public:
    using OperationResource::OperationResource;

    void addRoutes(ApiRouter& router) {
        router.add("POST", {"operations", "validate"},
                   [this](ApiCall& c) { return validate(c.request, c.out); });
        router.add("GET", {"operations"},
                   [this](ApiCall& c) { return listOperations(c.params, c.out); });
        router.add("POST", {"operations"},
                   [this](ApiCall& c) { return createOperation(c.request, c.status, c.out); });
        router.add("GET", {"operations", "{}"},
                   [this](ApiCall& c) { return getOperation(c.path[1], c.out); });
        router.add("PUT", {"operations", "{}"}, [this](ApiCall& c) {
            return updateOperation(c.request, c.path[1], c.status, c.out);
        });
        router.add("DELETE", {"operations", "{}"},
                   [this](ApiCall& c) { return deleteOperation(c.path[1], c.out); });
    }

private:
    std::optional<ApiError> listOperations(const Params& params, std::string& out) const {
        const auto workspace = strParam(params, "workspace");
        const auto source = strParam(params, "source");
        if (source && *source != "admin" && *source != "config") {
            return badRequest("source must be \"admin\" or \"config\"");
        }
        std::vector<OperationView> views;
        if (!source || *source == "config") {
            for (const runtime::OperationPtr& op : catalog.configOperations()) {
                if (!workspace || op->config.workspace == *workspace) {
                    views.push_back(viewOf(*op));
                }
            }
        }
        if (!source || *source == "admin") {
            store::OperationFilter filter;
            filter.workspace_id = workspace;
            const auto deleted = strParam(params, "include_deleted");
            if (deleted && *deleted != "true" && *deleted != "false") {
                return badRequest("include_deleted must be true or false");
            }
            filter.include_deleted = deleted == "true";
            filter.limit = store::kMaxListLimit;
            auto rows = catalog.store().listOperations(filter);
            if (!rows) {
                return storeError(rows.error());
            }
            for (const store::OperationRecord& r : *rows) {
                views.push_back(viewOf(r, latestOf(r.id)));
            }
        }
        std::sort(views.begin(), views.end(), [](const OperationView& a, const OperationView& b) {
            return std::tie(a.workspace, a.name, a.id) < std::tie(b.workspace, b.name, b.id);
        });
        out = wrapped("operations", [&](Writer& w) { writeArray(w, views, writeView); });
        return std::nullopt;
    }

    std::optional<ApiError> createOperation(HTTPServerRequest& request, int& status,
                                            std::string& out) {
        json::Document doc;
        if (auto e = body(request, doc)) {
            return e;
        }
        std::optional<ApiError> error;
        const rapidjson::Value* op = operationOf(doc, error);
        if (op == nullptr) {
            return error;
        }
        OperationCatalog::Checked checked = catalog.check(*op, "");
        if (auto e = checkedError(checked)) {
            return e;
        }
        const config::OperationConfig& c = checked.operation->config;
        store::OperationRecord record;
        record.workspace_id = c.workspace;
        record.name = c.name;
        store::OperationRecord created;
        store::OperationVersion version;
        if (auto e = createRow(catalog.store(), record, json::toJsonText(*op),
                               json::stringMember(doc, "comment"), created, version)) {
            return e;
        }
        audit(c.workspace, c.name, "operation.create", "ok",
              R"({"id":)" + jsonString(created.id) + R"(,"version":1})");
        status = 201;
        out = operationAndVersion(created, version);
        return std::nullopt;
    }

    std::optional<ApiError> getOperation(const std::string& id, std::string& out) const {
        rapidjson::StringBuffer b;
        Writer w(b);
        if (const runtime::OperationPtr op = configOperation(id)) {
            w.StartObject();
            key(w, "operation");
            writeView(w, viewOf(*op));
            for (const char* which : {"latest", "published"}) {
                key(w, which);
                w.StartObject();
                key(w, "version");
                w.Null();
                key(w, "state");
                str(w, "published");
                key(w, "config");
                raw(w, op->config.source_json);
                w.EndObject();
            }
            w.EndObject();
            out = text(b);
            return std::nullopt;
        }
        store::OperationRecord record;
        if (auto e = adminRecord(id, record)) {
            return e;
        }
        const std::optional<store::OperationRecord> r = std::move(record);
        const auto latest = latestOf(r->id);
        w.StartObject();
        key(w, "operation");
        writeView(w, viewOf(*r, latest));
        key(w, "latest");
        if (latest) {
            writeVersion(w, *latest);
        } else {
            w.Null();
        }
        key(w, "published");
        if (r->published_version) {
            auto published = catalog.store().getOperationVersion(id, *r->published_version);
            if (!published) {
                return storeError(published.error());
            }
            writeVersion(w, *published);
        } else {
            w.Null();
        }
        w.EndObject();
        out = text(b);
        return std::nullopt;
    }

    std::optional<ApiError> updateOperation(HTTPServerRequest& request, const std::string& id,
                                            int& status, std::string& out) {
        store::OperationRecord record;
        if (auto e = adminRecord(id, record)) {
            return e;
        }
        if (record.deleted()) {
            return notFound("operation " + id + " is deleted; it takes no new versions");
        }
        json::Document doc;
        if (auto e = body(request, doc)) {
            return e;
        }
        auto base = std::as_const(doc).FindMember("base_version");
        if (base == std::as_const(doc).MemberEnd() || !base->value.IsInt64() ||
            base->value.GetInt64() < 1) {
            return badRequest("base_version is required: the version number the edit started from");
        }
        std::optional<ApiError> error;
        const rapidjson::Value* op = operationOf(doc, error);
        if (op == nullptr) {
            return error;
        }
        std::vector<config::ConfigError> fixed;
        if (json::stringMember(*op, "name") != record.name) {
            fixed.push_back({"name", "cannot be changed (it is \"" + record.name +
                                         "\"); create a new operation instead"});
        }
        const std::string workspace = json::stringMember(*op, "workspace");
        if ((workspace.empty() ? std::string("default") : workspace) != record.workspace_id) {
            fixed.push_back({"workspace", "cannot be changed (it is \"" + record.workspace_id +
                                              "\"); create a new operation instead"});
        }
        if (!fixed.empty()) {
            return invalid("name and workspace are fixed when an operation is created",
                           std::move(fixed));
        }
        OperationCatalog::Checked checked = catalog.check(*op, id);
        if (auto e = checkedError(checked)) {
            return e;
        }
        store::OperationVersion version;
        if (auto e = addRowVersion(catalog.store(), id, json::toJsonText(*op),
                                   json::stringMember(doc, "comment"), base->value.GetInt64(),
                                   version)) {
            return e;
        }
        audit(record.workspace_id, record.name, "operation.update", "ok",
              fmt::format(R"({{"id":{},"version":{}}})", jsonString(id), version.version));
        status = 201;
        out = operationAndVersion(record, version);
        return std::nullopt;
    }

    std::optional<ApiError> deleteOperation(const std::string& id, std::string& out) {
        store::OperationRecord record;
        if (auto e = adminRecord(id, record)) {
            return e;
        }
        if (auto e = catalog.remove(id)) {
            return e;
        }
        audit(record.workspace_id, record.name, "operation.delete", "ok",
              R"({"id":)" + jsonString(id) + "}");
        auto after = catalog.store().getOperation(id);
        if (!after) {
            return storeError(after.error());
        }
        out = wrapped("operation", [&](Writer& w) { writeView(w, viewOf(*after, latestOf(id))); });
        return std::nullopt;
    }

    std::optional<ApiError> validate(HTTPServerRequest& request, std::string& out) {
        json::Document doc;
        if (auto e = body(request, doc)) {
            return e;
        }
        std::optional<ApiError> error;
        const rapidjson::Value* op = operationOf(doc, error);
        if (op == nullptr) {
            return error;
        }
        OperationCatalog::Checked checked = catalog.check(*op, json::stringMember(doc, "id"));
        if (auto e = checkedError(checked)) {
            return e;
        }
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "valid");
        w.Bool(true);
        key(w, "tools");
        w.StartArray();
        for (const auto& [definition, function] :
             runtime::operationTools(checked.operation, catalog.runner())) {
            w.StartObject();
            key(w, "name");
            str(w, definition.name);
            key(w, "description");
            str(w, definition.description);
            key(w, "input_schema");
            raw(w, definition.input_schema_json);
            key(w, "output_schema");
            raw(w, definition.output_schema_json);
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
        out = text(b);
        return std::nullopt;
    }
};

}  // namespace

std::unique_ptr<AdminResource> addOperationsRoutes(AdminContext& ctx, ApiRouter& router) {
    auto resource = std::make_unique<OperationsResource>(ctx);
    resource->addRoutes(router);
    return resource;
}

}  // namespace crank::admin
