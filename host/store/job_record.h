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
    /// Id of the crankd node whose worker runs or holds the job (short text, not empty when set).
    /// Empty (NULL) only for rows written before nodes had ids (schema version 1); such rows are
    /// treated as belonging to every node (see Store::markRunningJobsInterrupted()). Changed by
    /// Store::claimJob() or a JobTransition.
    std::optional<std::string> owner_node;
    /// The plugin's resume position: opaque text (may be JSON), empty until the worker sets it
    /// with Store::setJobCursor(). Lets a new worker resume instead of starting over.
    std::optional<std::string> cursor;
    /// The tool input the job was started with (JSON text), so that it can be re-run or resumed
    /// after a restart. Rows written before schema version 2 have "{}".
    std::string input_json = "{}";
    /// Last time the owner node said it still holds the job (Store::heartbeatJobs(),
    /// Store::claimJob()); empty until the first heartbeat.
    std::optional<std::int64_t> heartbeat_at;
    /// The W3C trace context of the request that started the job (empty: none), which its runs
    /// pass on to the upstream, on whichever node runs them. Rows before schema version 4: "".
    std::string traceparent;
    std::string tracestate;
};

}  // namespace crank::store
