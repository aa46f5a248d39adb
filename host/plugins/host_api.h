#pragma once

#include "log/log.h"
#include <crank/plugin.h>

namespace crank::plugins {

/// The callback table handed to every plugin's init() (`crank_host_api`, ABI CRANK_ABI_MAJOR.
/// CRANK_ABI_MINOR). Its functions only translate the opaque handles into the host classes
/// behind them (PluginHost, PluginRegistrar, PluginCall, PluginWriter) and never let an
/// exception out. Static: valid for the life of the process.
const crank_host_api* hostApi() noexcept;

/// The host log level for a plugin's level (an unknown value counts as error).
log::Level logLevelFromPlugin(crank_log_level level) noexcept;

}  // namespace crank::plugins
