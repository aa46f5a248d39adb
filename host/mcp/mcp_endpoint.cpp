#include "mcp/mcp_endpoint.h"

#include <chrono>
#include <utility>

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>

#include "config/isolation_check.h"
#include "mcp/caller_quotas.h"
#include "mcp/endpoint_access.h"
#include "mcp/endpoint_http.h"
#include "mcp/legacy/legacy_tasks.h"
#include "mcp/legacy/legacy_transport.h"
#include "mcp/legacy/session_streams.h"
#include "mcp/method_table.h"
#include "mcp/modern/listen_hub.h"
#include "mcp/modern/modern_transport.h"
#include "mcp/modern/protocol_era.h"
#include "mcp/modern/used_states.h"
#include "mcp/wire/json_rpc.h"

namespace crank::mcp {
namespace {

using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

/// Calls in progress, MCP sessions and SSE streams, bounded per agent, per workspace and (for
/// calls) in all, as the config sets them.
struct CallerBounds {
    std::map<std::string, CallerQuotas::Bounds> workspaces;
    std::map<std::string, CallerQuotas::Bounds> agents;
};

CallerBounds boundsOf(const config::AuthConfig& auth) {
    CallerBounds out;
    const auto of = [](const config::Limits& limits) {
        return CallerQuotas::Bounds{limits.max_concurrent_calls, limits.max_mcp_sessions,
                                    limits.max_streams};
    };
    for (const config::Workspace& workspace : auth.workspaces) {
        out.workspaces[workspace.id] = of(workspace.limits);
    }
    for (const config::Agent& agent : auth.agents) {
        out.agents[agent.id] = of(agent.limits);
    }
    return out;
}

std::shared_ptr<CallerQuotas> quotasOf(const config::Config& c) {
    CallerBounds bounds = boundsOf(c.auth);
    return std::make_shared<CallerQuotas>(
        std::move(bounds.workspaces), std::move(bounds.agents),
        CallerQuotas::Bounds{c.server.effectiveMaxConcurrentCalls(), -1, -1},
        config::reservedCalls(c));
}

/// The seal of an endpoint given none (crankd gives its own, whose register is the store's):
/// states used once in this process's memory, within each caller's share.
std::shared_ptr<const RequestStateSeal> localSeal(const config::Config& c) {
    return configuredSeal(c.mcp, c.server.node_id,
                          std::make_shared<MemoryUsedStates>(
                              100'000, StateShares{c.mcp.max_request_states_per_agent,
                                                   c.mcp.max_request_states_per_workspace}));
}

}  // namespace

/// The endpoint's parts, wired once: who may call (access), the methods both eras share, the
/// 2025-era session transport with its streams and Tasks, and the stateless 2026-07-28 one; each
/// POST goes to the era classifyPost() finds. Held by shared_ptr so that the routes
/// and the listeners of registries, catalogs and the task backend can outlive McpEndpoint safely.
struct McpEndpoint::Impl {
    std::string path;  ///< mcp.path
    std::int64_t max_body;
    EndpointObserver observer;
    EndpointAccess access;
    std::shared_ptr<CallerQuotas> quotas;
    MethodTable methods;
    SessionStreams streams;
    LegacyTasks tasks;
    LegacyTransport legacy;
    std::shared_ptr<ListenHub> listens = std::make_shared<ListenHub>();
    ModernTransport modern;

    Impl(const config::Config& c, const ServerIdentity& identity,
         std::map<std::string, ToolRegistry*> t, SessionManager& sessions,
         http::StreamReactor& reactor, TaskBackend* backend,
         std::map<std::string, Catalog*> catalogs, std::shared_ptr<const RequestStateSeal> seal)
        : path(c.mcp.path),
          max_body(c.server.max_request_body_bytes),
          access(c, std::move(t), std::move(catalogs)),
          quotas(quotasOf(c)),
          methods(c.mcp, quotas),
          streams(c.mcp, reactor, quotas),
          tasks(backend, access.authRequired(), streams, methods, observer),
          legacy(identity, sessions, streams, tasks, methods, quotas, observer),
          modern(identity, c.mcp, access.authRequired(), methods, reactor, quotas, listens,
                 seal ? std::move(seal) : localSeal(c), backend, observer) {}

