#pragma once

#include <optional>
#include <string>

#include "store/operation_kind.h"
#include "store/store_limits.h"

namespace crank::store {

/// Which operations Store::listOperations() returns, ordered by (workspace_id, name, id).
/// Unset fields match every row; set fields are combined with AND.
struct OperationFilter {
    /// Operations, or the admin API's upstreams.
    OperationKind kind = OperationKind::operation;
    std::optional<std::string> workspace_id;
    std::optional<std::string> name;  ///< exact name, e.g. to look one operation up
    bool include_deleted = false;
    /// Only operations with a published version (what a node serves).
    bool published_only = false;
    /// At most this many rows, clamped to kMaxListLimit; < 1 is invalid.
    int limit = kDefaultListLimit;
};

}  // namespace crank::store
