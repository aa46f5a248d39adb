#pragma once

// The mcp plugin's federated upstream (crank::sdk::Upstream): one long-lived UpstreamSession to
// one MCP server, and the routing of everything the server says back to the call it concerns.
//
// Ids are remapped in both directions: each request crank sends gets the connection's own id
// (UpstreamSession); a progress token of the client is replaced by one unique on this
// connection, and the server's progress for it goes to that call. A server-to-client request
// (sampling, elicitation, roots) or a log line goes to the call the transport ties it to (the
// SSE stream of a Streamable HTTP POST); where the wire ties nothing (stdio, legacy SSE), to the
// one call in flight when there is exactly one. A log line no call owns goes to the host (every
// client of the workspace whose level lets it through); such a request is refused, since no
// client can be chosen, except roots/list, answered with no roots.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "upstream_session.h"
#include <crank/sdk.hpp>

namespace crank::mcpc {

/// The upstream's config (`upstreams[].config`), checked.
struct McpUpstreamConfig {
    UpstreamOptions options;
    /// Server-to-client requests handled at once; more are refused.
    std::size_t max_client_requests = 16;
};

/// Reads `upstreams[].config` (plugins/mcp/README.md); throws sdk::Error naming the member.
McpUpstreamConfig parseMcpUpstreamConfig(std::string_view config_json);

class McpUpstream final : public sdk::Upstream {
public:
    McpUpstream(sdk::Host host, sdk::Peer peer, std::string name, McpUpstreamConfig config);
    ~McpUpstream() override;
    McpUpstream(const McpUpstream&) = delete;
    McpUpstream& operator=(const McpUpstream&) = delete;
    McpUpstream(McpUpstream&&) = delete;
    McpUpstream& operator=(McpUpstream&&) = delete;

    std::string request(sdk::Call& call, std::string_view method,
                        std::string_view params_json) override;
    void notify(std::string_view method, std::string_view params_json) override;
    std::string status() override;
    /// Closes the connection and waits for the requests to clients in progress. Idempotent.
    void shutdown();

private:
    /// One request in flight and what may route to it.
    struct Flight {
        sdk::Call call;
        std::string progress_token;  ///< ours, "" when the client asked for none
        int users = 0;               ///< server-to-client requests using `call` right now
    };

    void onMessage(std::string_view message, const std::shared_ptr<Flight>& related);
    void answerServerRequest(const std::string& id_json, const std::string& method,
                             const std::string& params, const std::shared_ptr<Flight>& flight);
    std::shared_ptr<Flight> soleFlight();
    void log(sdk::LogLevel level, const std::string& message) const;

    sdk::Host host_;
    sdk::Peer peer_;
    std::string name_;
    McpUpstreamConfig config_;
    std::unique_ptr<UpstreamSession> session_;

    std::mutex mutex_;
    std::condition_variable idle_;
    std::uint64_t next_token_ = 1;
    std::vector<std::shared_ptr<Flight>> flights_;
    std::map<std::string, std::shared_ptr<Flight>> by_token_;
    std::size_t client_requests_ = 0;
    std::vector<std::thread> workers_;
    std::atomic<bool> closing_{false};
};

/// Registers the "mcp" adapter (CRANK_CAP_FEDERATION).
void registerMcpPlugin(sdk::Registrar& registrar);

}  // namespace crank::mcpc
