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
#include "mcp/session_manager.h"
#include "mcp/task_backend.h"
#include "mcp/tool_registry.h"

namespace crank::http {
class StreamReactor;
}  // namespace crank::http

namespace crank::mcp {

/// Protocol versions served, newest first. A request without MCP-Protocol-Version means
/// 2025-03-26, as the specification says.
inline constexpr const char* kSupportedVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};
inline constexpr const char* kLatestVersion = "2025-11-25";
inline constexpr const char* kDefaultHeaderVersion = "2025-03-26";

struct ServerIdentity {
    std::string name = "crank";
    std::string version;
};

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
    /// completions of the workspaces that have them (federated upstreams).
    McpEndpoint(const config::Config& config, ServerIdentity identity,
                std::map<std::string, ToolRegistry*> tools, SessionManager& sessions,
                http::StreamReactor& reactor, TaskBackend* tasks = nullptr,
                std::map<std::string, Catalog*> catalogs = {});
    ~McpEndpoint();
    McpEndpoint(const McpEndpoint&) = delete;
    McpEndpoint& operator=(const McpEndpoint&) = delete;

    /// Registers the endpoint at config.mcp.path and at `/w/{workspace}/mcp`.
    void addRoutes(http::Router& router);

    /// What the endpoint reports as it answers (for /metrics). Set before addRoutes; called on
    /// the HTTP worker threads (and, for a tasks/result answered later, the task's thread).
    struct Observer {
        /// Every JSON-RPC message: its method ("unknown" for a method Crank does not serve,
        /// "invalid" when the message could not be read), the outcome ("ok", "accepted" for a
        /// notification or a client's answer, or the error's name: "invalid_params",
        /// "method_not_found", "internal_error", ...) and the time to its answer.
        std::function<void(std::string_view method, std::string_view outcome,
                           std::chrono::steady_clock::duration elapsed)>
            message;
        /// Every HTTP request to the endpoint: its verb and the response's status.
        std::function<void(std::string_view verb, int status)> http;
    };
    void observe(Observer observer);

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace crank::mcp
