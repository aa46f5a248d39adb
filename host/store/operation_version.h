#pragma once

#include <cstdint>
#include <string>

#include "store/version_state.h"

namespace crank::store {

/// One version of an operation's configuration. Versions are immutable except for their state;
/// every change to an operation is a new version.
struct OperationVersion {
    std::string operation_id;
    std::int64_t version = 0;        ///< 1, 2, 3, ... per operation, assigned by the store
    std::string config_json = "{}";  ///< the operation's configuration (JSON text)
    VersionState state = VersionState::draft;
    std::int64_t created_at = 0;
    std::string created_by;  ///< who saved it (admin user or "config"), may be empty
    std::string comment;     ///< why, may be empty
};

}  // namespace crank::store
