#pragma once

#include <cstdint>
#include <optional>

namespace crank::store {

/// What Store::publishOperationVersion() did.
enum class PublishOutcome {
    applied,           ///< the version is now the published one
    version_mismatch,  ///< the published version was not the one the caller expected; no change
    not_found,         ///< the operation does not exist or is deleted, or it has no such version
};

/// Result of an optimistic publish. A mismatch means someone else published in between: reload
/// and ask the user again.
struct PublishResult {
    PublishOutcome outcome = PublishOutcome::not_found;
    /// applied: the version now published; version_mismatch: the version actually published
    /// (empty when none is); not_found: empty.
    std::optional<std::int64_t> published_version;

    bool applied() const { return outcome == PublishOutcome::applied; }
};

}  // namespace crank::store
