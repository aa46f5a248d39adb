#include "app/metrics_endpoint.h"

#include <optional>
#include <string>
#include <string_view>

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>

#include "http/origin_policy.h"
#include "http/responses.h"
#include "http/stream_reactor.h"
#include "log/log.h"
#include "mcp/legacy/session_manager.h"
#include "mcp/mcp_endpoint.h"
#include "mcp/tool_registry.h"
#include "plugins/plugin_registry.h"
#include "runtime/operation_runner.h"
#include "store/sqlite_memory.h"
#include "store/store.h"
#include "util/heap_usage.h"
#include "util/sha256.h"

namespace crank::app {

void registerMetrics(metrics::Registry& metrics, const MetricsSources& s) {
    if (s.endpoint != nullptr) {
        metrics::Registry* registry = &metrics;
        mcp::McpEndpoint::Observer observer;
        observer.message = [registry](std::string_view method, std::string_view outcome,
                                      std::chrono::steady_clock::duration elapsed) {
            const std::string name(method);
            registry
                ->counter("crank_mcp_requests_total",
                          "JSON-RPC messages received on the MCP endpoint, by method and outcome",
                          {{"method", name}, {"outcome", std::string(outcome)}})
                .inc();
            registry
                ->histogram("crank_mcp_request_duration_seconds",
                            "time from a JSON-RPC message's arrival to its answer, by method",
                            metrics::latencyBuckets(), {{"method", name}})
                .observe(std::chrono::duration<double>(elapsed).count());
        };
        observer.http = [registry](std::string_view verb, int status) {
            registry
                ->counter("crank_mcp_http_requests_total",
                          "HTTP requests to the MCP endpoint, by verb and response status",
                          {{"verb", std::string(verb)}, {"status", std::to_string(status)}})
                .inc();
        };
        s.endpoint->observe(std::move(observer));
    }
    for (const auto& [workspace, tools] : s.tools) {
        const std::string ws = workspace;
        metrics::Registry* registry = &metrics;
        tools->observeCalls([registry, ws](std::string_view tool, std::string_view outcome,
                                           std::chrono::steady_clock::duration elapsed) {
            const std::string name(tool);
            registry
                ->counter("crank_tool_calls_total", "MCP tools/call handled, by outcome",
                          {{"workspace", ws}, {"tool", name}, {"outcome", std::string(outcome)}})
                .inc();
            registry
                ->histogram("crank_tool_call_duration_seconds",
                            "time from a tools/call's start to its result",
                            metrics::latencyBuckets(), {{"workspace", ws}, {"tool", name}})
                .observe(std::chrono::duration<double>(elapsed).count());
        });
    }
    const plugins::PluginRegistry* plugins = s.plugins;
    metrics.gauge("crank_plugins", "plugin libraries found, by status", [plugins] {
        std::map<std::string, double> byStatus;
        for (const plugins::PluginStatus status :
             {plugins::PluginStatus::loaded, plugins::PluginStatus::rejected,
              plugins::PluginStatus::disabled, plugins::PluginStatus::missing}) {
            byStatus[std::string(plugins::pluginStatusName(status))] = 0;
        }
        for (const plugins::PluginInfo& info : plugins->plugins()) {
            byStatus[std::string(plugins::pluginStatusName(info.status))] += 1;
        }
        std::vector<std::pair<metrics::Labels, double>> out;
        out.reserve(byStatus.size());
        for (const auto& [status, n] : byStatus) {
            out.push_back({{{"status", status}}, n});
        }
        return out;
    });
    metrics.gauge("crank_plugin_load_failures",
                  "enabled plugin libraries that were refused or are missing", [plugins] {
                      double n = 0;
                      for (const plugins::PluginInfo& info : plugins->plugins()) {
                          n += info.status == plugins::PluginStatus::rejected ||
                                       info.status == plugins::PluginStatus::missing
                                   ? 1
                                   : 0;
                      }
                      return std::vector<std::pair<metrics::Labels, double>>{{{}, n}};
                  });
    const std::shared_ptr<store::Store> store = s.store;
    metrics.gauge("crank_jobs", "async jobs in the store (every node's), by status", [store] {
        std::vector<std::pair<metrics::Labels, double>> out;
        for (const store::JobStatus status : store::kJobStatuses) {
            store::JobFilter filter;
            filter.statuses = {status};
            auto n = store->countJobs(filter);
            if (!n) {
                log::warn("metrics: cannot count jobs: {}", n.error().message);
                return std::vector<std::pair<metrics::Labels, double>>{};
            }
            out.push_back(
                {{{"status", std::string(store::jobStatusName(status))}}, static_cast<double>(*n)});
        }
        return out;
    });
    const runtime::OperationRunner* runner = s.runner;
    metrics.gauge("crank_stream_sessions", "stream sessions this node holds (live and just closed)",
                  [runner] {
                      return std::vector<std::pair<metrics::Labels, double>>{
                          {{}, static_cast<double>(runner->sessionCount())}};
                  });
    if (const runtime::AuditWriter* writer = s.audit_writer; writer != nullptr) {
        metrics.gauge("crank_audit_queue_events",
                      "audit events waiting to be written (audit.queue_max bounds it)", [writer] {
                          return std::vector<std::pair<metrics::Labels, double>>{
                              {{}, static_cast<double>(writer->stats().queued)}};
                      });
    }
    const mcp::SessionManager* sessions = s.sessions;
    metrics.gauge("crank_mcp_sessions", "MCP sessions open on this node", [sessions] {
        return std::vector<std::pair<metrics::Labels, double>>{
            {{}, static_cast<double>(sessions->size())}};
    });
    const http::StreamReactor* reactor = s.reactor;
    metrics.gauge("crank_sse_streams", "SSE streams open on this node", [reactor] {
        return std::vector<std::pair<metrics::Labels, double>>{
            {{}, static_cast<double>(reactor->openStreams())}};
    });
    // Memory, so that an operator (and the soak benchmark) can tell a leak, which grows the heap
    // in use, from the allocator's fragmentation and SQLite's page caches filling up to their
    // bound, which grow RSS alone.
    metrics.gauge("crank_heap_bytes",
                  "the C library's heap: in use by live allocations, and taken from the system",
                  [] {
                      const util::HeapUsage heap = util::heapUsage();
                      if (!heap.known) {
                          return std::vector<std::pair<metrics::Labels, double>>{};
                      }
                      return std::vector<std::pair<metrics::Labels, double>>{
                          {{{"state", "in_use"}}, static_cast<double>(heap.in_use)},
                          {{{"state", "taken"}}, static_cast<double>(heap.taken)}};
                  });
    metrics.gauge("crank_sqlite_memory_bytes",
                  "SQLite's heap (page caches, statements), bounded by about store.pool_size x "
                  "store.cache_kib",
                  [] {
                      return std::vector<std::pair<metrics::Labels, double>>{
                          {{}, static_cast<double>(store::sqliteMemoryUsed())}};
                  });
    const std::map<std::string, mcp::FunctionToolRegistry*> tools = s.tools;
    metrics.gauge("crank_tools", "tools published, by workspace", [tools] {
        std::vector<std::pair<metrics::Labels, double>> out;
        out.reserve(tools.size());
        for (const auto& [workspace, registry] : tools) {
            out.push_back(
                {{{"workspace", workspace}}, static_cast<double>(registry->list().size())});
        }
        return out;
    });
}

void addMetricsEndpoint(http::Router& router, const metrics::Registry& metrics,
                        const config::ServerConfig& server) {
    auto policy =
        std::make_shared<http::OriginPolicy>(server.allowed_hosts, server.allowed_origins);
    std::optional<std::string> digest;
    if (server.metrics_token) {
        digest = server.metrics_token->reveal();  // a digest: the config keeps no clear token
    }
    router.add("/metrics", [&metrics, policy, digest](Poco::Net::HTTPServerRequest& request,
                                                      Poco::Net::HTTPServerResponse& response) {
        if (!http::allowMethods(request, response, "GET,HEAD")) {
            return;
        }
        if (!policy->hostAllowed(request.getHost())) {
            http::sendError(response, 403, "forbidden_host",
                            "this Host may not read the metrics (server.allowed_hosts)");
            return;
        }
        if (digest && !bearerMatchesDigest(request.get("Authorization", ""), *digest)) {
            response.set("WWW-Authenticate", R"(Bearer realm="crank-metrics")");
            http::sendError(response, 401, "unauthorized",
                            "the metrics token is required: Authorization: Bearer TOKEN "
                            "(server.metrics_token)");
            return;
        }
        const std::string body = metrics.render();
        http::sendBody(response, 200, "text/plain; version=0.0.4; charset=utf-8",
                       request.getMethod() == "HEAD" ? std::string_view() : body);
    });
}

}  // namespace crank::app
