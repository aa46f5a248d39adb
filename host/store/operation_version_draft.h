#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace crank::store {

/// Input of Store::addOperationVersion(): the content of a new version. The store assigns the
/// version number and the state (draft).
struct OperationVersionDraft {
    std::string config_json = "{}";
    std::string created_by;
    std::string comment;
    std::int64_t created_at = 0;  ///< 0 means "now"
    /// Optimistic edit: when set, the operation's highest version must be this one (0: it has
    /// none yet), else Store::addOperationVersion() fails with conflict and adds nothing. Two
    /// editors who started from the same version cannot both save.
    std::optional<std::int64_t> expected_latest;
};

}  // namespace crank::store
