// Agents and workspaces (docs/admin-api.md, "Agents"): the config file's, read-only, and the
// admin API's (AgentCatalog): create one (its first key shown once), add and revoke keys, set
// its limits, delete it. Keys are never shown again: only their ids and first characters.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>

#include "admin/agent_catalog.h"
#include "admin/api_json.h"
#include "admin/api_request.h"
#include "admin/resources.h"
#include "json/json_members.h"
#include "util/json_string.h"

namespace crank::admin {
namespace {

using api::key;
using api::str;
using api::Writer;

void writeLimits(Writer& w, const config::Limits& l) {
    w.StartObject();
    key(w, "max_concurrent_calls");
    w.Int64(l.max_concurrent_calls);
    key(w, "max_sessions");
    w.Int64(l.max_sessions);
    key(w, "max_jobs");
    w.Int64(l.max_jobs);
    key(w, "max_mcp_sessions");
    w.Int64(l.max_mcp_sessions);
    key(w, "max_streams");
    w.Int64(l.max_streams);
    key(w, "rate");
    if (l.rate) {
        w.StartObject();
        key(w, "calls_per_second");
        w.Double(l.rate->calls_per_second);
        key(w, "burst");
        w.Int64(l.rate->burst);
        w.EndObject();
    } else {
        w.Null();
    }
    w.EndObject();
}

void writeKey(Writer& w, const store::AgentKeyRecord& k, const std::string* secret) {
    w.StartObject();
    key(w, "id");
    str(w, k.id);
    key(w, "prefix");
    str(w, k.prefix);
    key(w, "created_at");
    w.Int64(k.created_at);
    key(w, "revoked_at");
    api::optInt(w, k.revoked_at);
    if (secret != nullptr) {
        key(w, "secret");  // once: only its digest is kept
        str(w, *secret);
    }
    w.EndObject();
}

class AgentsResource final : public AdminResource {
public:
    using AdminResource::AdminResource;

    void addRoutes(ApiRouter& router) {
        router.add("GET", {"workspaces"}, [this](ApiCall& c) { return workspaces(c); });
        router.add("GET", {"agents"}, [this](ApiCall& c) { return list(c); });
        router.add("POST", {"agents"}, [this](ApiCall& c) { return create(c); });
        router.add("GET", {"agents", "{}"}, [this](ApiCall& c) { return get(c); });
        router.add("DELETE", {"agents", "{}"}, [this](ApiCall& c) { return remove(c); });
        router.add("PUT", {"agents", "{}", "limits"}, [this](ApiCall& c) { return limits(c); });
        router.add("POST", {"agents", "{}", "keys"}, [this](ApiCall& c) { return addKey(c); });
        router.add("DELETE", {"agents", "{}", "keys", "{}"},
                   [this](ApiCall& c) { return revokeKey(c); });
    }

private:
    AgentCatalog* agents() const { return context().agent_catalog; }

    /// The config file's agents now (a reload changes them).
    std::vector<config::Agent> fileAgents() const {
        return agents() != nullptr ? agents()->fileAgents() : config.auth.agents;
    }

    static ApiError noCatalog() {
        return ApiError{503, "unavailable", "agents cannot be managed here", {}, {}, {}};
    }

    std::optional<ApiError> workspaces(ApiCall& c) const {
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "workspaces");
        w.StartArray();
        for (const config::Workspace& ws : config.auth.workspaces) {
            w.StartObject();
            key(w, "id");
            str(w, ws.id);
            key(w, "description");
            str(w, ws.description);
            key(w, "read_only");
            w.Bool(true);
            key(w, "limits");
            writeLimits(w, ws.limits);
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
        c.out = api::text(b);
        return std::nullopt;
    }

    /// An agent of the config file.
    static void writeFileAgent(Writer& w, const config::Agent& a) {
        w.StartObject();
        key(w, "id");
        str(w, a.id);
        key(w, "workspace");
        str(w, a.workspace);
        key(w, "source");
        str(w, "config");
        key(w, "read_only");
        w.Bool(true);
        key(w, "limits");
        writeLimits(w, a.limits);
        w.EndObject();
    }

