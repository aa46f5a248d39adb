#pragma once

#include <map>
#include <memory>
#include <string>

#include "config/config.h"
#include "http/router.h"
#include "metrics/metrics.h"

namespace crank::http {
class StreamReactor;
}  // namespace crank::http
namespace crank::mcp {
class FunctionToolRegistry;
class McpEndpoint;
class SessionManager;
}  // namespace crank::mcp
namespace crank::plugins {
class PluginRegistry;
}  // namespace crank::plugins
namespace crank::runtime {
class AuditWriter;
class OperationRunner;
}  // namespace crank::runtime
namespace crank::store {
class Store;
}  // namespace crank::store

namespace crank::app {

/// What crankd's metrics are read from. Every pointer must outlive the registry's scrapes.
struct MetricsSources {
    const plugins::PluginRegistry* plugins = nullptr;
    std::shared_ptr<store::Store> store;
    const runtime::OperationRunner* runner = nullptr;
    const mcp::SessionManager* sessions = nullptr;
    const http::StreamReactor* reactor = nullptr;
    /// Its queue depth is read at every scrape.
    const runtime::AuditWriter* audit_writer = nullptr;
    /// Its JSON-RPC messages and HTTP requests are counted (set before it serves).
    mcp::McpEndpoint* endpoint = nullptr;
    /// Each workspace's tool registry: its calls are counted and timed, its tools counted.
    std::map<std::string, mcp::FunctionToolRegistry*> tools;
};

/// Registers crankd's metrics in `metrics` (docs/operations.md, "Metrics"): JSON-RPC messages by
/// method and outcome with their latency, HTTP requests to the MCP endpoint by status, tool calls
/// by workspace, tool and outcome with their latency (the runtime adds items, bytes, drops and
/// upstream errors: runtime::FlowMetrics), and, read at every scrape, plugins by status,
/// jobs by status (all nodes: from the store), stream sessions held, MCP sessions, open SSE
/// streams and published tools.
void registerMetrics(metrics::Registry& metrics, const MetricsSources& sources);

/// GET /metrics: `metrics` in the Prometheus text format, behind the same Host policy as the
/// MCP endpoint.
void addMetricsEndpoint(http::Router& router, const metrics::Registry& metrics,
                        const config::ServerConfig& server);

}  // namespace crank::app
