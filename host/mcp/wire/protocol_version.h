#pragma once

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>

namespace crank::mcp {

/// 2025-era protocol versions served, newest first. A request without MCP-Protocol-Version means
/// 2025-03-26, as the specification says.
inline constexpr const char* kSupportedVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};
inline constexpr const char* kLatestVersion = "2025-11-25";
inline constexpr const char* kDefaultHeaderVersion = "2025-03-26";

/// True when `version` is one of kSupportedVersions.
inline bool versionSupported(std::string_view version) {
    return std::any_of(std::begin(kSupportedVersions), std::end(kSupportedVersions),
                       [&](const char* v) { return version == v; });
}

/// What the server says it is (serverInfo).
struct ServerIdentity {
    std::string name = "crank";
    std::string version;
};

}  // namespace crank::mcp