    /// `route_workspace`: the workspace of a `/w/{workspace}/mcp` path; nullopt for the main
    /// path, which serves the agent's own workspace.
    void handle(HTTPServerRequest& request, HTTPServerResponse& response,
                const std::optional<std::string>& route_workspace) {
        const std::optional<Who> who = access.admit(request, response, route_workspace);
        if (!who) {
            return;
        }
        const std::string& method = request.getMethod();
        if (method == "POST") {
            if (!postHeadersOk(request, response)) {
                return;
            }
            const std::optional<std::string> body = readBody(request, response, max_body);
            if (!body) {
                return;
            }
            const auto since = std::chrono::steady_clock::now();
            const ParsedBody parsed = parseJsonRpcBody(*body);
            const EraVerdict verdict =
                classifyPost(parsed, request.get("MCP-Protocol-Version", ""));
            // The trace context of the HTTP headers, for the messages whose _meta has none.
            const HeaderTrace headers{request.get("traceparent", ""),
                                      request.get("tracestate", "")};
            if (verdict.era == Era::modern) {
                modern.post(request, response, *who, parsed, verdict, headers, since);
            } else {
                legacy.post(request, response, *who, parsed, headers, since, verdict.tool_call);
            }
        } else if ((method == "GET" || method == "DELETE") && !request.has("Mcp-Session-Id") &&
                   modernVersionSupported(request.get("MCP-Protocol-Version", ""))) {
            // The 2026-07-28 era has no session to stream or to end.
            response.set("Allow", "POST");
            sendHttpError(response, 405, kInvalidRequest,
                          "method " + method + " is not allowed in MCP 2026-07-28: POST only");
        } else if (method == "GET") {
            legacy.get(request, response, *who);
        } else if (method == "DELETE") {
            legacy.remove(request, response, *who);
        } else {
            response.set("Allow", "GET, POST, DELETE");
            sendHttpError(response, 405, kInvalidRequest, "method " + method + " is not allowed");
        }
    }

    /// handle(), then reads and drops what is left of the request body.
    void handleAndDrain(HTTPServerRequest& request, HTTPServerResponse& response,
                        const std::optional<std::string>& route_workspace) {
        handle(request, response, route_workspace);
        discardRest(request.stream());
        if (observer.http) {
            const std::string& verb = request.getMethod();
            observer.http(verb == "POST" || verb == "GET" || verb == "DELETE" ? verb : "other",
                          static_cast<int>(response.getStatus()));
        }
    }
};

McpEndpoint::McpEndpoint(const config::Config& config, const ServerIdentity& identity,
                         std::map<std::string, ToolRegistry*> tools, SessionManager& sessions,
                         http::StreamReactor& reactor, TaskBackend* tasks,
                         std::map<std::string, Catalog*> catalogs,
                         std::shared_ptr<const RequestStateSeal> seal)
    : impl_(std::make_shared<Impl>(config, identity, std::move(tools), sessions, reactor, tasks,
                                   std::move(catalogs), std::move(seal))) {
    std::weak_ptr<Impl> weak = impl_;
    for (const auto& [workspace, registry] : impl_->access.tools()) {
        registry->subscribe([weak, ws = workspace] {
            if (auto impl = weak.lock()) {
                impl->legacy.toolsChanged(ws);
                impl->listens->toolsChanged(ws);
            }
        });
    }
    for (const auto& [workspace, catalog] : impl_->access.catalogs()) {
        catalog->subscribe([weak, ws = workspace](const CatalogNotice& notice) {
            if (auto impl = weak.lock()) {
                impl->legacy.deliver(ws, notice);
                impl->listens->deliver(ws, notice);
            }
        });
    }
    // A session's resource subscriptions end with it.
    sessions.onEnded([weak](const std::string& id) {
        if (auto impl = weak.lock()) {
            for (const auto& [workspace, catalog] : impl->access.catalogs()) {
                catalog->forget(id);
            }
        }
    });
    if (tasks != nullptr) {
        tasks->subscribe([weak](const TaskInfo& task) {
            if (auto impl = weak.lock()) {
                impl->tasks.onTask(task);
                impl->modern.taskChanged(task);
            }
        });
    }
}

McpEndpoint::~McpEndpoint() = default;

void McpEndpoint::reloadAuth(const config::Config& config) {
    // Bounds first: an agent admitted by the new table is counted against its own.
    CallerBounds bounds = boundsOf(config.auth);
    impl_->quotas->setBounds(std::move(bounds.workspaces), std::move(bounds.agents),
                             config::reservedCalls(config));
    impl_->access.setAgents(config.auth);
}

void McpEndpoint::abandonHeldCalls() {
    impl_->modern.abandonHeldCalls();
}

void McpEndpoint::observe(Observer observer) {
    impl_->observer = std::move(observer);
}

void McpEndpoint::addRoutes(http::Router& router) {
    std::shared_ptr<Impl> impl = impl_;
    router.add(impl->path, [impl](HTTPServerRequest& request, HTTPServerResponse& response) {
        impl->handleAndDrain(request, response, std::nullopt);
    });
    for (const auto& [workspace, registry] : impl->access.tools()) {
        router.add("/w/" + workspace + "/mcp",
                   [impl, ws = std::optional<std::string>(workspace)](
                       HTTPServerRequest& request, HTTPServerResponse& response) {
                       impl->handleAndDrain(request, response, ws);
                   });
    }
    // Any other /w/... path is answered as a workspace's endpoint the caller may not use: 401
    // without a key, 404 with one, exactly as for a workspace that exists, so that no caller
    // learns which workspaces exist. The empty name is no workspace's.
    router.addPrefix("/w/", [impl](HTTPServerRequest& request, HTTPServerResponse& response) {
        impl->handleAndDrain(request, response, std::optional<std::string>(std::string()));
    });
}

}  // namespace crank::mcp
