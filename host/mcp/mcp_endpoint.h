#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "config/config.h"
#include "http/router.h"
#include "mcp/catalog.h"
#include "mcp/endpoint_observer.h"
#include "mcp/legacy/session_manager.h"
#include "mcp/modern/request_state_seal.h"
#include "mcp/task_backend.h"
#include "mcp/tool_registry.h"
#include "mcp/wire/protocol_version.h"

namespace crank::http {
class StreamReactor;
}  // namespace crank::http

namespace crank::mcp {

/// The MCP Streamable HTTP endpoint: POST (messages), GET (server-to-client streams, resumption)
/// and DELETE (end a session) on one path, with the lifecycle methods (initialize, ping,
/// logging/setLevel), tools/list and tools/call over a ToolRegistry.
///
/// Requests and JSON responses run on the HTTP worker threads; SSE streams are handed to the
/// StreamReactor, so an open stream holds no thread. A tools/call whose request carries a
/// progress token is answered as an SSE stream (progress and log notifications before the
/// result); other requests get application/json.
class McpEndpoint {
public:
    /// `tools`: each workspace's tools (every workspace of config.auth gets an endpoint at
    /// `/w/{workspace}/mcp`; config.mcp.path serves the calling agent's own workspace).
    /// `tasks`: where MCP Tasks run; nullptr: no Tasks. `catalogs`: the resources, prompts and
    /// completions of the workspaces that have them (federated upstreams). `seal`: where the
    /// requestState of 2026 input_required results is sealed; nullptr: one of this node alone
    /// (config.mcp.request_state_key, states used once in memory).
    McpEndpoint(const config::Config& config, const ServerIdentity& identity,
                std::map<std::string, ToolRegistry*> tools, SessionManager& sessions,
                http::StreamReactor& reactor, TaskBackend* tasks = nullptr,
                std::map<std::string, Catalog*> catalogs = {},
                std::shared_ptr<const RequestStateSeal> seal = nullptr);
    ~McpEndpoint();
    McpEndpoint(const McpEndpoint&) = delete;
    McpEndpoint& operator=(const McpEndpoint&) = delete;

    /// Registers the endpoint at config.mcp.path and at `/w/{workspace}/mcp`.
    void addRoutes(http::Router& router);
    /// Shutdown, at the end of the grace period: calls held for a 2026 client's input stop
    /// waiting for it (their upstreams are answered with an error), so that nothing waits on a
    /// client that will not answer.
    void abandonHeldCalls();
    /// A reload's agents, their keys and the workspaces' and agents' concurrency bounds
    /// (EndpointAccess::setAgents, CallerQuotas::setBounds). The workspaces must be those the
    /// endpoint was made with.
    void reloadAuth(const config::Config& config);

    /// What the endpoint reports as it answers (for /metrics). Set before addRoutes.
    using Observer = EndpointObserver;
    void observe(Observer observer);

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace crank::mcp
