#include "store/version_state.h"

namespace crank::store {

std::string_view versionStateName(VersionState state) {
    switch (state) {
        case VersionState::draft:
            return "draft";
        case VersionState::published:
            return "published";
        case VersionState::archived:
            return "archived";
    }
    return "draft";
}

std::optional<VersionState> parseVersionState(std::string_view name) {
    for (VersionState state : kVersionStates) {
        if (versionStateName(state) == name) {
            return state;
        }
    }
    return std::nullopt;
}

}  // namespace crank::store
