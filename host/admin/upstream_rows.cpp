// The admin API's own upstreams (docs/admin-api.md, "Upstreams managed through the API"):
// create, read, edit (a new version), delete and validate, and their versions' routes
// (versions_resource.cpp) through UpstreamRows. What runs is the UpstreamCatalog's business.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>

#include "admin/api_json.h"
#include "admin/api_request.h"
#include "admin/operation_views.h"
#include "admin/resources.h"
#include "admin/row_versions.h"
#include "admin/upstream_catalog.h"
#include "admin/upstream_views.h"
#include "admin/versioned_rows.h"
#include "json/json_members.h"
#include "json/json_text.h"
#include "util/json_string.h"

namespace crank::admin {
namespace {

using api::key;
using api::Writer;

/// The longest grace a delete may give calls in flight (`grace_ms`), as a stop.
constexpr std::int64_t kMaxDeleteGraceMs = 300'000;

ApiError noCatalog() {
    return ApiError{503, "unavailable", "upstreams cannot be managed here (no store)", {}, {}, {}};
}

/// What the rows and the resource share: the catalog, a row's summary.
class UpstreamRowsBase : public AdminResource {
protected:
    using AdminResource::AdminResource;

    UpstreamCatalog* upstreams() const { return context().upstream_catalog; }

    std::optional<store::OperationVersion> latestOf(const std::string& id) const {
        return newestVersion(catalog.store(), id);
    }

    void writeSummary(Writer& w, const store::OperationRecord& r) const {
        writeUpstreamSummary(w, *upstreams(), r);
    }

    std::string summary(const store::OperationRecord& r) const {
        return upstreamSummary(*upstreams(), r);
    }

    /// The answer to an upstream the catalog refused: 409 for a taken name, 422 naming fields.
    static ApiError refused(UpstreamCatalog::Checked& checked) {
        if (checked.unavailable) {
            return ApiError{503, "unavailable", checked.errors.front().message, {}, {}, {}};
        }
        if (checked.conflict) {
            return ApiError{
                409, "conflict", checked.errors.front().message, std::move(checked.errors), {}, {}};
        }
        return api::invalid("the upstream is not valid: fix the fields below",
                            std::move(checked.errors));
    }

    /// The body's `config` object (the upstream, as an entry of the config's `upstreams`).
    static const rapidjson::Value* upstreamOf(const json::Document& body,
                                              std::optional<ApiError>& error) {
        const auto it = body.FindMember("config");
        if (it == body.MemberEnd() || !it->value.IsObject()) {
            error = api::invalid("the body needs the upstream as its \"config\" object",
                                 {{"config", "expected an object (an entry of `upstreams`)"}});
            return nullptr;
        }
        return &it->value;
    }
};

/// VersionedRows of the admin upstreams: found by name, published through the catalog.
class UpstreamRows final : public UpstreamRowsBase, public VersionedRows {
public:
    using UpstreamRowsBase::UpstreamRowsBase;

    const char* collection() const override { return "upstreams"; }
    const char* noun() const override { return "upstream"; }

    std::optional<ApiError> find(const std::string& key,
                                 store::OperationRecord& record) const override {
        if (upstreams() == nullptr) {
            return noCatalog();
        }
        return upstreams()->find(key, record);
    }

    std::optional<ApiError> publish(const store::OperationRecord& record, std::int64_t version,
                                    std::optional<std::optional<std::int64_t>> expected,
                                    std::string& /*extra*/) override {
        return upstreams()->publish(record, version, expected);
    }

    std::string summary(const store::OperationRecord& record) const override {
        return UpstreamRowsBase::summary(record);
    }

    std::string shown(const std::string& config_json) const override {
        return redactedUpstream(config_json);
    }

    void shownPair(json::Document& from, json::Document& to) const override {
        redactUpstreamPair(from, to);
    }
};

class UpstreamDefinitionsResource final : public UpstreamRowsBase {
public:
    using UpstreamRowsBase::UpstreamRowsBase;

