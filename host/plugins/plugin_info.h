#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace crank::plugins {

/// What became of one plugin library found in a plugin directory (or of a name in
/// plugins.enabled that no library provides).
enum class PluginStatus {
    loaded,    ///< initialised; its adapters and aggregators are registered
    rejected,  ///< refused (see PluginInfo::reason); registers nothing
    disabled,  ///< found but not listed in plugins.enabled; never initialised
    missing,   ///< listed in plugins.enabled but no library in the directories provides it
};

/// "loaded", "rejected", "disabled", "missing".
std::string_view pluginStatusName(PluginStatus status);

/// One row of `crankd plugins`. Fields the loader could not learn (the name of a file that is
/// not a plugin, the version of a missing plugin) are empty or zero.
struct PluginInfo {
    /// The library's name from its descriptor; the file name when the descriptor could not be
    /// read; the enabled name for `missing`.
    std::string name;
    std::string version;
    std::string description;
    std::uint32_t abi_major = 0;
    std::uint32_t abi_minor = 0;
    /// The library file (empty for `missing`).
    std::string path;
    PluginStatus status = PluginStatus::rejected;
    /// Why the library is not loaded, one sentence an operator can act on (empty when loaded).
    std::string reason;
    /// Names registered by the library, in registration order (empty unless loaded).
    std::vector<std::string> adapters;
    std::vector<std::string> aggregators;
};

}  // namespace crank::plugins
