#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace crank::store {

/// State of one version of an operation, stored as its name ("draft", ...).
///
/// Every change to an operation adds a new version in state draft. Publishing a version makes it
/// the one in use and moves the previously published version to archived. An archived version can
/// be published again (a rollback). At most one version of an operation is published.
///   draft -> published;  published -> archived;  archived -> published
enum class VersionState {
    draft,      ///< saved, not in use
    published,  ///< the version in use
    archived,   ///< was published, replaced by a later publish
};

/// Every VersionState, in declaration order.
inline constexpr std::array<VersionState, 3> kVersionStates = {
    VersionState::draft, VersionState::published, VersionState::archived};

/// "draft", "published", "archived".
std::string_view versionStateName(VersionState state);
/// The state named `name` (exact, lower case); nullopt for anything else.
std::optional<VersionState> parseVersionState(std::string_view name);

}  // namespace crank::store
