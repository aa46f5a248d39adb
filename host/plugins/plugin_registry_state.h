#pragma once

// Internal to host/plugins: the state behind a PluginRegistry, shared by plugin_registry.cpp and
// plugin_loader.cpp. Nothing outside this folder includes it (it pulls in Boost.DLL).

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#ifndef BOOST_DLL_USE_STD_FS
#error "host/plugins builds Boost.DLL over std::filesystem (see CMakeLists.txt)"
#endif
#include <boost/dll/shared_library.hpp>

#include "plugins/plugin_host.h"
#include "plugins/plugin_registrar.h"
#include "plugins/plugin_registry.h"

namespace crank::plugins {

/// One initialised library. Its host and registrar objects stay at fixed addresses (the plugin
/// may keep the handles) until the library is unloaded.
struct LoadedLibrary {
    boost::dll::shared_library library;
    crank_plugin_descriptor descriptor{};
    std::string path;
    std::unique_ptr<PluginHost> host;
    std::unique_ptr<PluginRegistrar> registrar;
};

struct PluginRegistry::State {
    State() = default;
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    State(State&&) = delete;
    State& operator=(State&&) = delete;
    /// Forgets the handles, then calls each library's shutdown() (reverse load order) and
    /// unloads it.
    ~State();

    std::vector<PluginInfo> plugins;
    std::map<std::string, std::unique_ptr<AdapterHandle>, std::less<>> adapters;
    std::map<std::string, std::unique_ptr<AggregatorHandle>, std::less<>> aggregators;
    std::vector<std::unique_ptr<LoadedLibrary>> libraries;
    bool all_loaded = true;
};

}  // namespace crank::plugins
