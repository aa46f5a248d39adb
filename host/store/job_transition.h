#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/job_status.h"

namespace crank::store {

/// What Store::transitionJob() writes when the job has the expected status. Unset optional fields
/// leave their column unchanged; updated_at is always set to now. The store does not fill
/// finished_at by itself: set it when moving to a terminal status.
struct JobTransition {
    JobStatus to = JobStatus::queued;
    std::optional<std::string> progress_json;
    std::optional<std::string> result_json;
    std::optional<std::string> error_json;
    std::optional<std::int64_t> finished_at;
    /// New expiry; for a terminal status this is the retention deadline of the row.
    std::optional<std::int64_t> expires_at;
    /// New owner node (not empty). To take over a job from another node, use Store::claimJob().
    std::optional<std::string> owner_node;
    /// New resume position (see JobRecord::cursor).
    std::optional<std::string> cursor;
    std::optional<std::int64_t> heartbeat_at;
};

}  // namespace crank::store
