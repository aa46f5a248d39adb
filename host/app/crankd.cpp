#include "app/crankd.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iterator>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "admin/admin_api.h"
#include "admin/admin_context.h"
#include "admin/agent_catalog.h"
#include "admin/operation_catalog.h"
#include "admin/upstream_catalog.h"
#include "app/access_updates.h"
#include "app/config_reload.h"
#include "app/descriptor_budget.h"
#include "app/federation_directory.h"
#include "app/health_endpoints.h"
#include "app/metrics_endpoint.h"
#include "app/readiness.h"
#include "app/version.h"
#include "config/config_loader.h"
#include "config/isolation_check.h"
#include "federation/federation.h"
#include "graphql/import_command.h"
#include "http/http_server.h"
#include "http/stream_reactor.h"
#include "log/log.h"
#include "mcp/legacy/session_manager.h"
#include "mcp/mcp_endpoint.h"
#include "mcp/modern/request_state_seal.h"
#include "mcp/rate_limits.h"
#include "mcp/tool_registry.h"
#include "mcp/tool_tasks.h"
#include "openapi/import_command.h"
#include "plugins/plugin_registry.h"
#include "runtime/audit_cleaner.h"
#include "runtime/audit_log.h"
#include "runtime/audit_writer.h"
#include "runtime/operation_compiler.h"
#include "runtime/operation_runner.h"
#include "runtime/store_used_states.h"
#include "store/open_store.h"
#include "util/memory_trimmer.h"

