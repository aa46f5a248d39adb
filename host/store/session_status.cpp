#include "store/session_status.h"

namespace crank::store {

std::string_view sessionStatusName(SessionStatus status) {
    switch (status) {
        case SessionStatus::active:
            return "active";
        case SessionStatus::paused:
            return "paused";
        case SessionStatus::closed:
            return "closed";
        case SessionStatus::expired:
            return "expired";
        case SessionStatus::failed:
            return "failed";
    }
    return "failed";
}

std::optional<SessionStatus> parseSessionStatus(std::string_view name) {
    for (SessionStatus status : kSessionStatuses) {
        if (sessionStatusName(status) == name) {
            return status;
        }
    }
    return std::nullopt;
}

bool isTerminal(SessionStatus status) {
    return status == SessionStatus::closed || status == SessionStatus::expired ||
           status == SessionStatus::failed;
}

}  // namespace crank::store
