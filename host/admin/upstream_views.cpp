#include "admin/upstream_views.h"

#include <cstdint>

#include <rapidjson/stringbuffer.h>

namespace crank::admin {

using api::key;

std::optional<store::OperationVersion> newestUpstreamVersion(const UpstreamCatalog& catalog,
                                                             const std::string& id) {
    auto versions = catalog.store().listOperationVersions(id, 1);
    if (!versions || versions->empty()) {
        return std::nullopt;
    }
    return versions->front();
}

void writeUpstreamSummary(api::Writer& w, const UpstreamCatalog& catalog,
                          const store::OperationRecord& r) {
    const std::optional<store::OperationVersion> latest = newestUpstreamVersion(catalog, r.id);
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
    api::optInt(w, applied && applied->error.empty() ? std::optional<std::int64_t>(applied->version)
                                                     : std::nullopt);
    key(w, "error");
    api::str(w, error);
    key(w, "created_at");
    w.Int64(r.created_at);
    key(w, "deleted_at");
    api::optInt(w, r.deleted_at);
    w.EndObject();
}

std::string upstreamSummary(const UpstreamCatalog& catalog, const store::OperationRecord& r) {
    rapidjson::StringBuffer b;
    api::Writer w(b);
    writeUpstreamSummary(w, catalog, r);
    return api::text(b);
}

}  // namespace crank::admin
