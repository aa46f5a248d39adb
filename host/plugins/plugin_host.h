#pragma once

#include <string>
#include <utility>

#include <crank/plugin.h>

namespace crank::plugins {

/// The host as one plugin library sees it (`crank_host`): what the host API needs to know about
/// the library behind a callback, i.e. its name for log lines. Lives as long as the library.
class PluginHost {
public:
    explicit PluginHost(std::string plugin_name) : plugin_name_(std::move(plugin_name)) {}

    const std::string& pluginName() const { return plugin_name_; }

    crank_host* handle() noexcept { return reinterpret_cast<crank_host*>(this); }
    static PluginHost* fromHandle(crank_host* host) noexcept {
        return reinterpret_cast<PluginHost*>(host);
    }

private:
    std::string plugin_name_;
};

}  // namespace crank::plugins
