#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/session_status.h"
#include "store/sort_order.h"
#include "store/store_limits.h"

namespace crank::store {

/// Which sessions Store::listSessions() and Store::countSessions() consider. Unset fields match
/// every row; set fields are combined with AND.
struct SessionFilter {
    std::optional<std::string> workspace_id;
    std::optional<std::string> agent_id;
    std::optional<std::string> operation_id;
    /// Rows whose status is one of these; empty matches every status.
    std::vector<SessionStatus> statuses;
    /// Rows with expires_at < this (Unix ms): lets a sweeper find live sessions past their expiry.
    std::optional<std::int64_t> expires_before;
    /// List order by (created_at, id). Ignored by countSessions().
    SortOrder order = SortOrder::newest_first;
    /// At most this many rows, clamped to kMaxListLimit; < 1 is invalid. Ignored by count.
    int limit = kDefaultListLimit;
    /// Sessions owned by this node (exact match; rows without an owner never match).
    std::optional<std::string> owner_node;
};

}  // namespace crank::store
