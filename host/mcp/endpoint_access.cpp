#include "mcp/endpoint_access.h"

#include <string_view>

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>

#include "mcp/endpoint_http.h"
#include "mcp/wire/json_rpc.h"
#include "util/sha256.h"

namespace crank::mcp {

EndpointAccess::EndpointAccess(const config::Config& config,
                               std::map<std::string, ToolRegistry*> tools,
                               std::map<std::string, Catalog*> catalogs)
    : auth_required_(config.auth.mode == config::AuthConfig::Mode::api_key),
      agents_(AgentTable::of(config.auth)),
      tools_(std::move(tools)),
      catalogs_(std::move(catalogs)),
      origins_(config.server.allowed_hosts, config.server.allowed_origins) {}

std::shared_ptr<const AgentTable> AgentTable::of(const config::AuthConfig& auth) {
    auto table = std::make_shared<AgentTable>();
    for (const config::Agent& agent : auth.agents) {
        table->workspaces[agent.id] = agent.workspace;
        if (agent.api_key) {
            table->keys.emplace(agent.api_key->reveal(), agent.id);
        }
        for (const std::string& digest : agent.key_digests) {
            table->keys.emplace(digest, agent.id);
        }
    }
    return table;
}

void EndpointAccess::setAgents(const config::AuthConfig& auth) {
    std::shared_ptr<const AgentTable> table = AgentTable::of(auth);
    const std::lock_guard lock(agents_mutex_);
    agents_.swap(table);
}

std::shared_ptr<const AgentTable> EndpointAccess::agents() const {
    const std::lock_guard lock(agents_mutex_);
    return agents_;
}

std::optional<std::string> EndpointAccess::authenticate(
    Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response) const {
    if (!auth_required_) {
        return std::string();
    }
    const std::string header = request.get("Authorization", "");
    constexpr std::string_view kBearer = "Bearer ";
    if (header.size() > kBearer.size() && header.compare(0, kBearer.size(), kBearer) == 0) {
        const std::string digest = sha256Hex(std::string_view(header).substr(kBearer.size()));
        const std::shared_ptr<const AgentTable> table = agents();
        if (const auto it = table->keys.find(digest); it != table->keys.end()) {
            return it->second;
        }
    }
    response.set("WWW-Authenticate", R"(Bearer realm="crank")");
    sendHttpError(response, 401, kInvalidRequest,
                  "an agent's API key is required: Authorization: Bearer KEY");
    return std::nullopt;
}

std::optional<Who> EndpointAccess::admit(Poco::Net::HTTPServerRequest& request,
                                         Poco::Net::HTTPServerResponse& response,
                                         const std::optional<std::string>& route_workspace) const {
    // DNS-rebinding protection before anything else (MCP: 403 for a bad Origin).
    if (!origins_.hostAllowed(request.getHost())) {
        sendHttpError(response, 403, kInvalidRequest,
                      "Host \"" + request.getHost().substr(0, 200) + "\" is not allowed");
        return std::nullopt;
    }
    const std::string origin = request.get("Origin", "");
    if (!origins_.originAllowed(origin)) {
        sendHttpError(response, 403, kInvalidRequest,
                      "Origin \"" + origin.substr(0, 200) + "\" is not allowed");
        return std::nullopt;
    }
    const std::optional<std::string> agent = authenticate(request, response);
    if (!agent) {
        return std::nullopt;
    }
    Who who;
    who.agent = *agent;
    const std::shared_ptr<const AgentTable> table = agents();
    const auto home = table->workspaces.find(*agent);
    const std::string own = home != table->workspaces.end() ? home->second : "default";
    who.workspace = route_workspace.value_or(own);
    // Another workspace's endpoint does not exist for this agent (not "forbidden": the
    // workspace's existence is not its to learn). Without auth everyone is the anonymous agent.
    const auto registry = tools_.find(who.workspace);
    if ((auth_required_ && who.workspace != own) || registry == tools_.end()) {
        sendHttpError(response, 404, kInvalidRequest, "no MCP endpoint at this path");
        return std::nullopt;
    }
    who.tools = registry->second;
    if (const auto catalog = catalogs_.find(who.workspace); catalog != catalogs_.end()) {
        who.catalog = catalog->second;
    }
    return who;
}

}  // namespace crank::mcp