    void addRoutes(ApiRouter& router) {
        router.add("POST", {"upstreams", "validate"}, [this](ApiCall& c) { return validate(c); });
        router.add("POST", {"upstreams"}, [this](ApiCall& c) { return create(c); });
        router.add("GET", {"upstreams", "{}", "definition"},
                   [this](ApiCall& c) { return definition(c); });
        router.add("PUT", {"upstreams", "{}"}, [this](ApiCall& c) { return update(c); });
        router.add("DELETE", {"upstreams", "{}"}, [this](ApiCall& c) { return remove(c); });
    }

private:
    /// The request's upstream object (`config`) read into `doc` and checked as the admin
    /// upstream `self_id` (empty: a new one, or the body's `id` when `id_from_body`).
    std::optional<ApiError> checkedBody(ApiCall& c, json::Document& doc, bool id_from_body,
                                        const rapidjson::Value*& upstream,
                                        UpstreamCatalog::Checked& checked) const {
        if (upstreams() == nullptr) {
            return noCatalog();
        }
        if (auto e = body(c.request, doc)) {
            return e;
        }
        std::optional<ApiError> error;
        upstream = upstreamOf(doc, error);
        if (upstream == nullptr) {
            return error;
        }
        checked = upstreams()->check(*upstream,
                                     id_from_body ? json::stringMember(doc, "id") : std::string());
        if (!checked.upstream) {
            return refused(checked);
        }
        return std::nullopt;
    }

    std::optional<ApiError> validate(ApiCall& c) const {
        json::Document doc;
        const rapidjson::Value* upstream = nullptr;
        UpstreamCatalog::Checked checked;
        if (auto e = checkedBody(c, doc, true, upstream, checked)) {
            return e;
        }
        c.out = R"({"valid":true})";
        return std::nullopt;
    }

    std::optional<ApiError> create(ApiCall& c) {
        json::Document doc;
        const rapidjson::Value* upstream = nullptr;
        UpstreamCatalog::Checked checked;
        if (auto e = checkedBody(c, doc, false, upstream, checked)) {
            return e;
        }
        store::OperationFilter live;
        live.kind = store::OperationKind::upstream;
        live.limit = store::kMaxListLimit;
        auto rows = catalog.store().listOperations(live);
        if (!rows) {
            return storeError(rows.error());
        }
        if (rows->size() >= kMaxAdminUpstreams) {
            return ApiError{409,
                            "conflict",
                            fmt::format("the admin API holds {} upstreams, its most; delete one "
                                        "first",
                                        kMaxAdminUpstreams),
                            {},
                            {},
                            {}};
        }
        store::OperationRecord record;
        record.kind = store::OperationKind::upstream;
        record.workspace_id = checked.upstream->workspace;
        record.name = checked.upstream->name;
        store::OperationRecord created;
        store::OperationVersion version;
        if (auto e = createRow(catalog.store(), record, json::toJsonText(*upstream),
                               json::stringMember(doc, "comment"), created, version)) {
            return e;
        }
        audit(created.workspace_id, created.name, "upstream.create", "ok",
              R"({"id":)" + jsonString(created.id) + R"(,"version":1})");
        c.status = 201;
        c.out = answer(created, version);
        return std::nullopt;
    }

    std::optional<ApiError> definition(ApiCall& c) const {
        if (upstreams() == nullptr) {
            return noCatalog();
        }
        store::OperationRecord record;
        if (auto e = upstreams()->find(c.path[1], record)) {
            return e;
        }
        const std::optional<store::OperationVersion> latest = latestOf(record.id);
        std::optional<store::OperationVersion> published;
        if (record.published_version) {
            auto v = catalog.store().getOperationVersion(record.id, *record.published_version);
            if (!v) {
                return storeError(v.error());
            }
            published = std::move(*v);
        }
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "upstream");
        writeSummary(w, record);
        for (const auto& [name, v] : {std::pair("latest", &latest), {"published", &published}}) {
            key(w, name);
            if (*v) {
                store::OperationVersion shown = **v;
                shown.config_json = redactedUpstream(shown.config_json);
                writeVersion(w, shown);
            } else {
                w.Null();
            }
        }
        w.EndObject();
        c.out = api::text(b);
        return std::nullopt;
    }

