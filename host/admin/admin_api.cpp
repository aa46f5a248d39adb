#include "admin/admin_api.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <Poco/Exception.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/URI.h>
#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "admin/api_json.h"
#include "admin/api_request.h"
#include "admin/json_diff.h"
#include "admin/operation_catalog.h"
#include "admin/static_files.h"
#include "admin/test_run.h"
#include "config/config_loader.h"
#include "http/responses.h"
#include "json/json_members.h"
#include "json/json_parse.h"
#include "json/json_text.h"
#include "log/log.h"
#include "mcp/tool_registry.h"
#include "plugins/adapter_handle.h"
#include "plugins/aggregator_handle.h"
#include "plugins/plugin_registry.h"
#include "runtime/operation_runner.h"
#include "util/json_string.h"
#include "util/sha256.h"
#include <crank/plugin.h>

namespace crank::admin {
namespace {

using api::badRequest;
using api::errorBody;
using api::intParam;
using api::invalid;
using api::key;
using api::limitParam;
using api::modeNames;
using api::notFound;
using api::optInt;
using api::optRaw;
using api::optStr;
using api::Params;
using api::raw;
using api::str;
using api::strParam;
using api::text;
using api::wrapped;
using api::writeArray;
using api::writeList;
using api::Writer;
using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

constexpr std::string_view kApiPrefix = "/admin/api/";
constexpr std::string_view kConfigIdPrefix = "config:";

/// What a list or detail shows of one operation (docs/admin-api.md, "Operations").
struct OperationView {
    std::string id;
    std::string name;
    std::string workspace;
    bool from_config = false;
    std::string mode;
    std::string protocol;
    std::string title;
    std::string description;
    std::vector<std::string> tools;
    std::optional<std::int64_t> published_version;
    std::optional<std::int64_t> latest_version;
    std::optional<std::int64_t> served_version;
    std::string status;
    std::string error;
    std::int64_t created_at = 0;
    std::optional<std::int64_t> deleted_at;
};

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

void writeSession(Writer& w, const store::SessionRecord& s) {
    w.StartObject();
    key(w, "id");
    str(w, s.id);
    key(w, "workspace_id");
    str(w, s.workspace_id);
    key(w, "agent_id");
    str(w, s.agent_id);
    key(w, "operation_id");
    str(w, s.operation_id);
    key(w, "protocol");
    str(w, s.protocol);
    key(w, "mode");
    str(w, s.mode);
    key(w, "status");
    str(w, store::sessionStatusName(s.status));
    key(w, "cursor");
    optStr(w, s.cursor);
    key(w, "state");
    raw(w, s.state_json);
    key(w, "expires_at");
    w.Int64(s.expires_at);
    key(w, "last_poll_at");
    optInt(w, s.last_poll_at);
    key(w, "created_at");
    w.Int64(s.created_at);
    key(w, "closed_at");
    optInt(w, s.closed_at);
    key(w, "owner_node");
    optStr(w, s.owner_node);
    w.EndObject();
}

void writeJob(Writer& w, const store::JobRecord& j) {
    w.StartObject();
    key(w, "id");
    str(w, j.id);
    key(w, "workspace_id");
    str(w, j.workspace_id);
    key(w, "agent_id");
    str(w, j.agent_id);
    key(w, "operation_id");
    str(w, j.operation_id);
    key(w, "status");
    str(w, store::jobStatusName(j.status));
    key(w, "progress");
    optRaw(w, j.progress_json);
    key(w, "result");
    optRaw(w, j.result_json);
    key(w, "error");
    optRaw(w, j.error_json);
    key(w, "input");
    raw(w, j.input_json);
    key(w, "cursor");  // the plugin's resume position: opaque text
    optStr(w, j.cursor);
    key(w, "expires_at");
    w.Int64(j.expires_at);
    key(w, "created_at");
    w.Int64(j.created_at);
    key(w, "updated_at");
    w.Int64(j.updated_at);
    key(w, "finished_at");
    optInt(w, j.finished_at);
    key(w, "owner_node");
    optStr(w, j.owner_node);
    w.EndObject();
}

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

struct AdminApi::Impl {
    OperationCatalog& catalog;
    const config::Config& config;
    std::string crank_version;
    StaticFiles files;
    http::OriginPolicy origins;
    std::atomic<int> test_runs{0};
    std::atomic<bool> stopping{false};

    Impl(OperationCatalog& c, const config::Config& cfg, std::string ui, std::string v)
        : catalog(c),
          config(cfg),
          crank_version(std::move(v)),
          files(std::move(ui)),
          origins(cfg.server.allowed_hosts, cfg.server.allowed_origins) {}

    // ----- plumbing ------------------------------------------------------------------------

