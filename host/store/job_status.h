#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace crank::store {

/// Status of an async job, stored as its name ("queued", ...).
///
/// Legal transitions (enforced by the runtime; the store only compares-and-sets):
///   queued  -> running | cancelled | failed
///   running -> succeeded | failed | cancelled | interrupted
///   succeeded, failed, cancelled, interrupted are terminal.
/// running -> interrupted is done by Store::markRunningJobsInterrupted() when a node starts: a job
/// of that node that was running when its process died has no worker any more and its outcome is
/// unknown.
enum class JobStatus {
    queued,       ///< accepted, waiting for a worker
    running,      ///< a worker is executing it; progress_json may change
    succeeded,    ///< finished; result_json holds the result
    failed,       ///< finished with an error; error_json says why
    cancelled,    ///< stopped on request before it finished
    interrupted,  ///< the process stopped while it was running; the client may resubmit
};

/// Every JobStatus, in declaration order.
inline constexpr std::array<JobStatus, 6> kJobStatuses = {
    JobStatus::queued, JobStatus::running,   JobStatus::succeeded,
    JobStatus::failed, JobStatus::cancelled, JobStatus::interrupted};

/// "queued", "running", "succeeded", "failed", "cancelled", "interrupted".
std::string_view jobStatusName(JobStatus status);
/// The status named `name` (exact, lower case); nullopt for anything else.
std::optional<JobStatus> parseJobStatus(std::string_view name);
/// True for succeeded, failed, cancelled and interrupted.
bool isTerminal(JobStatus status);

}  // namespace crank::store
