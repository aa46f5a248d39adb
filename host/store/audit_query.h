#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/sort_order.h"
#include "store/store_limits.h"

namespace crank::store {

/// Which audit events Store::queryAudit() returns. Unset fields match every event; set fields are
/// combined with AND. Events are ordered by (ts, id), so the order is total and stable even when
/// several events share a timestamp.
struct AuditQuery {
    std::optional<std::string> workspace_id;
    std::optional<std::string> agent_id;
    std::optional<std::string> operation_id;
    std::optional<std::string> action;
    std::optional<std::int64_t> from_ts;  ///< inclusive, Unix ms
    std::optional<std::int64_t> to_ts;    ///< exclusive, Unix ms; must be >= from_ts
    SortOrder order = SortOrder::newest_first;
    /// At most this many events, clamped to kMaxListLimit; < 1 is invalid. With newest_first the
    /// newest events of the range are returned, with oldest_first the oldest.
    int limit = kDefaultListLimit;
};

}  // namespace crank::store
