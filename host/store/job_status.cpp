#include "store/job_status.h"

namespace crank::store {

std::string_view jobStatusName(JobStatus status) {
    switch (status) {
        case JobStatus::queued:
            return "queued";
        case JobStatus::running:
            return "running";
        case JobStatus::succeeded:
            return "succeeded";
        case JobStatus::failed:
            return "failed";
        case JobStatus::cancelled:
            return "cancelled";
        case JobStatus::interrupted:
            return "interrupted";
    }
    return "failed";
}

std::optional<JobStatus> parseJobStatus(std::string_view name) {
    for (JobStatus status : kJobStatuses) {
        if (jobStatusName(status) == name) {
            return status;
        }
    }
    return std::nullopt;
}

bool isTerminal(JobStatus status) {
    return status != JobStatus::queued && status != JobStatus::running;
}

}  // namespace crank::store
