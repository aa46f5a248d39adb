#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace crank::store {

/// What Store::touchSession() writes after a poll, while the session keeps its status. Unset
/// optional fields leave their column unchanged.
struct SessionTouch {
    std::optional<std::string> cursor;
    std::optional<std::string> state_json;
    std::int64_t last_poll_at = 0;  ///< 0 means "now"
    /// New expiry, e.g. pushed forward by the idle timeout.
    std::optional<std::int64_t> expires_at;
};

}  // namespace crank::store
