#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "admin/api_json.h"
#include "admin/api_request.h"
#include "admin/resources.h"
#include "runtime/operation_runner.h"
#include "util/json_string.h"

namespace crank::admin {
namespace {

using api::badRequest;
using api::key;
using api::limitParam;
using api::optInt;
using api::optRaw;
using api::optStr;
using api::Params;
using api::raw;
using api::str;
using api::strParam;
using api::wrapped;
using api::writeArray;
using api::Writer;

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

/// The sessions and jobs the store holds: list, read, stop a session, cancel a job
/// (docs/admin-api.md, "Sessions and jobs").
class RuntimeResource final : public AdminResource {
public:
    using AdminResource::AdminResource;

    void addRoutes(ApiRouter& router) {
        router.add("GET", {"sessions"},
                   [this](ApiCall& c) { return listSessions(c.params, c.out); });
        router.add("GET", {"sessions", "{}"},
                   [this](ApiCall& c) { return getSession(c.path[1], c.out); });
        router.add("POST", {"sessions", "{}", "stop"},
                   [this](ApiCall& c) { return stopSession(c.path[1], c.out); });
        router.add("GET", {"jobs"}, [this](ApiCall& c) { return listJobs(c.params, c.out); });
        router.add("GET", {"jobs", "{}"}, [this](ApiCall& c) { return getJob(c.path[1], c.out); });
        router.add("POST", {"jobs", "{}", "cancel"},
                   [this](ApiCall& c) { return cancelJob(c.path[1], c.out); });
    }

private:
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
};

}  // namespace

std::unique_ptr<AdminResource> addRuntimeRoutes(AdminContext& ctx, ApiRouter& router) {
    auto resource = std::make_unique<RuntimeResource>(ctx);
    resource->addRoutes(router);
    return resource;
}

}  // namespace crank::admin
