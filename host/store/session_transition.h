#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/session_status.h"

namespace crank::store {

/// What Store::transitionSession() writes when the session has the expected status. Unset
/// optional fields leave their column unchanged. The store does not fill closed_at by itself:
/// set it when moving to a terminal status.
struct SessionTransition {
    SessionStatus to = SessionStatus::active;
    std::optional<std::string> cursor;
    std::optional<std::string> state_json;
    std::optional<std::int64_t> closed_at;
    /// New expiry; for a terminal status this is the retention deadline of the row.
    std::optional<std::int64_t> expires_at;
};

}  // namespace crank::store
