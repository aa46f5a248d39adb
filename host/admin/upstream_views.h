#pragma once

// How an admin upstream's row is shown (docs/admin-api.md, "Upstreams managed through the
// API"): by its definitions' routes and beside the live status in GET /admin/api/upstreams.

#include <optional>
#include <string>

#include "admin/api_json.h"
#include "admin/upstream_catalog.h"
#include "store/store.h"

namespace crank::admin {

/// `{"id", "name", "workspace", "source": "admin", "status" (draft, published, error, deleted),
/// "published_version", "latest_version", "served_version" (what runs on this node), "error" (why
/// the published version does not run here), "created_at", "deleted_at"}`.
void writeUpstreamSummary(api::Writer& w, const UpstreamCatalog& catalog,
                          const store::OperationRecord& r);
/// The same, as text.
std::string upstreamSummary(const UpstreamCatalog& catalog, const store::OperationRecord& r);

/// The newest version of admin upstream `id`; nullopt when it has none.
std::optional<store::OperationVersion> newestUpstreamVersion(const UpstreamCatalog& catalog,
                                                             const std::string& id);

}  // namespace crank::admin
