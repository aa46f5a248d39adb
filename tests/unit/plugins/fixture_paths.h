#pragma once

#include <string>
#include <string_view>

namespace crank::plugins::testing {

/// The directory of one broken-plugin scenario (tests/fixtures/plugins/broken/CMakeLists.txt).
inline std::string scenario(std::string_view name) {
    return std::string(CRANK_BROKEN_PLUGIN_DIR) + "/" + std::string(name);
}

}  // namespace crank::plugins::testing
