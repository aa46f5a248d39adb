#pragma once

// The store steps that admin operations and admin upstreams share (rows of the operations table,
// store/operation_kind.h): a row created with its first version, and an edit saved as a new
// version on the one it started from, with the answers the API gives when either fails.

#include <cstdint>
#include <optional>
#include <string>

#include "admin/operation_catalog.h"
#include "store/store.h"

namespace crank::admin {

/// The newest version of row `id`; nullopt when it has none (or the store cannot say).
std::optional<store::OperationVersion> newestVersion(store::Store& store, const std::string& id);

/// Creates `record` and its version 1 (`config_json`, `comment`, by the admin); a row is never
/// left without a version. 409 for a name taken (naming the `name` field).
std::optional<ApiError> createRow(store::Store& store, const store::OperationRecord& record,
                                  std::string config_json, std::string comment,
                                  store::OperationRecord& created,
                                  store::OperationVersion& version);

/// Saves `config_json` as a new version of row `id`, optimistic against `base_version` (the
/// version the edit started from): 409 with `latest_version` and a message saying what to do
/// when another was saved since.
std::optional<ApiError> addRowVersion(store::Store& store, const std::string& id,
                                      std::string config_json, std::string comment,
                                      std::int64_t base_version, store::OperationVersion& version);

}  // namespace crank::admin
