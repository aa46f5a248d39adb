#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "admin/api_json.h"
#include "admin/api_request.h"
#include "admin/resources.h"
#include "admin/row_versions.h"
#include "admin/upstream_catalog.h"
#include "admin/upstream_views.h"
#include "json/json_members.h"
#include "json/json_text.h"
#include "util/json_string.h"

namespace crank::admin {
namespace {

/// The longest grace a stop may give calls in flight (`grace_ms`).
constexpr std::int64_t kMaxStopGraceMs = 300'000;

/// The federated upstreams as they are now: for each, where it comes from, its state, its
/// counts, the names it could not publish and the tools its policy left out, its last error and
/// its connection; a test connection of its own; stop, start and restart (docs/admin-api.md,
/// "Upstreams").
class UpstreamsResource final : public AdminResource {
public:
    using AdminResource::AdminResource;

    void addRoutes(ApiRouter& router) {
        router.add("GET", {"upstreams"}, [this](ApiCall& c) -> std::optional<ApiError> {
            const UpstreamDirectory* upstreams = context().upstreams;
            std::string definitions;
            if (UpstreamCatalog* managed = context().upstream_catalog) {
                store::OperationFilter filter;
                filter.kind = store::OperationKind::upstream;
                filter.limit = store::kMaxListLimit;
                auto rows = managed->store().listOperations(filter);
                if (!rows) {
                    return storeError(rows.error());
                }
                for (const store::OperationRecord& r : *rows) {
                    definitions += (definitions.empty() ? "" : ",") + upstreamSummary(*managed, r);
                }
            }
            c.out = R"({"upstreams":)" +
                    (upstreams != nullptr ? upstreams->statusJson() : std::string("[]")) +
                    R"(,"definitions":[)" + definitions + "]}";
            return std::nullopt;
        });
        router.add("GET", {"upstreams", "{}"}, [this](ApiCall& c) -> std::optional<ApiError> {
            const std::optional<std::string> one = statusOf(c.path[1]);
            if (!one) {
                return api::notFound("no upstream \"" + c.path[1].substr(0, 64) +
                                     "\" (see GET /admin/api/upstreams)");
            }
            c.out = R"({"upstream":)" + *one + "}";
            return std::nullopt;
        });
        router.add("POST", {"upstreams", "{}", "test"},
                   [this](ApiCall& c) { return test(c.path[1], c.out); });
        for (const char* which : {"tools", "resources", "resource_templates", "prompts"}) {
            router.add("GET", {"upstreams", "{}", which},
                       [this, which](ApiCall& c) { return list(c, which); });
        }
        router.add("POST", {"upstreams", "{}", "call"}, [this](ApiCall& c) { return call(c); });
        for (const char* verb : {"stop", "start", "restart"}) {
            router.add("POST", {"upstreams", "{}", verb},
                       [this, verb](ApiCall& c) { return control(c, verb); });
        }
    }

private:
    std::optional<std::string> statusOf(const std::string& name) const {
        const UpstreamDirectory* upstreams = context().upstreams;
        return upstreams != nullptr ? upstreams->statusJson(name) : std::nullopt;
    }

    /// A page of upstream `c.path[1]`'s list `which` as it lists it: `limit` (1 to
    /// store::kMaxListLimit) entries from `offset`.
    std::optional<ApiError> list(ApiCall& c, const std::string& which) const {
        std::optional<ApiError> bad;
        const int limit = api::limitParam(c.params, bad);
        const std::int64_t offset = api::intParam(c.params, "offset", bad).value_or(0);
        if (bad) {
            return bad;
        }
        if (offset < 0) {
            return api::badRequest("offset must be 0 or more");
        }
        const UpstreamDirectory* upstreams = context().upstreams;
        const std::optional<std::string> page =
            upstreams != nullptr
                ? upstreams->list(c.path[1], which, static_cast<std::size_t>(offset),
                                  static_cast<std::size_t>(limit))
                : std::nullopt;
        if (!page) {
            return api::notFound("no upstream \"" + c.path[1].substr(0, 64) +
                                 "\" (see GET /admin/api/upstreams)");
        }
        c.out = *page;
        return std::nullopt;
    }

