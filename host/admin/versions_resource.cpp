#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <Poco/Net/HTTPServerRequest.h>
#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "admin/api_json.h"
#include "admin/api_request.h"
#include "admin/json_diff.h"
#include "admin/operation_views.h"
#include "admin/resources.h"
#include "json/json_parse.h"
#include "util/json_string.h"

namespace crank::admin {
namespace {

using api::badRequest;
using api::intParam;
using api::key;
using api::limitParam;
using api::notFound;
using api::Params;
using api::str;
using api::text;
using api::wrapped;
using api::writeArray;
using api::Writer;
using Poco::Net::HTTPServerRequest;

/// The versions of an admin operation or an admin upstream (VersionedRows): list, read,
/// compare, publish one, roll back (docs/admin-api.md, "Versions").
class VersionsResource final : public AdminResource {
public:
    VersionsResource(AdminContext& ctx, std::unique_ptr<VersionedRows> rows)
        : AdminResource(ctx), rows_(std::move(rows)) {}

    void addRoutes(ApiRouter& router) {
        const std::string root = rows_->collection();
        router.add("GET", {root, "{}", "versions"},
                   [this](ApiCall& c) { return listVersions(c.path[1], c.params, c.out); });
        router.add("GET", {root, "{}", "versions", "{}"},
                   [this](ApiCall& c) { return getVersion(c.path[1], c.path[3], c.out); });
        router.add("GET", {root, "{}", "diff"},
                   [this](ApiCall& c) { return diff(c.path[1], c.params, c.out); });
        router.add("POST", {root, "{}", "publish"},
                   [this](ApiCall& c) { return publish(c.request, c.path[1], false, c.out); });
        router.add("POST", {root, "{}", "rollback"},
                   [this](ApiCall& c) { return publish(c.request, c.path[1], true, c.out); });
    }

private:
    std::optional<ApiError> listVersions(const std::string& ref, const Params& params,
                                         std::string& out) const {
        store::OperationRecord record;
        if (auto e = rows_->find(ref, record)) {
            return e;
        }
        std::optional<ApiError> error;
        const int limit = limitParam(params, error);
        if (error) {
            return error;
        }
        auto versions = catalog.store().listOperationVersions(record.id, limit);
        if (!versions) {
            return storeError(versions.error());
        }
        for (store::OperationVersion& v : *versions) {
            v.config_json = rows_->shown(v.config_json);
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

    std::optional<ApiError> getVersion(const std::string& ref, const std::string& number,
                                       std::string& out) const {
        store::OperationRecord record;
        if (auto e = rows_->find(ref, record)) {
            return e;
        }
        const std::string& id = record.id;
        const auto n = versionNumber(number);
        if (!n) {
            return badRequest("a version is a positive integer, got \"" + number.substr(0, 40) +
                              "\"");
        }
        auto v = catalog.store().getOperationVersion(id, *n);
        if (!v) {
            return storeError(v.error());
        }
        v->config_json = rows_->shown(v->config_json);
        out = wrapped("version", [&](Writer& w) { writeVersion(w, *v); });
        return std::nullopt;
    }

    std::optional<ApiError> diff(const std::string& ref, const Params& params,
                                 std::string& out) const {
        store::OperationRecord record;
        if (auto e = rows_->find(ref, record)) {
            return e;
        }
        const std::string& id = record.id;
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
        rows_->shownPair(da, dz);
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

    std::optional<ApiError> publish(HTTPServerRequest& request, const std::string& ref,
                                    bool rollback, std::string& out) {
        store::OperationRecord record;
        if (auto e = rows_->find(ref, record)) {
            return e;
        }
        const std::string& id = record.id;
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
                    return notFound(
                        fmt::format("{} {} has no version {}", rows_->noun(), ref, *version));
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
        std::string extra;
        std::optional<ApiError> failed = rows_->publish(record, *version, expected, extra);
        audit(record.workspace_id, record.name,
              std::string(rows_->noun()) + (rollback ? ".rollback" : ".publish"),
              failed ? (failed->status == 409 ? "conflict" : "error") : "ok",
              fmt::format(R"({{"id":{},"version":{}}})", jsonString(id), *version));
        if (failed) {
            return failed;
        }
        auto after = catalog.store().getOperation(id);
        if (!after) {
            return storeError(after.error());
        }
        out = "{\"" + std::string(rows_->noun()) + "\":" + rows_->summary(*after) + extra + "}";
        return std::nullopt;
    }

    std::unique_ptr<VersionedRows> rows_;
};

}  // namespace

std::unique_ptr<AdminResource> addVersionsRoutes(AdminContext& ctx, ApiRouter& router,
                                                 std::unique_ptr<VersionedRows> rows) {
    auto resource = std::make_unique<VersionsResource>(ctx, std::move(rows));
    resource->addRoutes(router);
    return resource;
}

}  // namespace crank::admin