    void handle(HTTPServerRequest& request, HTTPServerResponse& response) {
        const std::string origin = request.get("Origin", "");
        if (!origins.hostAllowed(request.getHost())) {
            http::sendError(response, 403, "forbidden_host",
                            "this Host may not use the admin API (server.allowed_hosts)");
            return;
        }
        if (!origins.originAllowed(origin)) {
            http::sendError(response, 403, "forbidden_origin",
                            "this Origin may not use the admin API (server.allowed_origins)");
            return;
        }
        if (!config.admin.token) {
            http::sendError(response, 404, "admin_disabled",
                            "the admin API is off: set admin.token in the config");
            return;
        }
        if (!bearerMatchesDigest(request.get("Authorization", ""), config.admin.token->reveal())) {
            response.set("WWW-Authenticate", R"(Bearer realm="crank-admin")");
            http::sendError(response, 401, "unauthorized",
                            "the admin token is required: Authorization: Bearer TOKEN");
            return;
        }
        std::optional<Poco::URI> parsedUri;
        try {
            parsedUri.emplace(request.getURI());
            (void)parsedUri->getQueryParameters();
        } catch (const Poco::SyntaxException&) {
            http::sendError(response, 400, "bad_request",
                            "the request's path or query has a malformed %-escape");
            return;
        }
        const Poco::URI& uri = *parsedUri;
        std::vector<std::string> parts;
        {
            const std::string& path = uri.getPath();
            std::string_view rest = std::string_view(path).substr(kApiPrefix.size());
            while (!rest.empty()) {
                const std::size_t slash = std::min(rest.find('/'), rest.size());
                parts.emplace_back(rest.substr(0, slash));  // getPath() decoded it already
                rest.remove_prefix(std::min(slash + 1, rest.size()));
            }
        }
        Params params;
        for (const auto& [k, v] : uri.getQueryParameters()) {
            params[k] = v;
        }
        std::string out;
        int status = 200;
        std::optional<ApiError> error = route(request, parts, params, status, out);
        if (error) {
            if (error->status == 405) {
                response.set("Allow", error->message);
                error->message = "allowed methods: " + error->message;
            }
            http::sendJson(response, error->status, errorBody(*error));
            return;
        }
        http::sendJson(response, status, out);
    }

    /// The request body as a JSON object (api::readJsonBody within server.max_request_body_bytes).
    std::optional<ApiError> body(HTTPServerRequest& request, json::Document& doc) const {
        return api::readJsonBody(
            request, static_cast<std::size_t>(config.server.max_request_body_bytes), doc);
    }

    void audit(const std::string& workspace, const std::string& operation, std::string action,
               std::string outcome, const std::string& detail_json) const {
        store::AuditEvent e;
        e.workspace_id = workspace;
        e.agent_id = "admin";
        e.operation_id = operation;
        e.action = std::move(action);
        e.outcome = std::move(outcome);
        e.detail_json = detail_json;
        if (auto r = catalog.store().appendAudit(std::move(e)); !r) {
            log::warn("admin: cannot append to the audit log: {}", r.error().message);
        }
    }

