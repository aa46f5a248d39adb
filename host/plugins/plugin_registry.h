#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/adapter_handle.h"
#include "plugins/aggregator_handle.h"
#include "plugins/plugin_info.h"

namespace crank::plugins {

/// What loadPlugins() loads.
struct LoadPluginsOptions {
    /// Searched in order (config::PluginsConfig::directories). Empty: `default_directory`.
    std::vector<std::string> directories;
    /// Names of the libraries to initialise (config::PluginsConfig::enabled). Empty: all found.
    std::vector<std::string> enabled;
    /// Used when `directories` is empty; see defaultPluginDirectory().
    std::string default_directory;
};

/// `<directory of the running executable>/../lib/crank/plugins`, normalised. Empty if the
/// executable's location cannot be found.
std::string defaultPluginDirectory();

/// The plugin libraries crankd loaded, and the adapters and aggregators they registered.
///
/// OWNERSHIP: the registry owns the libraries. Its destructor calls each loaded library's
/// shutdown() (in reverse load order) and then unloads it: every call, stream and aggregate
/// obtained through its handles must have ended (streams and aggregates destroyed) before the
/// registry is destroyed, and no handle pointer may be used afterwards.
///
/// Movable (the state lives behind one pointer, so handle pointers survive a move); not
/// copyable. A moved-from registry is empty.
///
/// THREADING: immutable once loadPlugins() returns; every const member is safe from any thread.
class PluginRegistry {
public:
    /// An empty registry (no plugins).
    PluginRegistry();
    ~PluginRegistry();
    PluginRegistry(PluginRegistry&& other) noexcept;
    PluginRegistry& operator=(PluginRegistry&& other) noexcept;
    PluginRegistry(const PluginRegistry&) = delete;
    PluginRegistry& operator=(const PluginRegistry&) = delete;

    /// The adapter registered as `name` (an operation's `protocol`), or nullptr.
    const AdapterHandle* adapter(std::string_view name) const;
    /// The aggregator registered as `name` (an operation's `aggregation_mode`), or nullptr.
    const AggregatorHandle* aggregator(std::string_view name) const;
    /// Every library found, in scan order (directories in order, file names sorted), then the
    /// enabled names that no library provides (status missing).
    const std::vector<PluginInfo>& plugins() const;
    /// Registered names, sorted.
    std::vector<std::string> adapterNames() const;
    std::vector<std::string> aggregatorNames() const;
    /// False when a library that should have loaded did not: a rejected library whose name is
    /// enabled (every library when plugins.enabled is empty), or an enabled name that is missing.
    /// For readiness.
    bool allLoaded() const;

    /// Internal state, defined in plugin_registry.cpp (the loader fills it).
    struct State;

private:
    explicit PluginRegistry(std::unique_ptr<State> state);
    friend PluginRegistry loadPlugins(const LoadPluginsOptions& options);

    std::unique_ptr<State> state_;
};

/// Scans the directories (not recursively, `*.so` files sorted by name), loads each library
/// (RTLD_NOW | RTLD_LOCAL), checks its ABI version and descriptor, initialises the enabled ones
/// and registers their adapters and aggregators. Never throws and never stops at a bad library:
/// every refusal is recorded in PluginInfo::reason and logged as a warning.
PluginRegistry loadPlugins(const LoadPluginsOptions& options);

/// The `crankd plugins` table: columns NAME VERSION ABI STATUS PATH, one row per library; below
/// each row the reason it is not loaded, or the adapters and aggregators it registered.
std::string formatPluginTable(const PluginRegistry& registry);

/// The same as a JSON document for the admin API:
/// {"plugins":[{"name","version","description","abi":"1.0","path","status","reason",
/// "adapters":[...],"aggregators":[...]}],"all_loaded":bool}.
std::string formatPluginJson(const PluginRegistry& registry);

}  // namespace crank::plugins
