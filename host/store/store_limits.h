#pragma once

// Bounds that every Store implementation applies. They are part of the interface contract: a
// caller may rely on never receiving more rows than kMaxListLimit from one call.

#include <cstddef>

namespace crank::store {

/// Rows a list or query call returns when the caller keeps the filter's default limit.
inline constexpr int kDefaultListLimit = 100;

/// Most rows one list or query call returns. A larger limit is clamped to this value; a limit
/// below 1 is rejected with ErrorCode::invalid_argument.
inline constexpr int kMaxListLimit = 1000;

/// Most rows one cleanup call (deleteExpiredSessions, deleteExpiredJobs) removes, so that a
/// backlog never holds the write lock for long. Call again while it returns the full batch.
inline constexpr int kMaxCleanupBatch = 1000;

/// Most events one Store::appendAuditBatch() call writes (in one transaction).
inline constexpr std::size_t kMaxAuditBatch = 1000;

/// Longest identifier-like text accepted, in bytes: ids, workspace/agent/operation ids, names,
/// protocol, mode, audit action and outcome, created_by.
inline constexpr std::size_t kMaxShortTextBytes = 1024;

/// Longest free text accepted, in bytes: cursors, comments and every *_json column.
inline constexpr std::size_t kMaxLongTextBytes = std::size_t{16} * 1024 * 1024;

}  // namespace crank::store