namespace crank::app {
namespace {

/// server.node_id, else the host name (live sessions and jobs in the store name their node).
std::string nodeId(const config::ServerConfig& server) {
    if (!server.node_id.empty()) {
        return server.node_id;
    }
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') {
        return host;
    }
    return "local";
}

/// The seal of MRTR request states: single use for the whole deployment, in the store, within
/// each caller's share.
std::shared_ptr<const mcp::RequestStateSeal> requestStateSeal(
    const config::Config& c, const std::shared_ptr<store::Store>& store) {
    return mcp::configuredSeal(
        c.mcp, nodeId(c.server),
        std::make_shared<runtime::StoreUsedStates>(
            store, store::UsedStateLimits{c.mcp.max_request_states_per_agent,
                                          c.mcp.max_request_states_per_workspace}));
}

store::StoreOptions storeOptions(const config::StoreConfig& c) {
    store::StoreOptions o;
    o.backend = c.backend;
    o.path = c.path;
    o.busy_timeout_ms = static_cast<int>(c.busy_timeout_ms);
    o.pool_size = c.pool_size;
    o.cache_kib = static_cast<int>(c.cache_kib);
    return o;
}

/// The config file's options as at start (a reload reads the file with the same).
config::LoadOptions loadOptions(const CommandLine& cl) {
    config::LoadOptions options;
    options.listen_override = cl.listen;
    return options;
}

/// Loads the configuration or prints every error; nullopt when it is invalid.
std::optional<config::Config> loadConfig(const CommandLine& cl) {
    const config::LoadOptions options = loadOptions(cl);
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

/// Every upstream's adapter is loaded, can federate, and accepts the upstream's config; each
/// problem is printed with its place in the config. False when there is one.
bool checkUpstreams(const config::Config& cfg, const plugins::PluginRegistry& registry) {
    const std::vector<config::ConfigError> errors = upstreamErrors(cfg, registry);
    for (const config::ConfigError& e : errors) {
        log::error("{}: {}", cfg.source, e.toString());
    }
    return errors.empty();
}

plugins::PluginRegistry loadPlugins(const config::PluginsConfig& c) {
    plugins::LoadPluginsOptions options;
    options.directories = c.directories;
    options.enabled = c.enabled;
    options.default_directory = plugins::defaultPluginDirectory();
    return plugins::loadPlugins(options);
}

/// Compiles the operations against the loaded plugins, or prints every error.
std::optional<runtime::CompiledOperations> compileOperations(
    const config::Config& cfg, const plugins::PluginRegistry& registry) {
    runtime::CompiledOperations compiled = runtime::compileOperations(cfg, registry);
    if (compiled.errors.empty()) {
        return compiled;
    }
    std::fprintf(stderr, "crankd: %s: %zu configuration error%s:\n", cfg.source.c_str(),
                 compiled.errors.size(), compiled.errors.size() == 1 ? "" : "s");
    for (const config::ConfigError& e : compiled.errors) {
        std::fprintf(stderr, "  %s\n", e.toString().c_str());
    }
    return std::nullopt;
}

const char* signalName(int sig) {
    return sig == SIGTERM ? "SIGTERM" : (sig == SIGINT ? "SIGINT" : "a signal");
}

}  // namespace

int runCrankd(const CommandLine& cl, const sigset_t& stopSignals,
              const std::function<void(mcp::FunctionToolRegistry&)>& addTools) {
    if (cl.help) {
        std::fputs(usage().c_str(), stdout);
        return kExitOk;
    }
    if (cl.version) {
        std::printf("crankd %s\n", kVersion);
        return kExitOk;
    }
    log::configure(cl.log_format, cl.log_level, cl.log_limits);
    if (cl.import_openapi) {
        openapi::ImportOptions options;
        options.prefix = cl.prefix;
        options.server = cl.server;
        const openapi::CommandOutput output = openapi::runImportCommand(cl.openapi_path, options);
        std::fwrite(output.out.data(), 1, output.out.size(), stdout);
        std::fwrite(output.err.data(), 1, output.err.size(), stderr);
        return output.exit_code;
    }
    if (cl.import_graphql) {
        graphql_import::CommandOptions options;
        options.source = cl.graphql_source;
        options.prefix = cl.prefix;
        options.endpoint = cl.endpoint;
        options.depth = cl.depth;
        options.headers = cl.headers;
        const graphql_import::CommandOutput output = graphql_import::runImportCommand(options);
        std::fwrite(output.out.data(), 1, output.out.size(), stdout);
        std::fwrite(output.err.data(), 1, output.err.size(), stderr);
        return output.exit_code;
    }

    std::optional<config::Config> cfg = loadConfig(cl);
    if (!cfg) {
        return kExitConfig;
    }
    if (!cl.log_level_given && !cfg->log_level.empty()) {
        log::setLevel(log::parseLevel(cfg->log_level).value_or(log::Level::info));
    }
    if (cl.plugins) {
        const plugins::PluginRegistry registry = loadPlugins(cfg->plugins);
        const std::string text = cl.json ? plugins::formatPluginJson(registry) + "\n"
                                         : plugins::formatPluginTable(registry);
        std::fputs(text.c_str(), stdout);
        return registry.allLoaded() ? kExitOk : kExitRuntime;
    }
    if (cl.upstreams) {
        const plugins::PluginRegistry registry = loadPlugins(cfg->plugins);
        bool allOk = true;
        if (cfg->upstreams.empty()) {
            std::printf("%s: no upstreams are configured\n", cfg->source.c_str());
        }
        for (const auto& r : federation::Federation::test(cfg->upstreams, registry)) {
            allOk = allOk && r.ok;
            std::printf("%-24s %s%s%s\n    %s\n", r.name.c_str(), r.ok ? "ok" : "FAILED",
                        r.ok ? "" : ": ", r.detail.c_str(),
                        r.status_json.empty() ? "{}" : r.status_json.c_str());
        }
        return allOk ? kExitOk : kExitRuntime;
    }
    // The registry outlives everything that may call into a plugin (declared first, destroyed
    // last): the runner, the tools, the endpoint and the server.
    plugins::PluginRegistry registry = loadPlugins(cfg->plugins);
    std::optional<runtime::CompiledOperations> operations = compileOperations(*cfg, registry);
    if (!operations) {
        return kExitConfig;
    }
    if (!checkUpstreams(*cfg, registry)) {
        return kExitConfig;
    }
    const std::vector<std::string> isolation = config::isolationWarnings(*cfg);
    if (cl.check) {
        for (const std::string& warning : isolation) {
            std::printf("%s: warning: %s\n", cfg->source.c_str(), warning.c_str());
        }
        std::printf(
            "%s: configuration is valid (%zu operation%s, %zu auth profile%s, %zu agent%s)\n",
            cfg->source.c_str(), cfg->operations.size(), cfg->operations.size() == 1 ? "" : "s",
            cfg->auth_profiles.size(), cfg->auth_profiles.size() == 1 ? "" : "s",
            cfg->auth.agents.size(), cfg->auth.agents.size() == 1 ? "" : "s");
        return kExitOk;
    }

    log::info("crankd {} starting (config: {})", kVersion, cfg->source);
    for (const std::string& warning : isolation) {
        log::warn("{}", warning);
    }
    if (auto descriptors = ensureDescriptors(*cfg); !descriptors) {
        log::error("{}", descriptors.error().message);
        return kExitRuntime;
    }
    auto opened = store::openStore(storeOptions(cfg->store));
    if (!opened) {
        log::error("cannot open the store: {}", opened.error().message);
        return kExitRuntime;
    }
    std::shared_ptr<store::Store> store = std::move(opened).value();

    auto readiness = std::make_shared<Readiness>();
    readiness->add("store", [store] { return store->ping(); });
    // Retention of the audit log (`audit`): its oldest events go, at start and every interval.
    runtime::AuditCleaner::Options auditRetention;
    auditRetention.max_age_ms = cfg->audit.max_age_days * runtime::kMsPerDay;
    auditRetention.max_events = cfg->audit.max_events;
    auditRetention.interval_ms = cfg->audit.clean_interval_ms;
    runtime::AuditCleaner auditCleaner(store, auditRetention);
    auditCleaner.start();
    const bool pluginsLoaded = registry.allLoaded();
    readiness->add("plugins", [pluginsLoaded]() -> Result<void> {
        if (pluginsLoaded) {
            return {};
        }
        return Error{ErrorCode::unavailable,
                     "an enabled plugin was refused or is missing (see `crankd plugins`)"};
    });

    http::StreamReactorOptions streamOptions;
    streamOptions.heartbeat_interval_ms = cfg->mcp.heartbeat_interval_ms;
    streamOptions.max_buffered_bytes = static_cast<std::size_t>(cfg->mcp.stream_buffer_bytes);
    streamOptions.max_streams = static_cast<std::size_t>(cfg->mcp.max_streams);
    streamOptions.stall_timeout_ms = cfg->mcp.stream_stall_timeout_ms;
    http::StreamReactor reactor(streamOptions);
    if (auto started = reactor.start(); !started) {
        log::error("cannot start the stream reactor: {}", started.error().message);
        return kExitRuntime;
    }
    mcp::SessionLimits sessionLimits;
    sessionLimits.max_sessions = static_cast<std::size_t>(cfg->mcp.max_sessions);
    sessionLimits.idle_timeout = std::chrono::milliseconds(cfg->mcp.session_idle_timeout_ms);
    sessionLimits.replay.events_per_stream = static_cast<std::size_t>(cfg->mcp.replay_events);
    sessionLimits.replay.bytes_per_session = static_cast<std::size_t>(cfg->mcp.replay_bytes);
    sessionLimits.replay.streams_per_session = static_cast<std::size_t>(cfg->mcp.replay_streams);
    sessionLimits.replay.retry_ms = static_cast<int>(cfg->mcp.sse_retry_ms);
    sessionLimits.replay.budget =
        std::make_shared<mcp::ReplayBudget>(static_cast<std::size_t>(cfg->mcp.replay_budget_bytes));
    mcp::SessionManager sessions(sessionLimits);
    sessions.startSweeper(std::chrono::milliseconds(
        std::clamp<std::int64_t>(cfg->mcp.session_idle_timeout_ms / 4, 100, 60'000)));
    // Before the runner and the tool registries: their calls report into it until they stop.
    metrics::Registry metricRegistry;
    runtime::RuntimeOptions runtimeOptions;
    runtimeOptions.metrics = &metricRegistry;
    runtimeOptions.audit_sample_reads = cfg->audit.sample_reads;
    // The audit trail is written behind the calls, in batches (docs/configuration.md, `audit`).
    runtime::AuditWriter::Options auditWrites;
    auditWrites.queue_max = static_cast<std::size_t>(cfg->audit.queue_max);
    auditWrites.batch_max = static_cast<std::size_t>(cfg->audit.write_batch);
    auditWrites.gather = std::chrono::milliseconds(cfg->audit.write_delay_ms);
    auditWrites.metrics = &metricRegistry;
    auto auditWriter = std::make_shared<runtime::AuditWriter>(store, auditWrites);
    runtimeOptions.audit_writer = auditWriter;
    runtime::OperationRunner runner(runtimeOptions, store, &cfg->auth, cfg->jobs,
                                    nodeId(cfg->server));
    // One server per workspace: each publishes that workspace's operations.
    std::map<std::string, std::unique_ptr<mcp::FunctionToolRegistry>> workspaceTools;
    std::map<std::string, mcp::ToolRegistry*> endpointTools;
    // Every workspace's calls to one upstream share its bound: a hanging upstream holds at most
    // server.max_calls_per_upstream of the node's call slots.
    const auto upstreamSlots =
        std::make_shared<mcp::UpstreamSlots>(cfg->server.effectiveMaxCallsPerUpstream());
    // Request rates (per node): a workspace's, an agent's, a tool's.
    const auto rates = std::make_shared<mcp::RateLimits>(cfg->auth);
    for (const config::Workspace& workspace : cfg->auth.workspaces) {
        auto& wsTools = workspaceTools[workspace.id];
        wsTools = std::make_unique<mcp::FunctionToolRegistry>();
        wsTools->limitUpstreams(upstreamSlots);
        wsTools->limitRates(rates);
        endpointTools[workspace.id] = wsTools.get();
        std::vector<runtime::OperationPtr> published;
        std::copy_if(operations->operations.begin(), operations->operations.end(),
                     std::back_inserter(published), [&](const runtime::OperationPtr& op) {
                         return op->config.workspace == workspace.id;
                     });
        runtime::publishOperations(published, runner, *wsTools);
    }
    mcp::FunctionToolRegistry& tools = *workspaceTools.at("default");
    // Operations managed through the admin API: their published versions are served next to
    // the config file's, and followed in the store (other nodes publish too).
    admin::OperationCatalog::Deps catalogDeps;
    catalogDeps.config = &*cfg;
    catalogDeps.plugins = &registry;
    catalogDeps.store = store;
    catalogDeps.runner = &runner;
    for (auto& [workspace, wsTools] : workspaceTools) {
        catalogDeps.tools[workspace] = wsTools.get();
    }
    catalogDeps.config_operations = operations->operations;
    admin::OperationCatalog catalog(std::move(catalogDeps));
    // Before the job workers start: recovery looks up the jobs' operations, admin ones too.
    catalog.start(std::chrono::milliseconds(cfg->admin.sync_interval_ms));
    runner.startJobs();
    // Federated upstreams publish next to the operations (which keep their names).
    std::map<std::string, mcp::FunctionToolRegistry*> federatedTools;
    for (auto& [workspace, wsTools] : workspaceTools) {
        federatedTools[workspace] = wsTools.get();
    }
    // Calls to upstreams are audited as every other call: through an AuditLog, queued to the
    // write-behind writer.
    auto federationAudit = std::make_shared<runtime::AuditLog>(store, 1, auditWriter);
    federation::Federation federation(cfg->upstreams, registry, std::move(federatedTools),
                                      static_cast<std::size_t>(cfg->mcp.tools_page_size),
                                      federationAudit);
    federation.limitUpstreams(upstreamSlots);  // catalog requests share the tools' bound
    if (auto started = federation.start(); !started) {
        log::error("{}", started.error().message);
        runner.stop();
        runner.shutdown();
        auditWriter->stop();
        return kExitConfig;
    }
    if (!cfg->upstreams.empty()) {
        readiness->add("upstreams", [&federation]() -> Result<void> {
            if (federation.settled()) {
                return {};
            }
            return Error{ErrorCode::unavailable, "the upstreams' lists are being fetched"};
        });
    }
    const auto loaded = std::count_if(
        registry.plugins().begin(), registry.plugins().end(),
        [](const plugins::PluginInfo& p) { return p.status == plugins::PluginStatus::loaded; });
    log::info("{} plugin librar{} loaded; {} operation{} published", loaded,
              loaded == 1 ? "y" : "ies", operations->operations.size(),
              operations->operations.size() == 1 ? "" : "s");
    if (addTools) {
        addTools(tools);
    }
    // Tasks: the async jobs (durable, any node), then host tools that can run as tasks (this
    // node's; declared before the endpoint, so that they outlive it).
    mcp::ToolTasks::Options toolTaskLimits;
    toolTaskLimits.max_tasks = static_cast<std::size_t>(cfg->mcp.max_tool_tasks);
    toolTaskLimits.max_tasks_per_agent =
        static_cast<std::size_t>(cfg->mcp.max_tool_tasks_per_agent);
    toolTaskLimits.max_running = static_cast<std::size_t>(cfg->mcp.max_running_tool_tasks);
    toolTaskLimits.ttl_ms = cfg->mcp.tool_task_ttl_ms;
    toolTaskLimits.input_wait_ms = cfg->mcp.input_wait_ms;
    toolTaskLimits.max_rounds = static_cast<int>(cfg->mcp.max_input_rounds);
    mcp::ToolTasks toolTasks(toolTaskLimits, endpointTools);
    mcp::TaskBackends taskBackends({runner.tasks(), &toolTasks});
    mcp::McpEndpoint endpoint(*cfg, mcp::ServerIdentity{"crank", kVersion},
                              std::move(endpointTools), sessions, reactor, &taskBackends,
                              federation.catalogs(), requestStateSeal(*cfg, store));

    admin::AdminApi adminApi(
        catalog, *cfg,
        cfg->admin.ui_directory.empty() ? admin::defaultUiDirectory() : cfg->admin.ui_directory,
        kVersion);
    FederationDirectory upstreamDirectory(federation, registry);
    // Upstreams managed through the admin API: their published versions run next to the config
    // file's, and are followed in the store (other nodes publish too).
    admin::UpstreamCatalog upstreamCatalog(*cfg, store, upstreamDirectory);
    upstreamCatalog.start(std::chrono::milliseconds(cfg->admin.sync_interval_ms));
    adminApi.serveUpstreams(upstreamDirectory, &upstreamCatalog);
    // Who may call: the file's agents and the admin API's, joined (app/access_updates.h).
    AccessUpdates access(*cfg, endpoint, rates, runner);
    admin::AgentCatalog agentCatalog(
        *cfg, store,
        [&access](std::vector<config::Agent> agents) { access.setApiAgents(std::move(agents)); },
        [&access] { return access.fileAgents(); });
    agentCatalog.start(std::chrono::milliseconds(cfg->admin.sync_interval_ms));
    adminApi.serveAgents(agentCatalog);
    ConfigReloader reloader(
        cl.config_path, loadOptions(cl), *cfg, registry,
        ConfigReloader::Targets{&catalog, &federation, &access, cl.log_level_given});
    adminApi.serveReload(reloader);

    auto router = std::make_shared<http::Router>();
    addHealthEndpoints(*router, readiness);
    endpoint.addRoutes(*router);
    adminApi.addRoutes(*router);
    MetricsSources metricSources;
    metricSources.plugins = &registry;
    metricSources.store = store;
    metricSources.runner = &runner;
    metricSources.sessions = &sessions;
    metricSources.reactor = &reactor;
    metricSources.audit_writer = auditWriter.get();
    metricSources.endpoint = &endpoint;
    for (auto& [workspace, wsTools] : workspaceTools) {
        metricSources.tools[workspace] = wsTools.get();
    }
    registerMetrics(metricRegistry, metricSources);
    addMetricsEndpoint(*router, metricRegistry, cfg->server);

    http::HttpServer server(cfg->server, router);
    if (auto started = server.start(); !started) {
        log::error("{}", started.error().message);
        return kExitRuntime;
    }
    log::info("listening on http://{}", server.boundAddress().toString());
    if (cfg->admin.token) {
        log::info("admin API at http://{}/admin/api/, web UI at http://{}/ui/",
                  server.boundAddress().toString(), server.boundAddress().toString());
    }

    util::MemoryTrimmer trimmer(std::chrono::milliseconds(cfg->server.memory_trim_interval_ms));
    trimmer.start();

    // SIGHUP reloads the config file on the reloader's own thread (SIGTERM never waits for a
    // reload); SIGTERM and SIGINT stop.
    int sig = 0;
    while (true) {
        if (sigwait(&stopSignals, &sig) != 0) {
            continue;
        }
        if (sig != SIGHUP) {
            break;
        }
        log::info("received SIGHUP");
        reloader.runInBackground();
    }
    trimmer.stop();
    readiness->setDraining();
    log::info("received {}, draining for at most {} ms", signalName(sig),
              cfg->server.shutdown_grace_ms);
    // Running windows stop now (stop_reason cancelled) and answer their clients, so that the
    // drain is bounded by the grace period and not by a window's duration.
    runner.stop();
    adminApi.stop();  // test runs end now (their sessions stopped, their jobs cancelled)
    // At the end of the grace period, requests still waiting on a federated upstream (tools/call,
    // held calls, catalog requests) are cancelled, their upstreams told, and answer at once; a
    // held call's question waiting for its client is answered with an error (the upstream's
    // request behind it could not end otherwise).
    const http::ShutdownReport report = server.shutdown(
        std::chrono::milliseconds(cfg->server.shutdown_grace_ms), [&federation, &endpoint] {
            endpoint.abandonHeldCalls();
            federation.cancelRequests();
        });
    if (report.aborted > 0) {
        log::warn("grace period over: closed {} connection(s) still in flight", report.aborted);
    }
    if (report.stuck > 0) {
        log::error("{} request(s) still running after their cancellation; not waiting for them",
                   report.stuck);
    }
    // No client can answer a held call any more: its questions fail now, and the upstream
    // requests behind them end (federation.stop() below waits for them).
    endpoint.abandonHeldCalls();
    // Open SSE streams hold no request: flush what is queued on them briefly, then close.
    reactor.shutdown(
        std::chrono::milliseconds(std::min<std::int64_t>(cfg->server.shutdown_grace_ms, 1000)));
    sessions.closeAll();
    catalog.stop();
    agentCatalog.stop();
    // The upstream catalog's sync ends after the upstream it is at, whose open the federation's
    // stop cuts short; then it is joined.
    upstreamCatalog.requestStop();
    federation.stop();
    upstreamCatalog.stop();
    reloader.stopBackground();  // a reload under way: its controls ended with the federation
    const std::size_t abandoned = runner.shutdown();
    auditWriter->stop();  // after the last call and job event: everything queued is written
    if (abandoned > 0) {
        // Their plugins' threads may still run: unloading the libraries would pull the code
        // from under them. The process is about to exit; the memory goes with it.
        log::error(
            "{} upstream stream(s) never completed after their cancel; plugin libraries "
            "stay loaded until exit",
            abandoned);
        new plugins::PluginRegistry(std::move(registry));  // NOLINT: deliberate leak
    }
    log::info("stopped");
    return kExitOk;
}

int crankdMain(int argc, char** argv,
               const std::function<void(mcp::FunctionToolRegistry&)>& addTools) {
    // Block the stop signals before any thread exists: every thread inherits the mask, and the
    // main thread alone takes them with sigwait(), outside any signal-handler restrictions.
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGTERM);
    sigaddset(&stopSignals, SIGINT);
    sigaddset(&stopSignals, SIGHUP);  // a reload, not an end (runCrankd)
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);  // a peer closing a socket is an error value, not a death

    std::vector<std::string_view> args(argv + 1, argv + argc);
    auto commandLine = parseCommandLine(args);
    if (!commandLine) {
        std::fprintf(stderr, "crankd: %s\nTry 'crankd --help'.\n",
                     commandLine.error().message.c_str());
        return kExitUsage;
    }
    try {
        return runCrankd(*commandLine, stopSignals, addTools);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "crankd: fatal: %s\n", e.what());
        return kExitRuntime;
    }
}

}  // namespace crank::app
