#pragma once

namespace crank::store {

/// Order of the rows a list or query call returns. Rows are ordered by their timestamp
/// (created_at, or ts for audit events) and then by id, so that the order is total and stable.
enum class SortOrder {
    newest_first,
    oldest_first,
};

}  // namespace crank::store
