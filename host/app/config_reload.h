#pragma once

// A reload of the config file while crankd runs (SIGHUP, POST /admin/api/reload; issue 29): the
// file is read and validated in full first (every error listed; nothing applied when one fails,
// the running config serves on), then what can change without a restart is applied: the file's
// operations (new, changed, removed: one list_changed per workspace), the upstreams (only those
// whose config changed reconnect; their calls in flight run on), the agents and their keys, the
// workspaces' and agents' concurrency bounds and rates. What else changed is
// named in the report and the log as needing a restart, never silently ignored.
//
// THREADING: reload() from any thread; reloads are serialized.

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "admin/config_reload_target.h"
#include "config/config.h"
#include "config/config_error.h"
#include "config/config_loader.h"
#include "plugins/plugin_registry.h"

namespace crank::admin {
class OperationCatalog;
}  // namespace crank::admin
namespace crank::federation {
class Federation;
}  // namespace crank::federation
namespace crank::app {
class AccessUpdates;
}  // namespace crank::app

namespace crank::app {

/// What one reload did.
struct ReloadReport {
    bool applied = false;                     ///< false: nothing changed (see errors)
    std::vector<config::ConfigError> errors;  ///< why the file was refused
    std::vector<std::string> changes;         ///< what was applied, one line each
    std::vector<std::string> restart;         ///< what changed but needs a restart
    std::vector<std::string> problems;        ///< applied, but an upstream could not open

    /// `{"applied", "errors": [{path, message}], "changes", "restart_required", "problems"}`.
    std::string toJson() const;
};

/// Every upstream of `cfg` has a loaded adapter that federates, and that adapter accepts its
/// config; the problems, each with its place in the file.
std::vector<config::ConfigError> upstreamErrors(const config::Config& cfg,
                                                const plugins::PluginRegistry& registry);

class ConfigReloader final : public admin::ConfigReloadTarget {
public:
    struct Targets {
        admin::OperationCatalog* operations = nullptr;
        federation::Federation* federation = nullptr;
        /// The agents, keys, bounds and rates (with the admin API's agents).
        AccessUpdates* access = nullptr;
        /// --log-level was given: it wins over the file's `log.level`, which is not applied.
        bool log_level_from_command_line = false;
    };

    /// `path`: the config file (nullopt: crankd runs on defaults, and a reload refuses).
    /// `running`: the config crankd started with. `options`: as at start (the --listen
    /// override).
    ConfigReloader(std::optional<std::string> path, config::LoadOptions options,
                   const config::Config& running, const plugins::PluginRegistry& registry,
                   Targets targets);

    ~ConfigReloader() override;
    ConfigReloader(const ConfigReloader&) = delete;
    ConfigReloader& operator=(const ConfigReloader&) = delete;

    /// Reads, validates and applies the file; what it did.
    ReloadReport run();
    /// A reload on the reloader's own thread (SIGHUP: the signal thread never waits on one, so
    /// SIGTERM is taken at once). Requests that come while one runs are coalesced into one more.
    void runInBackground();
    /// Ends the background thread, after the reload it runs (call once the federation stops:
    /// its controls then end soon).
    void stopBackground();
    /// run(), for the admin API.
    Outcome reload() override;

private:
    /// What `next` changes that only a restart applies: sections of the file compared with the
    /// file crankd started with, and the limits a reload leaves alone.
    std::vector<std::string> restartNeeded(const config::Config& next) const;

    std::optional<std::string> path_;
    config::LoadOptions options_;
    const plugins::PluginRegistry& registry_;
    Targets targets_;
    std::map<std::string, std::string> started_;  ///< the file's sections at start
    config::AuthConfig started_auth_;             ///< auth at start (mode, limits not reloaded)

    std::mutex worker_mutex_;  ///< the three below
    std::condition_variable worker_wake_;
    bool worker_pending_ = false;
    bool worker_stopping_ = false;
    std::thread worker_;  ///< started by the first runInBackground()
    std::mutex mutex_;
    config::Config applied_;  ///< guarded by mutex_: what runs now
};

}  // namespace crank::app