    std::optional<ApiError> update(ApiCall& c) {
        if (upstreams() == nullptr) {
            return noCatalog();
        }
        store::OperationRecord record;
        if (auto e = upstreams()->find(c.path[1], record)) {
            return e;
        }
        json::Document doc;
        if (auto e = body(c.request, doc)) {
            return e;
        }
        const auto base = std::as_const(doc).FindMember("base_version");
        if (base == std::as_const(doc).MemberEnd() || !base->value.IsInt64() ||
            base->value.GetInt64() < 1) {
            return api::badRequest(
                "base_version is required: the version number the edit started from");
        }
        std::optional<ApiError> error;
        const rapidjson::Value* upstream = upstreamOf(doc, error);
        if (upstream == nullptr) {
            return error;
        }
        // A secret sent back as shown ("[redacted]") keeps the base version's value.
        if (auto was = catalog.store().getOperationVersion(record.id, base->value.GetInt64())) {
            restoreRedacted(doc["config"], doc.GetAllocator(), was->config_json);
        }
        std::vector<config::ConfigError> fixed;
        if (json::stringMember(*upstream, "name") != record.name) {
            fixed.push_back({"name", "cannot be changed (it is \"" + record.name +
                                         "\"); create a new upstream instead"});
        }
        const std::string workspace = json::stringMember(*upstream, "workspace");
        if ((workspace.empty() ? std::string("default") : workspace) != record.workspace_id) {
            fixed.push_back({"workspace", "cannot be changed (it is \"" + record.workspace_id +
                                              "\"); create a new upstream instead"});
        }
        if (!fixed.empty()) {
            return api::invalid("name and workspace are fixed when an upstream is created",
                                std::move(fixed));
        }
        UpstreamCatalog::Checked checked = upstreams()->check(*upstream, record.id);
        if (!checked.upstream) {
            return refused(checked);
        }
        store::OperationVersion version;
        if (auto e = addRowVersion(catalog.store(), record.id, json::toJsonText(*upstream),
                                   json::stringMember(doc, "comment"), base->value.GetInt64(),
                                   version)) {
            return e;
        }
        audit(record.workspace_id, record.name, "upstream.update", "ok",
              fmt::format(R"({{"id":{},"version":{}}})", jsonString(record.id), version.version));
        c.status = 201;
        c.out = answer(record, version);
        return std::nullopt;
    }

    /// Deletes the upstream: what runs of it here is removed, its calls in flight given
    /// `grace_ms` (server.shutdown_grace_ms when absent); other nodes remove theirs within
    /// admin.sync_interval_ms. Its versions stay as history.
    std::optional<ApiError> remove(ApiCall& c) {
        if (upstreams() == nullptr) {
            return noCatalog();
        }
        store::OperationRecord record;
        if (auto e = upstreams()->find(c.path[1], record)) {
            return e;
        }
        std::optional<ApiError> bad;
        const std::int64_t grace =
            api::intParam(c.params, "grace_ms", bad).value_or(config.server.shutdown_grace_ms);
        if (bad) {
            return bad;
        }
        if (grace < 0 || grace > kMaxDeleteGraceMs) {
            return api::badRequest(
                fmt::format("grace_ms must be 0 to {} (milliseconds)", kMaxDeleteGraceMs));
        }
        std::optional<ApiError> failed =
            upstreams()->remove(record, std::chrono::milliseconds(grace));
        audit(record.workspace_id, record.name, "upstream.delete", failed ? "error" : "ok",
              R"({"id":)" + jsonString(record.id) + "}");
        if (failed) {
            return failed;
        }
        auto after = catalog.store().getOperation(record.id);
        if (!after) {
            return storeError(after.error());
        }
        c.out = R"({"upstream":)" + summary(*after) + "}";
        return std::nullopt;
    }

    /// `{"upstream": summary, "version": version}`: the answer to a create or an edit.
    std::string answer(const store::OperationRecord& r, const store::OperationVersion& v) const {
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "upstream");
        writeSummary(w, r);
        key(w, "version");
        store::OperationVersion shown = v;
        shown.config_json = redactedUpstream(shown.config_json);
        writeVersion(w, shown);
        w.EndObject();
        return api::text(b);
    }
};

}  // namespace

std::unique_ptr<AdminResource> addUpstreamDefinitionsRoutes(AdminContext& ctx, ApiRouter& router) {
    auto resource = std::make_unique<UpstreamDefinitionsResource>(ctx);
    resource->addRoutes(router);
    // The versions' routes keep their rows: the resource returned owns them through its own.
    struct Both final : AdminResource {
        Both(AdminContext& c, std::unique_ptr<AdminResource> a, std::unique_ptr<AdminResource> b)
            : AdminResource(c), first(std::move(a)), second(std::move(b)) {}
        std::unique_ptr<AdminResource> first;
        std::unique_ptr<AdminResource> second;
    };
    auto versions = addVersionsRoutes(ctx, router, std::make_unique<UpstreamRows>(ctx));
    return std::make_unique<Both>(ctx, std::move(resource), std::move(versions));
}

}  // namespace crank::admin
