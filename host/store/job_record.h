#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/job_status.h"

namespace crank::store {

/// One row of async_jobs: a unit of work an agent started and later asks about.
/// Timestamps are Unix milliseconds (UTC). JSON columns hold JSON text; the store does not parse
/// them.
struct JobRecord {
    /// Unique id. Left empty, Store::createJob() assigns crank::newId("job_") (128 random bits);
    /// a caller that passes its own id must make it just as unguessable.
    std::string id;
    std::string workspace_id;  ///< required
    std::string agent_id;      ///< required
    std::string operation_id;  ///< required; not a foreign key (operations may come from config)
    JobStatus status = JobStatus::queued;
    std::optional<std::string> progress_json;
    std::optional<std::string> result_json;
    std::optional<std::string> error_json;
    /// Required (> 0). For a live job, when it expires; for a terminal one, when its row may be
    /// deleted (see Store::deleteExpiredJobs()).
    std::int64_t expires_at = 0;
    std::int64_t created_at = 0;  ///< 0 on create means "now"
    std::int64_t updated_at = 0;  ///< set by the store on every change
    std::optional<std::int64_t> finished_at;
};

}  // namespace crank::store