    std::optional<ApiError> route(HTTPServerRequest& request, const std::vector<std::string>& p,
                                  const Params& params, int& status, std::string& out) {
        const std::size_t n = p.size();
        const std::string first = n > 0 ? p[0] : "";
        if (first == "operations") {
            if (n == 1) {
                if (auto e = api::allowMethods(request, "GET,POST")) {
                    return e;
                }
                return request.getMethod() == "GET" ? listOperations(params, out)
                                                    : createOperation(request, status, out);
            }
            if (n == 2 && p[1] == "validate") {
                if (auto e = api::allowMethods(request, "POST")) {
                    return e;
                }
                return validate(request, out);
            }
            if (n == 2) {
                if (auto e = api::allowMethods(request, "GET,PUT,DELETE")) {
                    return e;
                }
                if (request.getMethod() == "GET") {
                    return getOperation(p[1], out);
                }
                if (request.getMethod() == "PUT") {
                    return updateOperation(request, p[1], status, out);
                }
                return deleteOperation(p[1], out);
            }
            if (n == 3 && p[2] == "versions") {
                if (auto e = api::allowMethods(request, "GET")) {
                    return e;
                }
                return listVersions(p[1], params, out);
            }
            if (n == 4 && p[2] == "versions") {
                if (auto e = api::allowMethods(request, "GET")) {
                    return e;
                }
                return getVersion(p[1], p[3], out);
            }
            if (n == 3 && p[2] == "diff") {
                if (auto e = api::allowMethods(request, "GET")) {
                    return e;
                }
                return diff(p[1], params, out);
            }
            if (n == 3 && (p[2] == "publish" || p[2] == "rollback")) {
                if (auto e = api::allowMethods(request, "POST")) {
                    return e;
                }
                return publish(request, p[1], p[2] == "rollback", out);
            }
        } else if (first == "test-runs" && n == 1) {
            if (auto e = api::allowMethods(request, "POST")) {
                return e;
            }
            return testRun(request, out);
        } else if (n == 1 && (first == "plugins" || first == "meta" || first == "auth-profiles")) {
            if (auto e = api::allowMethods(request, "GET")) {
                return e;
            }
            out = first == "plugins" ? plugins() : (first == "meta" ? meta() : authProfiles());
            return std::nullopt;
        } else if (first == "sessions" || first == "jobs") {
            const bool sessions = first == "sessions";
            if (n == 1) {
                if (auto e = api::allowMethods(request, "GET")) {
                    return e;
                }
                return sessions ? listSessions(params, out) : listJobs(params, out);
            }
            if (n == 2) {
                if (auto e = api::allowMethods(request, "GET")) {
                    return e;
                }
                return sessions ? getSession(p[1], out) : getJob(p[1], out);
            }
            if (n == 3 && p[2] == (sessions ? "stop" : "cancel")) {
                if (auto e = api::allowMethods(request, "POST")) {
                    return e;
                }
                return sessions ? stopSession(p[1], out) : cancelJob(p[1], out);
            }
        } else if (first == "audit" && n == 1) {
            if (auto e = api::allowMethods(request, "GET")) {
                return e;
            }
            return queryAudit(params, out);
        }
        return notFound("no admin API resource " + request.getURI().substr(0, 200) +
                        " (see docs/admin-api.md)");
    }

    // ----- operations ----------------------------------------------------------------------

    const runtime::Operation* configOperation(std::string_view id) const {
        if (id.rfind(kConfigIdPrefix, 0) != 0) {
            return nullptr;
        }
        for (const runtime::OperationPtr& op : catalog.configOperations()) {
            if (fmt::format("config:{}:{}", op->config.workspace, op->config.name) == id) {
                return op.get();
            }
        }
        return nullptr;
    }