    /// An agent of the API, with the number of its live keys.
    static void writeApiAgent(Writer& w, const store::AgentRecord& a, std::int64_t live_keys) {
        w.StartObject();
        key(w, "id");
        str(w, a.id);
        key(w, "workspace");
        str(w, a.workspace_id);
        key(w, "source");
        str(w, "admin");
        key(w, "read_only");
        w.Bool(false);
        key(w, "limits");
        api::raw(w, a.limits_json);
        key(w, "keys");
        w.Int64(live_keys);
        key(w, "created_at");
        w.Int64(a.created_at);
        key(w, "deleted_at");
        api::optInt(w, a.deleted_at);
        w.EndObject();
    }

    std::int64_t liveKeys(const std::string& id) const {
        auto keys = agents()->store().listAgentKeys(id, false, store::kMaxListLimit);
        return keys ? static_cast<std::int64_t>(keys->size()) : 0;
    }

    std::optional<ApiError> list(ApiCall& c) const {
        const auto deleted = api::strParam(c.params, "include_deleted");
        if (deleted && *deleted != "true" && *deleted != "false") {
            return api::badRequest("include_deleted must be true or false");
        }
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "agents");
        w.StartArray();
        for (const config::Agent& a : fileAgents()) {
            writeFileAgent(w, a);
        }
        if (agents() != nullptr) {
            auto rows = agents()->store().listAgents(deleted == "true", store::kMaxListLimit);
            if (!rows) {
                return storeError(rows.error());
            }
            for (const store::AgentRecord& a : *rows) {
                writeApiAgent(w, a, a.deleted() ? 0 : liveKeys(a.id));
            }
        }
        w.EndArray();
        w.EndObject();
        c.out = api::text(b);
        return std::nullopt;
    }

    std::optional<ApiError> create(ApiCall& c) {
        if (agents() == nullptr) {
            return noCatalog();
        }
        json::Document doc;
        if (auto e = body(c.request, doc)) {
            return e;
        }
        const std::string id = json::stringMember(doc, "id");
        std::string workspace = json::stringMember(doc, "workspace");
        if (workspace.empty()) {
            workspace = "default";
        }
        const auto limits = std::as_const(doc).FindMember("limits");
        const rapidjson::Value* given =
            limits == std::as_const(doc).MemberEnd() ? nullptr : &limits->value;
        store::AgentRecord agent;
        AgentCatalog::NewKey fresh;
        std::optional<ApiError> failed = agents()->create(id, workspace, given, agent, fresh);
        audit(workspace, "", "agent.create", failed ? "error" : "ok",
              R"({"agent":)" + jsonString(id.substr(0, 64)) +
                  (failed ? std::string() : R"(,"key":)" + jsonString(fresh.record.id)) + "}");
        if (failed) {
            return failed;
        }
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "agent");
        writeApiAgent(w, agent, 1);
        key(w, "key");
        writeKey(w, fresh.record, &fresh.secret);
        w.EndObject();
        c.status = 201;
        c.out = api::text(b);
        return std::nullopt;
    }