    /// An ad-hoc call of one of upstream `c.path[1]`'s tools, a test run's worth: body
    /// `{"tool": its own name, "arguments": {...}}`; bounded by admin.test_run_timeout_ms,
    /// counted in admin.max_test_runs, audited as upstream.call.
    std::optional<ApiError> call(ApiCall& c) {
        const std::string& name = c.path[1];
        const std::optional<std::string> live = statusOf(name);
        if (!live) {
            return api::notFound("no upstream \"" + name.substr(0, 64) +
                                 "\" (see GET /admin/api/upstreams)");
        }
        json::Document doc;
        if (auto bad = body(c.request, doc)) {
            return bad;
        }
        const std::string tool = json::stringMember(doc, "tool");
        if (tool.empty()) {
            return api::invalid("the call names no tool",
                                {{"tool", "expected the upstream's own name of the tool"}});
        }
        std::string arguments = "{}";
        if (const auto a = std::as_const(doc).FindMember("arguments");
            a != std::as_const(doc).MemberEnd()) {
            if (!a->value.IsObject()) {
                return api::invalid("the call's arguments must be an object",
                                    {{"arguments", "expected an object"}});
            }
            arguments = json::toJsonText(a->value);
        }
        std::optional<ApiError> busy;
        const auto slot = takeTestRun(busy);
        if (!slot) {
            return busy;
        }
        const Result<std::string> done =
            context().upstreams->call(name, tool, arguments, config.admin.test_run_timeout_ms);
        json::Document status;
        const std::string workspace =
            json::parseObject(*live, status) ? json::stringMember(status, "workspace") : "";
        json::Document answer;
        const bool ok = done && json::parseObject(*done, answer) && answer.HasMember("ok") &&
                        answer["ok"].IsBool() && answer["ok"].GetBool();
        audit(workspace, name, "upstream.call", ok ? "ok" : "failed",
              R"({"upstream":)" + jsonString(name) + R"(,"tool":)" +
                  jsonString(tool.substr(0, 256)) + "}");
        if (!done) {
            return storeError(done.error());
        }
        c.out = R"({"call":)" + *done + "}";
        return std::nullopt;
    }

    /// Stops, starts or restarts upstream `c.path[1]`; a stop's calls in flight get `grace_ms`
    /// (the query parameter; server.shutdown_grace_ms when absent) before they are cancelled.
    /// Answers the upstream's status after it; audited as upstream.<verb>.
    std::optional<ApiError> control(ApiCall& c, const std::string& verb) {
        const std::string& name = c.path[1];
        const std::optional<std::string> before = statusOf(name);
        if (!before) {
            return api::notFound("no upstream \"" + name.substr(0, 64) +
                                 "\" (see GET /admin/api/upstreams)");
        }
        std::optional<ApiError> bad;
        const std::int64_t grace =
            api::intParam(c.params, "grace_ms", bad).value_or(config.server.shutdown_grace_ms);
        if (bad) {
            return bad;
        }
        if (grace < 0 || grace > kMaxStopGraceMs) {
            return api::badRequest(
                fmt::format("grace_ms must be 0 to {} (milliseconds)", kMaxStopGraceMs));
        }
        UpstreamDirectory& upstreams = *context().upstreams;
        Result<void> done;
        if (verb != "start") {
            done = upstreams.stop(name, std::chrono::milliseconds(grace));
        }
        if (done && verb != "stop") {
            done = upstreams.start(name);
        }
        json::Document status;
        const std::string workspace =
            json::parseObject(*before, status) ? json::stringMember(status, "workspace") : "";
        audit(workspace, name, "upstream." + verb, done ? "ok" : "failed",
              R"({"upstream":)" + jsonString(name) +
                  (done ? std::string() : R"(,"error":)" + jsonString(done.error().message)) + "}");
        if (!done) {
            return storeError(done.error());
        }
        const std::optional<std::string> after = statusOf(name);
        c.out = R"({"upstream":)" + after.value_or("null") + "}";
        return std::nullopt;
    }

    /// A test connection of its own to upstream `name` (opened, pinged, closed: nothing kept),
    /// a test run's worth: bounded by admin.test_run_timeout_ms, counted in admin.max_test_runs,
    /// audited.
    std::optional<ApiError> test(const std::string& name, std::string& out) {
        const std::optional<std::string> live = statusOf(name);
        // An admin upstream that does not run (a draft, one that failed): its newest version.
        std::optional<config::UpstreamConfig> draft;
        if (!live) {
            if (auto e = newestDefinition(name, draft)) {
                return e;
            }
        }
        json::Document upstream;
        const std::string workspace =
            live ? (json::parseObject(*live, upstream) ? json::stringMember(upstream, "workspace")
                                                       : "")
                 : draft->workspace;
        std::optional<ApiError> busy;
        const auto slot = takeTestRun(busy);
        if (!slot) {
            return busy;
        }
        const std::optional<std::string> result =
            live ? context().upstreams->test(name, config.admin.test_run_timeout_ms)
                 : std::optional<std::string>(
                       context().upstreams->test(*draft, config.admin.test_run_timeout_ms));
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

    /// The newest version of the admin upstream `name`, read; or the error to answer.
    std::optional<ApiError> newestDefinition(const std::string& name,
                                             std::optional<config::UpstreamConfig>& out) const {
        UpstreamCatalog* managed = context().upstream_catalog;
        store::OperationRecord record;
        if (managed == nullptr || context().upstreams == nullptr ||
            managed->find(name, record).has_value()) {
            return api::notFound("no upstream \"" + name.substr(0, 64) +
                                 "\" (see GET /admin/api/upstreams)");
        }
        const std::optional<store::OperationVersion> newest =
            newestVersion(managed->store(), record.id);
        if (!newest) {
            return api::notFound("upstream \"" + name.substr(0, 64) + "\" has no version");
        }
        UpstreamCatalog::Checked checked = managed->checkText(newest->config_json, record.id);
        if (!checked.upstream) {
            return api::invalid("the upstream's newest version is not valid",
                                std::move(checked.errors));
        }
        out = std::move(checked.upstream);
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
