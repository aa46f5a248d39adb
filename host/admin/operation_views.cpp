#include "admin/operation_views.h"

#include <utility>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "admin/row_versions.h"
#include "config/config_loader.h"
#include "json/json_parse.h"

namespace crank::admin {
namespace {

using api::invalid;
using api::key;
using api::optInt;
using api::raw;
using api::str;
using api::text;
using api::Writer;

constexpr std::string_view kConfigIdPrefix = "config:";

/// The members of an operation object a summary shows, read from its JSON text.
void readHeadline(std::string_view config_json, const config::Config& config, OperationView& v) {
    json::Document doc;
    if (!json::parseJson(config_json, doc, "").ok() || !doc.IsObject()) {
        return;
    }
    const auto get = [&](const rapidjson::Value& o, const char* name) -> std::string {
        auto it = o.FindMember(name);
        return it != o.MemberEnd() && it->value.IsString()
                   ? std::string(it->value.GetString(), it->value.GetStringLength())
                   : std::string();
    };
    v.protocol = get(doc, "protocol");
    v.title = get(doc, "title");
    v.description = get(doc, "description");
    v.mode = "unary";
    if (auto e = std::as_const(doc).FindMember("execution");
        e != std::as_const(doc).MemberEnd() && e->value.IsObject()) {
        if (std::string mode = get(e->value, "mode"); !mode.empty()) {
            v.mode = std::move(mode);
        }
    }
    if (auto loaded = config::loadOperation(doc, config); loaded.operation) {
        v.tools = loaded.operation->toolNames();
    }
}

}  // namespace

void writeView(Writer& w, const OperationView& v) {
    w.StartObject();
    key(w, "id");
    str(w, v.id);
    key(w, "name");
    str(w, v.name);
    key(w, "workspace");
    str(w, v.workspace);
    key(w, "source");
    str(w, v.from_config ? "config" : "admin");
    key(w, "read_only");
    w.Bool(v.from_config);
    key(w, "mode");
    str(w, v.mode);
    key(w, "protocol");
    str(w, v.protocol);
    key(w, "title");
    str(w, v.title);
    key(w, "description");
    str(w, v.description);
    key(w, "tools");
    w.StartArray();
    for (const std::string& t : v.tools) {
        str(w, t);
    }
    w.EndArray();
    key(w, "published_version");
    optInt(w, v.published_version);
    key(w, "latest_version");
    optInt(w, v.latest_version);
    key(w, "served_version");
    optInt(w, v.served_version);
    key(w, "status");
    str(w, v.status);
    key(w, "error");
    str(w, v.error);
    key(w, "created_at");
    w.Int64(v.created_at);
    key(w, "deleted_at");
    optInt(w, v.deleted_at);
    w.EndObject();
}

void writeVersion(Writer& w, const store::OperationVersion& v) {
    w.StartObject();
    key(w, "version");
    w.Int64(v.version);
    key(w, "state");
    str(w, store::versionStateName(v.state));
    key(w, "created_at");
    w.Int64(v.created_at);
    key(w, "created_by");
    str(w, v.created_by);
    key(w, "comment");
    str(w, v.comment);
    key(w, "config");
    raw(w, v.config_json);
    w.EndObject();
}

runtime::OperationPtr OperationResource::configOperation(std::string_view id) const {
    if (id.rfind(kConfigIdPrefix, 0) != 0) {
        return nullptr;
    }
    for (const runtime::OperationPtr& op : catalog.configOperations()) {
        if (fmt::format("config:{}:{}", op->config.workspace, op->config.name) == id) {
            return op;
        }
    }
    return nullptr;
}

OperationView OperationResource::viewOf(const runtime::Operation& op) {
    OperationView v;
    v.id = fmt::format("config:{}:{}", op.config.workspace, op.config.name);
    v.name = op.config.name;
    v.workspace = op.config.workspace;
    v.from_config = true;
    v.mode = config::toString(op.config.execution.mode);
    v.protocol = op.config.protocol;
    v.title = op.config.title;
    v.description = op.config.description;
    v.tools = op.config.toolNames();
    v.status = "published";
    return v;
}

OperationView OperationResource::viewOf(
    const store::OperationRecord& r, const std::optional<store::OperationVersion>& latest) const {
    OperationView v;
    v.id = r.id;
    v.name = r.name;
    v.workspace = r.workspace_id;
    v.published_version = r.published_version;
    v.created_at = r.created_at;
    v.deleted_at = r.deleted_at;
    if (latest) {
        v.latest_version = latest->version;
        readHeadline(latest->config_json, config, v);
    }
    const auto served = catalog.served(r.id);
    if (served) {
        v.served_version = served->version;
        v.tools = served->tools;
    }
    v.error = catalog.serveError(r.id);
    if (r.deleted()) {
        v.status = "deleted";
    } else if (!r.published_version) {
        v.status = "draft";
    } else if (!v.error.empty()) {
        v.status = "error";
    } else {
        v.status = "published";
    }
    return v;
}

std::optional<store::OperationVersion> OperationResource::latestOf(const std::string& id) const {
    return newestVersion(catalog.store(), id);
}

std::optional<ApiError> OperationResource::adminRecord(std::string_view id,
                                                       store::OperationRecord& record) const {
    if (configOperation(id) != nullptr) {
        return ApiError{
            409,
            "read_only",
            "operation " + std::string(id) + " comes from the config file; change it there",
            {},
            {},
            {}};
    }
    auto r = catalog.store().getOperation(id);
    if (!r) {
        return storeError(r.error());
    }
    if (r->kind != store::OperationKind::operation) {
        return api::notFound("store: no operation \"" + std::string(id) + "\"");
    }
    record = std::move(*r);
    return std::nullopt;
}

const rapidjson::Value* OperationResource::operationOf(const json::Document& body,
                                                       std::optional<ApiError>& error) {
    auto it = body.FindMember("config");
    if (it == body.MemberEnd() || !it->value.IsObject()) {
        error = invalid("the body's \"config\" must be the operation object",
                        {{"", "expected the operation object in \"config\""}});
        return nullptr;
    }
    return &it->value;
}

std::optional<ApiError> OperationResource::checkedError(OperationCatalog::Checked& checked) {
    if (checked.operation) {
        return std::nullopt;
    }
    if (checked.conflict) {
        ApiError e{409, "conflict", checked.errors.front().message, std::move(checked.errors),
                   {},  {}};
        return e;
    }
    const std::size_t count = checked.errors.size();
    std::string message = count == 1
                              ? checked.errors.front().toString()
                              : fmt::format("the operation has {} problems; see fields", count);
    return invalid(std::move(message), std::move(checked.errors));
}

std::string OperationResource::operationAndVersion(const store::OperationRecord& r,
                                                   const store::OperationVersion& v) const {
    rapidjson::StringBuffer b;
    Writer w(b);
    w.StartObject();
    key(w, "operation");
    writeView(w, viewOf(r, v));
    key(w, "version");
    writeVersion(w, v);
    w.EndObject();
    return text(b);
}

}  // namespace crank::admin
