#include "admin/upstream_views.h"

#include <cstdint>

#include <rapidjson/stringbuffer.h>

#include "admin/row_versions.h"
#include "json/json_parse.h"
#include "json/json_text.h"

namespace crank::admin {

using api::key;

void writeUpstreamSummary(api::Writer& w, const UpstreamCatalog& catalog,
                          const store::OperationRecord& r) {
    const std::optional<store::OperationVersion> latest = newestVersion(catalog.store(), r.id);
    const std::optional<UpstreamCatalog::Applied> applied = catalog.applied(r.id);
    const std::string error = applied ? applied->error : std::string();
    w.StartObject();
    key(w, "id");
    api::str(w, r.id);
    key(w, "name");
    api::str(w, r.name);
    key(w, "workspace");
    api::str(w, r.workspace_id);
    key(w, "source");
    api::str(w, "admin");
    key(w, "status");
    api::str(w, r.deleted()            ? "deleted"
                : !r.published_version ? "draft"
                : !error.empty()       ? "error"
                                       : "published");
    key(w, "published_version");
    api::optInt(w, r.published_version);
    key(w, "latest_version");
    api::optInt(w, latest ? std::optional<std::int64_t>(latest->version) : std::nullopt);
    key(w, "served_version");
    api::optInt(w, applied ? applied->running_version : std::nullopt);
    key(w, "error");
    api::str(w, error);
    key(w, "created_at");
    w.Int64(r.created_at);
    key(w, "deleted_at");
    api::optInt(w, r.deleted_at);
    w.EndObject();
}

namespace {

constexpr std::string_view kRedacted = "[redacted]";
constexpr std::string_view kRedactedChanged = "[redacted: changed]";

/// `upstream.config.<which>` when it is an object; null otherwise. (Members are looked up by
/// HasMember and operator[]: comparing rapidjson's member iterators is ambiguous in C++20.)
rapidjson::Value* secretsOf(rapidjson::Value& upstream, const char* which) {
    if (!upstream.IsObject() || !upstream.HasMember("config")) {
        return nullptr;
    }
    rapidjson::Value& config = upstream["config"];
    if (!config.IsObject() || !config.HasMember(which) || !config[which].IsObject()) {
        return nullptr;
    }
    return &config[which];
}

/// Hides every string value of `upstream`'s secrets; when `other` is given (the diff's other
/// side, hidden after this one), a value that differs from its counterpart is marked changed.
void redact(rapidjson::Value& upstream, rapidjson::Value* other) {
    for (const char* which : {"headers", "env"}) {
        rapidjson::Value* mine = secretsOf(upstream, which);
        if (mine == nullptr) {
            continue;
        }
        rapidjson::Value* theirs = other != nullptr ? secretsOf(*other, which) : nullptr;
        for (rapidjson::SizeType i = 0; i < mine->MemberCount(); ++i) {
            auto m = mine->MemberBegin() + i;
            if (!m->value.IsString()) {
                continue;
            }
            const bool changed = theirs != nullptr &&
                                 (!theirs->HasMember(m->name) || !((*theirs)[m->name] == m->value));
            const std::string_view shown = changed ? kRedactedChanged : kRedacted;
            m->value.SetString(rapidjson::StringRef(shown.data(), shown.size()));
        }
    }
}

}  // namespace

std::string redactedUpstream(std::string_view config_json) {
    json::Document doc;
    if (!json::parseJson(config_json, doc, "").ok()) {
        return std::string(config_json);
    }
    redact(doc, nullptr);
    return json::toJsonText(doc);
}

void redactUpstreamPair(json::Document& from, json::Document& to) {
    redact(to, &from);  // `to` first, compared with `from`'s values in the clear
    redact(from, nullptr);
}

void restoreRedacted(rapidjson::Value& upstream, json::Document::AllocatorType& allocator,
                     std::string_view base_json) {
    json::Document base;
    if (!json::parseJson(base_json, base, "").ok()) {
        return;
    }
    for (const char* which : {"headers", "env"}) {
        rapidjson::Value* mine = secretsOf(upstream, which);
        rapidjson::Value* old = secretsOf(base, which);
        if (mine == nullptr || old == nullptr) {
            continue;
        }
        for (rapidjson::SizeType i = 0; i < mine->MemberCount(); ++i) {
            auto m = mine->MemberBegin() + i;
            if (m->value.IsString() && m->value.GetString() == kRedacted &&
                old->HasMember(m->name)) {
                m->value.CopyFrom((*old)[m->name], allocator);
            }
        }
    }
}

std::string upstreamSummary(const UpstreamCatalog& catalog, const store::OperationRecord& r) {
    rapidjson::StringBuffer b;
    api::Writer w(b);
    writeUpstreamSummary(w, catalog, r);
    return api::text(b);
}

}  // namespace crank::admin
