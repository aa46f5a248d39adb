#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/operation_kind.h"

namespace crank::store {

/// One row of operations: the identity of an operation managed through the admin API. Its
/// configuration lives in its versions (OperationVersion).
struct OperationRecord {
    /// Unique id. Left empty, Store::createOperation() assigns crank::newId("op_").
    std::string id;
    std::string workspace_id;  ///< required
    /// Required; unique among the operations of a workspace that are not deleted.
    std::string name;
    std::int64_t created_at = 0;  ///< 0 on create means "now"
    /// The version in use; empty until the first publish. Must be empty on create.
    std::optional<std::int64_t> published_version;
    /// When it was deleted; empty while it exists. Must be empty on create.
    std::optional<std::int64_t> deleted_at;

    /// What the row defines; fixed when it is created.
    OperationKind kind = OperationKind::operation;
    bool deleted() const { return deleted_at.has_value(); }
};

}  // namespace crank::store
