#include "app/config_reload.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/core.h>

#include "admin/operation_catalog.h"
#include "app/access_updates.h"
#include "federation/federation.h"
#include "log/log.h"
#include "runtime/operation_compiler.h"
#include "util/json_string.h"

namespace crank::app {
namespace {

/// The sections of the file that only a restart applies, and why in a word.
struct Section {
    const char* name;
    const char* note;
};
constexpr Section kRestartSections[] = {
    {"server", "the listener, threads and server limits"},
    {"store", "the store"},
    {"mcp", "the MCP endpoint's settings"},
    {"plugins", "the plugins"},
    {"jobs", "the job workers"},
    {"audit", "the audit log"},
    {"admin", "the admin API and the UI"},
};

/// The text of section `name` in `c` ("" when the file has none).
std::string sectionOf(const config::Config& c, const char* name) {
    const auto it = c.sections.find(name);
    return it == c.sections.end() ? std::string() : it->second;
}

std::set<std::string> workspaceIds(const config::Config& c) {
    std::set<std::string> ids;
    for (const config::Workspace& w : c.auth.workspaces) {
        ids.insert(w.id);
    }
    return ids;
}

}  // namespace

std::string ReloadReport::toJson() const {
    const auto strings = [](const std::vector<std::string>& v) {
        std::string out = "[";
        for (std::size_t i = 0; i < v.size(); ++i) {
            out += (i == 0 ? "" : ",") + jsonString(v[i]);
        }
        return out + "]";
    };
    std::string out =
        std::string(R"({"applied":)") + (applied ? "true" : "false") + R"(,"errors":[)";
    for (std::size_t i = 0; i < errors.size(); ++i) {
        out += (i == 0 ? "" : ",") + std::string(R"({"path":)") + jsonString(errors[i].path) +
               R"(,"message":)" + jsonString(errors[i].message) + "}";
    }
    return out + R"(],"changes":)" + strings(changes) + R"(,"restart_required":)" +
           strings(restart) + R"(,"problems":)" + strings(problems) + "}";
}

std::vector<config::ConfigError> upstreamErrors(const config::Config& cfg,
                                                const plugins::PluginRegistry& registry) {
    std::vector<config::ConfigError> errors;
    for (std::size_t i = 0; i < cfg.upstreams.size(); ++i) {
        for (config::ConfigError& e : federation::Federation::check(
                 cfg.upstreams[i], registry, "upstreams[" + std::to_string(i) + "]")) {
            errors.push_back(std::move(e));
        }
    }
    return errors;
}

ConfigReloader::ConfigReloader(std::optional<std::string> path, config::LoadOptions options,
                               const config::Config& running,
                               const plugins::PluginRegistry& registry, Targets targets)
    : path_(std::move(path)),
      options_(std::move(options)),
      registry_(registry),
      targets_(targets),
      started_(running.sections),
      started_auth_(running.auth),
      applied_(running) {}

std::vector<std::string> ConfigReloader::restartNeeded(const config::Config& next) const {
    std::vector<std::string> out;
    for (const Section& s : kRestartSections) {
        const auto was = started_.find(s.name);
        if ((was == started_.end() ? std::string() : was->second) != sectionOf(next, s.name)) {
            out.push_back(fmt::format("{}: {}", s.name, s.note));
        }
    }
    // Against what started, not what the last reload applied: these were never applied.
    if (started_auth_.mode != next.auth.mode) {
        out.emplace_back("auth.mode: who must authenticate");
    }
    return out;
}

ConfigReloader::~ConfigReloader() {
    stopBackground();
}

void ConfigReloader::runInBackground() {
    const std::lock_guard lock(worker_mutex_);
    if (worker_stopping_) {
        return;
    }
    worker_pending_ = true;
    if (!worker_.joinable()) {
        worker_ = std::thread([this] {
            std::unique_lock wait(worker_mutex_);
            while (true) {
                worker_wake_.wait(wait, [&] { return worker_pending_ || worker_stopping_; });
                if (worker_stopping_) {
                    return;
                }
                worker_pending_ = false;
                wait.unlock();
                run();
                wait.lock();
            }
        });
    }
    worker_wake_.notify_all();
}

void ConfigReloader::stopBackground() {
    {
        const std::lock_guard lock(worker_mutex_);
        worker_stopping_ = true;
        worker_wake_.notify_all();
    }
    if (worker_.joinable()) {
        worker_.join();
    }
}

ConfigReloader::Outcome ConfigReloader::reload() {
    const ReloadReport report = run();
    return Outcome{report.applied, report.toJson()};
}

ReloadReport ConfigReloader::run() {
    const std::lock_guard lock(mutex_);
    ReloadReport report;
    if (!path_) {
        report.errors.push_back(
            {"", "crankd runs on its defaults (no --config): there is no file to reload"});
        log::error("reload refused: {}", report.errors.back().message);
        return report;
    }
    log::info("reloading {}", *path_);
    const std::optional<std::string> text = config::readConfigFile(*path_, report.errors);
    std::optional<config::Config> next;
    runtime::CompiledOperations compiled;
    if (text) {
        config::LoadResult loaded = config::loadConfigText(*text, *path_, options_);
        report.errors = std::move(loaded.errors);
        next = std::move(loaded.config);
    }
    if (next) {
        // What start-up checks against the plugins, checked again: nothing is applied unless
        // every part would start.
        compiled = runtime::compileOperations(*next, registry_);
        for (config::ConfigError& e : compiled.errors) {
            report.errors.push_back(std::move(e));
        }
        for (config::ConfigError& e : upstreamErrors(*next, registry_)) {
            report.errors.push_back(std::move(e));
        }
        if (workspaceIds(*next) != workspaceIds(applied_)) {
            report.errors.push_back(
                {"auth.workspaces", "workspaces were added or removed: that needs a restart"});
        }
    }
    // The file's operations first: a tool name taken by something else refuses the reload,
    // and nothing has been applied yet.
    if (report.errors.empty() && targets_.operations != nullptr) {
        admin::OperationCatalog::ConfigReload ops =
            targets_.operations->reloadConfigOperations(std::move(compiled.operations));
        report.errors = std::move(ops.errors);
        report.changes = std::move(ops.changes);
    }
    if (!report.errors.empty()) {
        log::error("reload of {} refused, nothing changed: {} error{}", *path_,
                   report.errors.size(), report.errors.size() == 1 ? "" : "s");
        for (const config::ConfigError& e : report.errors) {
            log::error("  {}", e.toString());
        }
        return report;
    }
    report.restart = restartNeeded(*next);

    // Agents, their keys, bounds and rates: every request from now on is checked against them.
    if (targets_.access != nullptr) {
        targets_.access->setFile(*next);
    }
    // The auth profiles: the file's operations were compiled against them above; the admin
    // API's that use a changed one are compiled again and served in place.
    if (targets_.operations != nullptr) {
        admin::OperationCatalog::ConfigReload profiles =
            targets_.operations->reloadAuthProfiles(*next);
        report.changes.insert(report.changes.end(), profiles.changes.begin(),
                              profiles.changes.end());
        for (const config::ConfigError& e : profiles.errors) {
            report.problems.push_back(e.toString());
        }
    }
    if (next->log_level != applied_.log_level) {
        if (targets_.log_level_from_command_line) {
            report.problems.emplace_back(
                "log.level: not applied, --log-level on the command line sets the level");
        } else {
            const std::string name = next->log_level.empty() ? "info" : next->log_level;
            log::setLevel(log::parseLevel(name).value_or(log::Level::info));
            report.changes.push_back("log.level: " + name);
        }
    }
    std::set<std::string> before;
    std::set<std::string> after;
    for (const config::Agent& a : applied_.auth.agents) {
        before.insert(a.id);
    }
    for (const config::Agent& a : next->auth.agents) {
        after.insert(a.id);
    }
    for (const std::string& id : before) {
        if (after.count(id) == 0) {
            report.changes.push_back("auth.agents[" + id + "]: removed (its keys are refused)");
        }
    }
    for (const std::string& id : after) {
        if (before.count(id) == 0) {
            report.changes.push_back("auth.agents[" + id + "]: added");
        }
    }
    report.changes.emplace_back("auth: agents' keys, and the concurrency and rate limits, applied");

    // Upstreams: only those whose config changed reconnect. Calls in flight on one removed or
    // replaced run on, for its request timeout at most, on its old connection.
    if (targets_.federation != nullptr) {
        federation::Federation& federation = *targets_.federation;
        std::map<std::string, const config::UpstreamConfig*> old;
        for (const config::UpstreamConfig& u : applied_.upstreams) {
            old[u.name] = &u;
        }
        std::set<std::string> kept;
        for (const config::UpstreamConfig& u : next->upstreams) {
            kept.insert(u.name);
            const auto was = old.find(u.name);
            Result<void> done;
            std::string what;
            if (was == old.end()) {
                // The file wins a name the admin API's upstream holds: that one is removed (its
                // calls in flight run on) and waits until the name is free again.
                if (federation.fromConfig(u.name) == false) {
                    (void)federation.removeUpstream(u.name,
                                                    std::chrono::milliseconds(u.request_timeout_ms),
                                                    federation::Federation::Drain::background);
                    report.changes.push_back("upstreams[" + u.name +
                                             "]: replaces the admin API's upstream of this name");
                }
                done = federation.addUpstream(u, true);
                what = "added";
            } else if (!(*was->second == u)) {
                done = federation.replaceUpstream(
                    u, std::chrono::milliseconds(was->second->request_timeout_ms),
                    federation::Federation::Drain::background);
                what = "reconnected with its new config";
            } else {
                continue;
            }
            if (done) {
                report.changes.push_back("upstreams[" + u.name + "]: " + what);
            } else {
                report.problems.push_back("upstreams[" + u.name + "]: " + done.error().message);
            }
        }
        for (const auto& [name, u] : old) {
            if (kept.count(name) != 0) {
                continue;
            }
            if (auto done = federation.removeUpstream(
                    name, std::chrono::milliseconds(u->request_timeout_ms),
                    federation::Federation::Drain::background)) {
                report.changes.push_back("upstreams[" + name + "]: removed");
            } else {
                report.problems.push_back("upstreams[" + name + "]: " + done.error().message);
            }
        }
    }

    // The admin API's upstreams are not the file's: a reload neither applies nor removes them.
    std::vector<config::UpstreamConfig> running =
        targets_.federation != nullptr ? targets_.federation->configUpstreams() : next->upstreams;
    applied_ = std::move(*next);
    applied_.upstreams = std::move(running);  // an upstream that could not open is not running
    report.applied = true;
    for (const std::string& change : report.changes) {
        log::info("reload: {}", change);
    }
    for (const std::string& problem : report.problems) {
        log::error("reload: {}", problem);
    }
    for (const std::string& what : report.restart) {
        log::warn("reload: changed, applied at the next restart: {}", what);
    }
    return report;
}

}  // namespace crank::app