    std::optional<ApiError> get(ApiCall& c) const {
        const std::string& id = c.path[1];
        for (const config::Agent& a : fileAgents()) {
            if (a.id == id) {
                c.out = api::wrapped("agent", [&](Writer& w) { writeFileAgent(w, a); });
                return std::nullopt;
            }
        }
        if (agents() == nullptr) {
            return api::notFound("no agent \"" + id.substr(0, 64) + "\"");
        }
        store::AgentRecord agent;
        if (auto e = agents()->find(id, agent)) {
            return e;
        }
        auto keys = agents()->store().listAgentKeys(id, true, store::kMaxListLimit);
        if (!keys) {
            return storeError(keys.error());
        }
        std::int64_t live = 0;
        for (const store::AgentKeyRecord& k : *keys) {
            live += k.revoked() ? 0 : 1;
        }
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "agent");
        writeApiAgent(w, agent, live);
        key(w, "keys");
        w.StartArray();
        for (const store::AgentKeyRecord& k : *keys) {
            writeKey(w, k, nullptr);
        }
        w.EndArray();
        w.EndObject();
        c.out = api::text(b);
        return std::nullopt;
    }

    std::optional<ApiError> limits(ApiCall& c) {
        if (agents() == nullptr) {
            return noCatalog();
        }
        json::Document doc;
        if (auto e = body(c.request, doc)) {
            return e;
        }
        const auto limits = std::as_const(doc).FindMember("limits");
        if (limits == std::as_const(doc).MemberEnd()) {
            return api::invalid("the body needs the agent's \"limits\" object",
                                {{"limits", "expected an object"}});
        }
        const std::string& id = c.path[1];
        store::AgentRecord agent;
        std::optional<ApiError> failed = agents()->setLimits(id, limits->value);
        if (!failed) {
            failed = agents()->find(id, agent);
        }
        audit(agent.workspace_id, "", "agent.update", failed ? "error" : "ok",
              R"({"agent":)" + jsonString(id.substr(0, 64)) + "}");
        if (failed) {
            return failed;
        }
        c.out = api::wrapped("agent", [&](Writer& w) { writeApiAgent(w, agent, liveKeys(id)); });
        return std::nullopt;
    }

    std::optional<ApiError> addKey(ApiCall& c) {
        if (agents() == nullptr) {
            return noCatalog();
        }
        const std::string& id = c.path[1];
        AgentCatalog::NewKey fresh;
        std::optional<ApiError> failed = agents()->addKey(id, fresh);
        audit("", "", "agent.key_create", failed ? "error" : "ok",
              R"({"agent":)" + jsonString(id.substr(0, 64)) +
                  (failed ? std::string() : R"(,"key":)" + jsonString(fresh.record.id)) + "}");
        if (failed) {
            return failed;
        }
        c.status = 201;
        c.out = api::wrapped("key", [&](Writer& w) { writeKey(w, fresh.record, &fresh.secret); });
        return std::nullopt;
    }

    std::optional<ApiError> revokeKey(ApiCall& c) {
        if (agents() == nullptr) {
            return noCatalog();
        }
        const std::string& id = c.path[1];
        store::AgentKeyRecord revoked;
        std::optional<ApiError> failed = agents()->revokeKey(id, c.path[3], revoked);
        audit("", "", "agent.key_revoke", failed ? "error" : "ok",
              R"({"agent":)" + jsonString(id.substr(0, 64)) + R"(,"key":)" +
                  jsonString(c.path[3].substr(0, 64)) + "}");
        if (failed) {
            return failed;
        }
        c.out = api::wrapped("key", [&](Writer& w) { writeKey(w, revoked, nullptr); });
        return std::nullopt;
    }

    std::optional<ApiError> remove(ApiCall& c) {
        if (agents() == nullptr) {
            return noCatalog();
        }
        const std::string& id = c.path[1];
        std::optional<ApiError> failed = agents()->remove(id);
        store::AgentRecord agent;
        if (!failed) {
            failed = agents()->find(id, agent);
        }
        audit(agent.workspace_id, "", "agent.delete", failed ? "error" : "ok",
              R"({"agent":)" + jsonString(id.substr(0, 64)) + "}");
        if (failed) {
            return failed;
        }
        c.out = api::wrapped("agent", [&](Writer& w) { writeApiAgent(w, agent, 0); });
        return std::nullopt;
    }
};

}  // namespace

std::unique_ptr<AdminResource> addAgentsRoutes(AdminContext& ctx, ApiRouter& router) {
    auto resource = std::make_unique<AgentsResource>(ctx);
    resource->addRoutes(router);
    return resource;
}

}  // namespace crank::admin
