#pragma once

#include <string>
#include <utility>

#include "log/log.h"
#include "log/throttle.h"
#include <crank/plugin.h>

namespace crank::plugins {

/// The host as one plugin library sees it (`crank_host`): what the host API needs to know about
/// the library behind a callback, i.e. its name for log lines. Lives as long as the library.
class PluginHost {
public:
    explicit PluginHost(std::string plugin_name)
        : plugin_name_(std::move(plugin_name)),
          log_throttle_(log::limits().source_burst, log::limits().source_period, kMaxLogSources) {}

    const std::string& pluginName() const { return plugin_name_; }

    /// Bounds the log lines of one source of this plugin (a call's context, or the plugin
    /// itself for lines made outside any call): what upstreams send (stderr, errors) must not be
    /// able to fill the log.
    log::KeyedThrottle& logThrottle() { return log_throttle_; }

    /// Sources of one plugin with a throttle of their own; the rest share one.
    static constexpr std::size_t kMaxLogSources = 1024;

    crank_host* handle() noexcept { return reinterpret_cast<crank_host*>(this); }
    static PluginHost* fromHandle(crank_host* host) noexcept {
        return reinterpret_cast<PluginHost*>(host);
    }

private:
    std::string plugin_name_;
    log::KeyedThrottle log_throttle_;
};

}  // namespace crank::plugins
