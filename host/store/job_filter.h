#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/job_status.h"
#include "store/sort_order.h"
#include "store/store_limits.h"

namespace crank::store {

/// Which jobs Store::listJobs() and Store::countJobs() consider. Unset fields match every row;
/// set fields are combined with AND.
struct JobFilter {
    /// One job by id: with workspace_id and agent_id, a job read only when it is the caller's
    /// (another's costs what an unknown id costs).
    std::optional<std::string> id;
    std::optional<std::string> workspace_id;
    std::optional<std::string> agent_id;
    std::optional<std::string> operation_id;
    /// Rows whose status is one of these; empty matches every status.
    std::vector<JobStatus> statuses;
    /// Rows with expires_at < this (Unix ms).
    std::optional<std::int64_t> expires_before;
    /// List order by (created_at, id). Ignored by countJobs().
    SortOrder order = SortOrder::newest_first;
    /// At most this many rows, clamped to kMaxListLimit; < 1 is invalid. Ignored by count.
    int limit = kDefaultListLimit;
    /// Rows owned by this node (exact match; rows without an owner never match).
    std::optional<std::string> owner_node;
    /// Rows whose heartbeat_at < this (Unix ms) or that never had a heartbeat: with statuses =
    /// {queued, running}, the jobs whose owner has not been heard of for a lease and that another
    /// node may claim (Store::claimJob()).
    std::optional<std::int64_t> heartbeat_before;
};

}  // namespace crank::store
