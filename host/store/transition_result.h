#pragma once

#include <optional>
#include <string_view>

namespace crank::store {

/// What an optimistic status change (`UPDATE ... WHERE id = ? AND status = ?`) did.
enum class TransitionOutcome {
    applied,          ///< the row had the expected status and was changed
    status_mismatch,  ///< the row exists but its status was not the expected one; nothing changed
    not_found,        ///< no row has that id; nothing changed
};

/// "applied", "status_mismatch", "not_found".
std::string_view transitionOutcomeName(TransitionOutcome outcome);

/// Result of a compare-and-set on the status of a session or job. A mismatch is a normal result
/// (another thread or node got there first), not an Error; Errors are for failures of the store.
template <typename Status>
struct TransitionResult {
    TransitionOutcome outcome = TransitionOutcome::not_found;
    /// applied: the status the row has now; status_mismatch: the status found in the row, read in
    /// the same transaction; not_found: empty.
    std::optional<Status> current_status;

    bool applied() const { return outcome == TransitionOutcome::applied; }
};

}  // namespace crank::store
