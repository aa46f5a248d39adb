#pragma once

#include <cstdint>
#include <string>

namespace crank::store {

/// Input of Store::addOperationVersion(): the content of a new version. The store assigns the
/// version number and the state (draft).
struct OperationVersionDraft {
    std::string config_json = "{}";
    std::string created_by;
    std::string comment;
    std::int64_t created_at = 0;  ///< 0 means "now"
};

}  // namespace crank::store
