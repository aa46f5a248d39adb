#pragma once

#include <optional>
#include <string_view>

namespace crank::store {

/// What a row of `operations` defines; stored as its name. Both take the same versions,
/// publishing and rollback (store.h, "operations and their versions").
enum class OperationKind {
    /// An operation: its versions hold an entry of the config's `operations`. Its name is unique
    /// among the live operations of its workspace.
    operation,
    /// An upstream the admin API manages: its versions hold an entry of the config's
    /// `upstreams`. Its name is unique among all live upstreams, whatever their workspace (an
    /// upstream's name addresses it across the deployment); workspace_id is its workspace.
    upstream,
};

/// "operation", "upstream".
constexpr std::string_view operationKindName(OperationKind kind) {
    return kind == OperationKind::upstream ? "upstream" : "operation";
}

/// The kind named `name` (exact, lower case); nullopt for anything else.
constexpr std::optional<OperationKind> parseOperationKind(std::string_view name) {
    if (name == "operation") {
        return OperationKind::operation;
    }
    if (name == "upstream") {
        return OperationKind::upstream;
    }
    return std::nullopt;
}

}  // namespace crank::store