    static OperationView viewOf(const runtime::Operation& op) {
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

    /// The summary of admin operation `r`; `latest` is its newest version when known.
    OperationView viewOf(const store::OperationRecord& r,
                         const std::optional<store::OperationVersion>& latest) const {
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

    std::optional<store::OperationVersion> latestOf(const std::string& id) const {
        auto versions = catalog.store().listOperationVersions(id, 1);
        if (!versions || versions->empty()) {
            return std::nullopt;
        }
        return versions->front();
    }

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

    /// The admin operation `id`, or the error to answer (read_only for a config operation).
    std::optional<ApiError> adminRecord(std::string_view id, store::OperationRecord& record) const {
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
        record = std::move(*r);
        return std::nullopt;
    }

    /// The `config` member of a request body, or an error.
    static const rapidjson::Value* operationOf(const json::Document& body,
                                               std::optional<ApiError>& error) {
        auto it = body.FindMember("config");
        if (it == body.MemberEnd() || !it->value.IsObject()) {
            error = invalid("the body's \"config\" must be the operation object",
                            {{"", "expected the operation object in \"config\""}});
            return nullptr;
        }
        return &it->value;
    }

    static std::optional<ApiError> checkedError(OperationCatalog::Checked& checked) {
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
        auto created = catalog.store().createOperation(record);
        if (!created) {
            ApiError e = storeError(created.error());
            if (e.status == 409) {
                e.fields.push_back({"name", "an operation of this name exists already"});
            }
            return e;
        }
        store::OperationVersionDraft draft;
        draft.config_json = json::toJsonText(*op);
        draft.created_by = "admin";
        draft.comment = json::stringMember(doc, "comment");
        draft.expected_latest = 0;
        auto version = catalog.store().addOperationVersion(created->id, draft);
        if (!version) {
            // No operation without a version: it would hold the name and take no edit.
            if (auto undone = catalog.store().deleteOperation(created->id); !undone) {
                log::warn("admin: cannot remove operation {} after its first version failed: {}",
                          created->id, undone.error().message);
            }
            return storeError(version.error());
        }
        audit(c.workspace, c.name, "operation.create", "ok",
              R"({"id":)" + jsonString(created->id) + R"(,"version":1})");
        status = 201;
        out = operationAndVersion(*created, *version);
        return std::nullopt;
    }

    std::string operationAndVersion(const store::OperationRecord& r,
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

    std::optional<ApiError> getOperation(const std::string& id, std::string& out) const {
        rapidjson::StringBuffer b;
        Writer w(b);
        if (const runtime::Operation* op = configOperation(id)) {
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
        auto r = catalog.store().getOperation(id);
        if (!r) {
            return storeError(r.error());
        }
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
        store::OperationVersionDraft draft;
        draft.config_json = json::toJsonText(*op);
        draft.created_by = "admin";
        draft.comment = json::stringMember(doc, "comment");
        draft.expected_latest = base->value.GetInt64();
        auto version = catalog.store().addOperationVersion(id, draft);
        if (!version) {
            ApiError e = storeError(version.error());
            if (e.status == 409) {
                if (auto latest = latestOf(id)) {
                    e.latest_version = latest->version;
                    e.message = fmt::format(
                        "version {} was saved since you loaded version {}; reload it, apply "
                        "your change again and save",
                        latest->version, base->value.GetInt64());
                }
            }
            return e;
        }
        audit(record.workspace_id, record.name, "operation.update", "ok",
              fmt::format(R"({{"id":{},"version":{}}})", jsonString(id), version->version));
        status = 201;
        out = operationAndVersion(record, *version);
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

    std::optional<ApiError> listVersions(const std::string& id, const Params& params,
                                         std::string& out) const {
        if (configOperation(id) != nullptr) {
            return ApiError{409, "read_only", "a config file operation has no versions",
                            {},  {},          {}};
        }
        std::optional<ApiError> error;
        const int limit = limitParam(params, error);
        if (error) {
            return error;
        }
        auto versions = catalog.store().listOperationVersions(id, limit);
        if (!versions) {
            return storeError(versions.error());
        }
        out = wrapped("versions", [&](Writer& w) { writeArray(w, *versions, writeVersion); });
        return std::nullopt;
    }

    static std::optional<std::int64_t> versionNumber(std::string_view text) {
        if (text.empty() || text.size() > 18 || !std::all_of(text.begin(), text.end(), [](char c) {
                return std::isdigit(static_cast<unsigned char>(c)) != 0;
            })) {
            return std::nullopt;
        }
        return std::stoll(std::string(text));
    }

    std::optional<ApiError> getVersion(const std::string& id, const std::string& number,
                                       std::string& out) const {
        const auto n = versionNumber(number);
        if (!n) {
            return badRequest("a version is a positive integer, got \"" + number.substr(0, 40) +
                              "\"");
        }
        auto v = catalog.store().getOperationVersion(id, *n);
        if (!v) {
            return storeError(v.error());
        }
        out = wrapped("version", [&](Writer& w) { writeVersion(w, *v); });
        return std::nullopt;
    }

    std::optional<ApiError> diff(const std::string& id, const Params& params,
                                 std::string& out) const {
        std::optional<ApiError> error;
        const auto from = intParam(params, "from", error);
        const auto to = intParam(params, "to", error);
        if (error) {
            return error;
        }
        if (!from || !to) {
            return badRequest("from and to (version numbers) are required");
        }
        auto a = catalog.store().getOperationVersion(id, *from);
        if (!a) {
            return storeError(a.error());
        }
        auto z = catalog.store().getOperationVersion(id, *to);
        if (!z) {
            return storeError(z.error());
        }
        json::Document da;
        json::Document dz;
        if (!json::parseJson(a->config_json, da, "").ok() ||
            !json::parseJson(z->config_json, dz, "").ok()) {
            return ApiError{500, "internal", "a stored version is not valid JSON", {}, {}, {}};
        }
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "from");
        w.Int64(*from);
        key(w, "to");
        w.Int64(*to);
        key(w, "changes");
        w.StartArray();
        for (const JsonChange& c : diffJson(da, dz)) {
            w.StartObject();
            key(w, "path");
            str(w, c.path);
            key(w, "change");
            str(w, changeName(c.kind));
            if (c.from != nullptr) {
                key(w, "from");
                c.from->Accept(w);
            }
            if (c.to != nullptr) {
                key(w, "to");
                c.to->Accept(w);
            }
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
        out = text(b);
        return std::nullopt;
    }

    std::optional<ApiError> publish(HTTPServerRequest& request, const std::string& id,
                                    bool rollback, std::string& out) {
        store::OperationRecord record;
        if (auto e = adminRecord(id, record)) {
            return e;
        }
        json::Document doc;
        if (auto e = body(request, doc)) {
            return e;
        }
        std::optional<std::int64_t> version;
        if (auto v = std::as_const(doc).FindMember("version");
            v != std::as_const(doc).MemberEnd()) {
            if (!v->value.IsInt64() || v->value.GetInt64() < 1) {
                return badRequest("version must be a positive integer");
            }
            version = v->value.GetInt64();
        }
        std::optional<std::optional<std::int64_t>> expected;
        if (auto x = std::as_const(doc).FindMember("expected_published");
            x != std::as_const(doc).MemberEnd()) {
            if (x->value.IsNull()) {
                expected = std::optional<std::int64_t>();
            } else if (x->value.IsInt64()) {
                expected = x->value.GetInt64();
            } else {
                return badRequest("expected_published must be a version number or null");
            }
        }
        if (rollback) {
            auto history = catalog.store().listOperationVersions(id, store::kMaxListLimit);
            if (!history) {
                return storeError(history.error());
            }
            if (version) {
                const auto it = std::find_if(
                    history->begin(), history->end(),
                    [&](const store::OperationVersion& v) { return v.version == *version; });
                if (it == history->end()) {
                    return notFound(fmt::format("operation {} has no version {}", id, *version));
                }
                if (it->state == store::VersionState::draft) {
                    return ApiError{409,
                                    "conflict",
                                    fmt::format("version {} was never published, so it is no "
                                                "rollback; publish it instead",
                                                *version),
                                    {},
                                    {},
                                    record.published_version};
                }
            } else {
                // The newest archived version below the published one (else the newest).
                for (const store::OperationVersion& v : *history) {
                    if (v.state == store::VersionState::archived &&
                        (!record.published_version || v.version < *record.published_version)) {
                        version = v.version;
                        break;
                    }
                }
                if (!version) {
                    return ApiError{409, "conflict", "no earlier published version to roll back to",
                                    {},  {},         record.published_version};
                }
            }
            if (!expected) {
                expected = record.published_version;
            }
        } else if (!version) {
            return badRequest("version (the version number to publish) is required");
        }
        std::vector<std::string> tools;
        std::optional<ApiError> failed = catalog.publish(id, *version, expected, tools);
        audit(record.workspace_id, record.name,
              rollback ? "operation.rollback" : "operation.publish",
              failed ? (failed->status == 409 ? "conflict" : "error") : "ok",
              fmt::format(R"({{"id":{},"version":{}}})", jsonString(id), *version));
        if (failed) {
            return failed;
        }
        auto after = catalog.store().getOperation(id);
        if (!after) {
            return storeError(after.error());
        }
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "operation");
        writeView(w, viewOf(*after, latestOf(id)));
        key(w, "tools");
        w.StartArray();
        for (const std::string& t : tools) {
            str(w, t);
        }
        w.EndArray();
        w.EndObject();
        out = text(b);
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

    std::optional<ApiError> testRun(HTTPServerRequest& request, std::string& out) {
        json::Document doc;
        if (auto e = body(request, doc)) {
            return e;
        }
        std::string operationId = json::stringMember(doc, "operation_id");
        std::string configText;
        if (auto c = std::as_const(doc).FindMember("config"); c != std::as_const(doc).MemberEnd()) {
            if (!c->value.IsObject()) {
                return invalid("the body's \"config\" must be the operation object",
                               {{"", "expected the operation object in \"config\""}});
            }
            configText = json::toJsonText(c->value);
        } else if (!operationId.empty()) {
            if (const runtime::Operation* op = configOperation(operationId)) {
                configText = op->config.source_json;
            } else {
                std::optional<store::OperationVersion> v;
                if (auto n = std::as_const(doc).FindMember("version");
                    n != std::as_const(doc).MemberEnd()) {
                    if (!n->value.IsInt64()) {
                        return badRequest("version must be a version number");
                    }
                    auto got =
                        catalog.store().getOperationVersion(operationId, n->value.GetInt64());
                    if (!got) {
                        return storeError(got.error());
                    }
                    v = std::move(*got);
                } else {
                    v = latestOf(operationId);
                    if (!v) {
                        return notFound("no operation " + operationId.substr(0, 80));
                    }
                }
                configText = v->config_json;
            }
        } else {
            return badRequest("config (an operation) or operation_id is required");
        }
        std::string arguments = "{}";
        if (auto a = std::as_const(doc).FindMember("arguments");
            a != std::as_const(doc).MemberEnd()) {
            if (!a->value.IsObject()) {
                return badRequest("arguments must be an object (the tool input), got " +
                                  json::describeValue(a->value));
            }
            arguments = json::toJsonText(a->value);
        }
        TestRunRequest run;
        run.arguments_json = arguments;
        run.timeout = std::chrono::milliseconds(config.admin.test_run_timeout_ms);
        run.stopping = &stopping;
        if (auto p = std::as_const(doc).FindMember("polls"); p != std::as_const(doc).MemberEnd()) {
            if (!p->value.IsInt() || p->value.GetInt() < 1 || p->value.GetInt() > 20) {
                return badRequest("polls must be 1 to 20");
            }
            run.polls = p->value.GetInt();
        }
        // The check that a test run asks for: the operation compiles. Its name may be taken (a
        // draft of a published operation, a copy of a config one): nothing is published.
        OperationCatalog::Checked checked =
            catalog.checkText(configText, operationId, OperationCatalog::NameCheck::ignored);
        if (auto e = checkedError(checked)) {
            return e;
        }
        run.operation = checked.operation;
        std::int64_t interval = checked.operation->config.execution.poll_interval_ms;
        if (auto i = std::as_const(doc).FindMember("poll_interval_ms");
            i != std::as_const(doc).MemberEnd()) {
            if (!i->value.IsInt64() || i->value.GetInt64() < kMinTestPollInterval.count() ||
                i->value.GetInt64() > 10'000) {
                return badRequest(fmt::format("poll_interval_ms must be {} to 10000",
                                              kMinTestPollInterval.count()));
            }
            interval = i->value.GetInt64();
        }
        run.poll_interval = std::chrono::milliseconds(std::min<std::int64_t>(interval, 10'000));
        if (test_runs.fetch_add(1) >= config.admin.max_test_runs) {
            test_runs.fetch_sub(1);
            return ApiError{429,
                            "busy",
                            fmt::format("{} test runs are running (admin.max_test_runs); try again "
                                        "when one ends",
                                        config.admin.max_test_runs),
                            {},
                            {},
                            {}};
        }
        struct Release {
            std::atomic<int>& n;
            ~Release() { n.fetch_sub(1); }
        } release{test_runs};
        out = runTest(catalog.runner(), run);
        json::Document answer;
        std::string outcome = "ok";
        if (json::parseJson(out, answer, "").ok() && answer.IsObject() &&
            answer.HasMember("outcome") && answer["outcome"].IsString()) {
            outcome = answer["outcome"].GetString();
        }
        audit(run.operation->config.workspace, run.operation->config.name, "test_run", outcome,
              fmt::format(R"({{"id":{},"mode":{}}})", jsonString(operationId),
                          jsonString(config::toString(run.operation->config.execution.mode))));
        return std::nullopt;
    }

    // ----- plugins, meta, auth profiles ------------------------------------------------------

    std::string plugins() const {
        const plugins::PluginRegistry& registry = catalog.plugins();
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "plugins");
        w.StartArray();
        for (const plugins::PluginInfo& info : registry.plugins()) {
            w.StartObject();
            key(w, "name");
            str(w, info.name);
            key(w, "version");
            str(w, info.version);
            key(w, "description");
            str(w, info.description);
            key(w, "abi");
            str(w, fmt::format("{}.{}", info.abi_major, info.abi_minor));
            key(w, "path");
            str(w, info.path);
            key(w, "status");
            str(w, plugins::pluginStatusName(info.status));
            key(w, "reason");
            str(w, info.reason);
            key(w, "adapters");
            w.StartArray();
            for (const std::string& name : info.adapters) {
                if (const plugins::AdapterHandle* a = registry.adapter(name)) {
                    writeAdapter(w, *a);
                }
            }
            w.EndArray();
            key(w, "aggregators");
            w.StartArray();
            for (const std::string& name : info.aggregators) {
                const plugins::AggregatorHandle* a = registry.aggregator(name);
                if (a == nullptr) {
                    continue;
                }
                w.StartObject();
                key(w, "name");
                str(w, a->name());
                key(w, "version");
                str(w, a->version());
                key(w, "description");
                str(w, a->description());
                key(w, "config_schema");
                raw(w, a->configSchemaJson());
                key(w, "output_schema");
                raw(w, a->outputSchemaJson());
                w.EndObject();
            }
            w.EndArray();
            w.EndObject();
        }
        w.EndArray();
        key(w, "all_loaded");
        w.Bool(registry.allLoaded());
        w.EndObject();
        return text(b);
    }

    static void writeAdapter(Writer& w, const plugins::AdapterHandle& a) {
        w.StartObject();
        key(w, "name");
        str(w, a.name());
        key(w, "version");
        str(w, a.version());
        key(w, "description");
        str(w, a.description());
        key(w, "modes");
        writeList(w, modeNames(a.modes()));
        key(w, "capabilities");
        std::string caps;
        for (const auto& [bit, name] : {std::pair{CRANK_CAP_UNARY, "unary"},
                                        std::pair{CRANK_CAP_SERVER_STREAM, "server_stream"},
                                        std::pair{CRANK_CAP_FEDERATION, "federation"}}) {
            if (a.hasCapability(bit)) {
                caps += caps.empty() ? "" : ",";
                caps += name;
            }
        }
        writeList(w, caps);
        key(w, "config_schema");
        raw(w, a.configSchemaJson());
        w.EndObject();
    }

    std::string meta() const {
        using D = config::ExecutionDefaults;
        const plugins::PluginRegistry& registry = catalog.plugins();
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "version");
        str(w, crank_version);
        key(w, "execution_defaults");
        w.StartObject();
        for (const auto& [name, value] :
             {std::pair<const char*, std::int64_t>{"window_duration_ms", D::window_duration_ms},
              {"poll_interval_ms", D::poll_interval_ms},
              {"upstream_timeout_ms", D::upstream_timeout_ms},
              {"idle_timeout_ms", D::idle_timeout_ms},
              {"max_session_lifetime_ms", D::max_session_lifetime_ms},
              {"max_items", D::max_items},
              {"max_bytes", D::max_bytes},
              {"max_field_length", D::max_field_length},
              {"max_result_bytes", D::max_result_bytes},
              {"result_ttl_ms", D::result_ttl_ms}}) {
            key(w, name);
            w.Int64(value);
        }
        key(w, "aggregation_mode");
        str(w, D::aggregation_mode);
        key(w, "transport_behavior");
        str(w, "request_response");
        key(w, "overflow_policy");
        str(w, "pause");
        key(w, "sampling_rate");
        w.Double(1.0);
        key(w, "truncate_item_fields");
        w.Bool(false);
        key(w, "drop_duplicates");
        w.Bool(false);
        w.EndObject();
        key(w, "modes");
        writeList(w, "unary,window,session,async_job");
        key(w, "aggregation_modes");
        w.StartArray();
        for (const std::string& name : registry.aggregatorNames()) {
            str(w, name);
        }
        w.EndArray();
        key(w, "protocols");
        w.StartArray();
        for (const std::string& name : registry.adapterNames()) {
            if (const plugins::AdapterHandle* a = registry.adapter(name)) {
                writeAdapter(w, *a);
            }
        }
        w.EndArray();
        key(w, "workspaces");
        w.StartArray();
        for (const config::Workspace& ws : config.auth.workspaces) {
            w.StartObject();
            key(w, "id");
            str(w, ws.id);
            key(w, "description");
            str(w, ws.description);
            key(w, "limits");
            w.StartObject();
            key(w, "max_concurrent_calls");
            w.Int64(ws.limits.max_concurrent_calls);
            key(w, "max_sessions");
            w.Int64(ws.limits.max_sessions);
            key(w, "max_jobs");
            w.Int64(ws.limits.max_jobs);
            w.EndObject();
            w.EndObject();
        }
        w.EndArray();
        key(w, "auth_profiles");
        w.StartArray();
        for (const auto& [name, profile] : config.auth_profiles) {
            str(w, name);
        }
        w.EndArray();
        w.EndObject();
        return text(b);
    }

    std::string authProfiles() const {
        rapidjson::StringBuffer b;
        Writer w(b);
        const auto secret = [&](const char* name, const std::optional<config::Secret>& s) {
            key(w, name);
            w.StartObject();
            key(w, "set");
            w.Bool(s.has_value() && !s->empty());
            if (s) {
                key(w, "source");
                str(w, s->source());  // where it comes from; never its value
            }
            w.EndObject();
        };
        w.StartObject();
        key(w, "auth_profiles");
        w.StartArray();
        for (const auto& [name, p] : config.auth_profiles) {
            using Type = config::AuthProfile::Type;
            w.StartObject();
            key(w, "name");
            str(w, name);
            key(w, "type");
            str(w, p.type == Type::bearer    ? "bearer"
                   : p.type == Type::basic   ? "basic"
                   : p.type == Type::api_key ? "api_key"
                                             : "none");
            key(w, "username");
            str(w, p.username);
            key(w, "placement");
            str(w, p.placement == config::AuthProfile::Placement::query ? "query" : "header");
            key(w, "key_name");
            str(w, p.key_name);
            key(w, "headers");
            w.StartObject();
            for (const auto& [h, v] : p.headers) {
                key(w, h);
                str(w, v);
            }
            w.EndObject();
            key(w, "secrets");
            w.StartObject();
            if (p.type == Type::bearer) {
                secret("token", p.token);
            } else if (p.type == Type::basic) {
                secret("password", p.password);
            } else if (p.type == Type::api_key) {
                secret("key", p.key);
            }
            w.EndObject();
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
        return text(b);
    }

    // ----- sessions, jobs, audit -------------------------------------------------------------

    template <typename Status, typename Parse>
    static std::optional<ApiError> statuses(const Params& params, Parse parse,
                                            std::vector<Status>& out) {
        const auto list = strParam(params, "status");
        if (!list) {
            return std::nullopt;
        }
        std::string_view rest = *list;
        while (!rest.empty()) {
            const std::size_t comma = std::min(rest.find(','), rest.size());
            const std::string_view name = rest.substr(0, comma);
            const auto status = parse(name);
            if (!status) {
                return badRequest("unknown status \"" + std::string(name.substr(0, 40)) + "\"");
            }
            out.push_back(*status);
            rest.remove_prefix(std::min(comma + 1, rest.size()));
        }
        return std::nullopt;
    }

    /// GET /sessions and GET /jobs: the filters they share (store::SessionFilter and
    /// store::JobFilter have the same members), the rows listed as `name`.
    template <typename Filter, typename Parse, typename List, typename Write>
    static std::optional<ApiError> listRows(const Params& params, Parse parse, List list,
                                            Write write, std::string_view name, std::string& out) {
        Filter f;
        f.workspace_id = strParam(params, "workspace");
        f.agent_id = strParam(params, "agent");
        f.operation_id = strParam(params, "operation");
        std::optional<ApiError> error;
        f.limit = limitParam(params, error);
        if (error) {
            return error;
        }
        if (auto e = statuses(params, parse, f.statuses)) {
            return e;
        }
        auto rows = list(f);
        if (!rows) {
            return storeError(rows.error());
        }
        out = wrapped(name, [&](Writer& w) { writeArray(w, *rows, write); });
        return std::nullopt;
    }

    std::optional<ApiError> listSessions(const Params& params, std::string& out) const {
        return listRows<store::SessionFilter>(
            params, store::parseSessionStatus,
            [this](const store::SessionFilter& f) { return catalog.store().listSessions(f); },
            writeSession, "sessions", out);
    }

    std::optional<ApiError> getSession(const std::string& id, std::string& out) const {
        auto s = catalog.store().getSession(id);
        if (!s) {
            return storeError(s.error());
        }
        out = wrapped("session", [&](Writer& w) { writeSession(w, *s); });
        return std::nullopt;
    }

    std::optional<ApiError> stopSession(const std::string& id, std::string& out) {
        auto s = catalog.store().getSession(id);
        if (!s) {
            return storeError(s.error());
        }
        if (store::isTerminal(s->status)) {
            return ApiError{409,
                            "conflict",
                            fmt::format("the session has ended already ({})",
                                        store::sessionStatusName(s->status)),
                            {},
                            {},
                            {}};
        }
        auto stopped = catalog.runner().stopSessionById(id);
        if (!stopped) {
            return ApiError{
                409,
                "conflict",
                "this node does not hold the session" +
                    (s->owner_node ? " (it runs on node " + *s->owner_node + ")" : std::string()) +
                    ": " + stopped.error().message,
                {},
                {},
                {}};
        }
        audit(s->workspace_id, s->operation_id, "session.stop", "ok",
              R"({"session_id":)" + jsonString(id) + R"(,"by":"admin"})");
        return getSession(id, out);
    }

    std::optional<ApiError> listJobs(const Params& params, std::string& out) const {
        return listRows<store::JobFilter>(
            params, store::parseJobStatus,
            [this](const store::JobFilter& f) { return catalog.store().listJobs(f); }, writeJob,
            "jobs", out);
    }

    std::optional<ApiError> getJob(const std::string& id, std::string& out) const {
        auto j = catalog.store().getJob(id);
        if (!j) {
            return storeError(j.error());
        }
        out = wrapped("job", [&](Writer& w) { writeJob(w, *j); });
        return std::nullopt;
    }

    std::optional<ApiError> cancelJob(const std::string& id, std::string& out) {
        auto cancelled = catalog.runner().cancelJobById(id);
        if (!cancelled) {
            return storeError(cancelled.error());
        }
        out = wrapped("job", [&](Writer& w) { writeJob(w, *cancelled); });
        return std::nullopt;
    }

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

AdminApi::AdminApi(OperationCatalog& catalog, const config::Config& config,
                   std::string ui_directory, std::string version)
    : impl_(std::make_unique<Impl>(catalog, config, std::move(ui_directory), std::move(version))) {}

AdminApi::~AdminApi() = default;

void AdminApi::stop() {
    impl_->stopping.store(true);
}

void AdminApi::addRoutes(http::Router& router) {
    Impl* impl = impl_.get();
    router.addPrefix(std::string(kApiPrefix),
                     [impl](HTTPServerRequest& request, HTTPServerResponse& response) {
                         impl->handle(request, response);
                     });
    if (impl->config.admin.ui) {
        const auto files = [impl](HTTPServerRequest& request, HTTPServerResponse& response) {
            impl->files.serve(request, response);
        };
        router.add("/ui", files);
        router.addPrefix("/ui/", files);
    }
}

}  // namespace crank::admin
