#pragma once

// How an admin upstream's row is shown (docs/admin-api.md, "Upstreams managed through the
// API"): by its definitions' routes and beside the live status in GET /admin/api/upstreams.

#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "admin/api_json.h"
#include "admin/upstream_catalog.h"
#include "json/json_value.h"
#include "store/store.h"

namespace crank::admin {

/// `{"id", "name", "workspace", "source": "admin", "status" (draft, published, error, deleted),
/// "published_version", "latest_version", "served_version" (what runs on this node), "error" (why
/// the published version does not run here), "created_at", "deleted_at"}`.
void writeUpstreamSummary(api::Writer& w, const UpstreamCatalog& catalog,
                          const store::OperationRecord& r);
/// The same, as text.
std::string upstreamSummary(const UpstreamCatalog& catalog, const store::OperationRecord& r);

// An upstream's secrets in answers: the string values of `config.headers` and `config.env` (an
// mcp upstream's header values and its process's environment) are shown as "[redacted]";
// `{"env": NAME}` references are shown as they are (they hold no secret).

/// The text of an upstream object with its secrets hidden.
std::string redactedUpstream(std::string_view config_json);
/// Both hidden for a diff; a secret whose value differs reads "[redacted: changed]" in `to`.
void redactUpstreamPair(json::Document& from, json::Document& to);
/// An edit that sends a secret back as "[redacted]" keeps the value of `base_json` (the version
/// it started from).
void restoreRedacted(rapidjson::Value& upstream, json::Document::AllocatorType& allocator,
                     std::string_view base_json);

}  // namespace crank::admin
