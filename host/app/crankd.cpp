#include "app/crankd.h"

#include <cstdio>
#include <memory>

#include "app/health_endpoints.h"
#include "app/readiness.h"
#include "app/version.h"
#include "config/config_loader.h"
#include "http/http_server.h"
#include "log/log.h"
#include "store/open_store.h"

namespace crank::app {
namespace {

store::StoreOptions storeOptions(const config::StoreConfig& c) {
    store::StoreOptions o;
    o.backend = c.backend;
    o.path = c.path;
    o.busy_timeout_ms = static_cast<int>(c.busy_timeout_ms);
    o.pool_size = c.pool_size;
    return o;
}

/// Loads the configuration or prints every error; nullopt when it is invalid.
std::optional<config::Config> loadConfig(const CommandLine& cl) {
    config::LoadOptions options;
    options.listen_override = cl.listen;
    config::LoadResult result;
    if (cl.config_path) {
        result = config::loadConfigFile(*cl.config_path, options);
    } else {
        result = config::loadConfigText("{}", "(defaults)", options);
    }
    if (!result.errors.empty()) {
        const std::string source = cl.config_path.value_or("(defaults)");
        std::fprintf(stderr, "crankd: %s: %zu configuration error%s:\n", source.c_str(),
                     result.errors.size(), result.errors.size() == 1 ? "" : "s");
        for (const config::ConfigError& e : result.errors) {
            std::fprintf(stderr, "  %s\n", e.toString().c_str());
        }
        return std::nullopt;
    }
    return std::move(result.config);
}

const char* signalName(int sig) {
    return sig == SIGTERM ? "SIGTERM" : (sig == SIGINT ? "SIGINT" : "a signal");
}

}  // namespace

int runCrankd(const CommandLine& cl, const sigset_t& stopSignals) {
    if (cl.help) {
        std::fputs(usage().c_str(), stdout);
        return kExitOk;
    }
    if (cl.version) {
        std::printf("crankd %s\n", kVersion);
        return kExitOk;
    }
    log::configure(cl.log_format, cl.log_level);

    std::optional<config::Config> cfg = loadConfig(cl);
    if (!cfg) {
        return kExitConfig;
    }
    if (cl.check) {
        std::printf(
            "%s: configuration is valid (%zu operation%s, %zu auth profile%s, %zu agent%s)\n",
            cfg->source.c_str(), cfg->operations.size(), cfg->operations.size() == 1 ? "" : "s",
            cfg->auth_profiles.size(), cfg->auth_profiles.size() == 1 ? "" : "s",
            cfg->auth.agents.size(), cfg->auth.agents.size() == 1 ? "" : "s");
        return kExitOk;
    }

    log::info("crankd {} starting (config: {})", kVersion, cfg->source);
    auto opened = store::openStore(storeOptions(cfg->store));
    if (!opened) {
        log::error("cannot open the store: {}", opened.error().message);
        return kExitRuntime;
    }
    std::shared_ptr<store::Store> store = std::move(opened).value();

    auto readiness = std::make_shared<Readiness>();
    readiness->add("store", [store] { return store->ping(); });

    auto router = std::make_shared<http::Router>();
    addHealthEndpoints(*router, readiness);

    http::HttpServer server(cfg->server, router);
    if (auto started = server.start(); !started) {
        log::error("{}", started.error().message);
        return kExitRuntime;
    }
    log::info("listening on http://{}", server.boundAddress().toString());

    int sig = 0;
    while (sigwait(&stopSignals, &sig) != 0) {
    }
    readiness->setDraining();
    log::info("received {}, draining for at most {} ms", signalName(sig),
              cfg->server.shutdown_grace_ms);
    const http::ShutdownReport report =
        server.shutdown(std::chrono::milliseconds(cfg->server.shutdown_grace_ms));
    if (report.aborted > 0) {
        log::warn("grace period over: closed {} connection(s) still in flight", report.aborted);
    }
    log::info("stopped");
    return kExitOk;
}

}  // namespace crank::app
