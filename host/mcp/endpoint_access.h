#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config/config.h"
#include "http/origin_policy.h"
#include "mcp/catalog.h"
#include "mcp/tool_registry.h"

namespace Poco::Net {
class HTTPServerRequest;
class HTTPServerResponse;
}  // namespace Poco::Net

namespace crank::mcp {

/// Who a request speaks for and which workspace's server it reaches.
struct Who {
    std::string agent;  ///< "" for the anonymous agent (auth.mode "none")
    std::string workspace;
    ToolRegistry* tools = nullptr;
    Catalog* catalog = nullptr;  ///< the workspace's resources and prompts; null: none

    Caller caller() const { return Caller{workspace, agent}; }
};

/// The agents of auth.agents and their keys, as requests are checked against them; replaced
/// whole by a reload.
struct AgentTable {
    /// Key digest -> agent id. Looked up by the digest of the key a request presents: its
    /// timing tells nothing of a key (finding a key from digest prefixes means reversing
    /// SHA-256), and a request costs the same with 10 agents or 10,000.
    std::unordered_map<std::string, std::string> keys;
    std::map<std::string, std::string> workspaces;  ///< agent id, its workspace

    static std::shared_ptr<const AgentTable> of(const config::AuthConfig& auth);
};

/// Who may reach an MCP endpoint, checked on every request of either protocol era: the Host and
/// Origin headers (DNS-rebinding protection), the agent's API key, and the workspace the path
/// names. Any thread; the agents change only through setAgents().
class EndpointAccess {
public:
    EndpointAccess(const config::Config& config, std::map<std::string, ToolRegistry*> tools,
                   std::map<std::string, Catalog*> catalogs);

    /// The Who of a request to the main path (`route_workspace` nullopt: the agent's own
    /// workspace) or to `/w/{workspace}/mcp`; nullopt after answering it: 403 for a Host or
    /// Origin that is not allowed, 401 without a valid `Authorization: Bearer KEY` (auth.mode
    /// "api_key"), 404 for another workspace's endpoint (its existence is not the agent's to
    /// learn) or one that does not exist.
    std::optional<Who> admit(Poco::Net::HTTPServerRequest& request,
                             Poco::Net::HTTPServerResponse& response,
                             const std::optional<std::string>& route_workspace) const;

    /// A reload's agents and keys: every request from now on is checked against them (a
    /// revoked key's next request gets 401, whatever its session).
    void setAgents(const config::AuthConfig& auth);

    bool authRequired() const { return auth_required_; }
    const std::map<std::string, ToolRegistry*>& tools() const { return tools_; }
    const std::map<std::string, Catalog*>& catalogs() const { return catalogs_; }

private:
    /// The agent a request speaks for: "" without auth; nullopt (after answering 401) when
    /// auth.mode is "api_key" and the request has no valid key.
    std::optional<std::string> authenticate(Poco::Net::HTTPServerRequest& request,
                                            Poco::Net::HTTPServerResponse& response) const;

    std::shared_ptr<const AgentTable> agents() const;

    bool auth_required_ = false;
    mutable std::mutex agents_mutex_;
    std::shared_ptr<const AgentTable> agents_;    ///< guarded by agents_mutex_
    std::map<std::string, ToolRegistry*> tools_;  // workspace -> its tools
    std::map<std::string, Catalog*> catalogs_;    // workspace -> its catalog
    http::OriginPolicy origins_;
};

}  // namespace crank::mcp
