#pragma once

// The mcp plugin's federated upstream (crank::sdk::Upstream): one long-lived UpstreamSession to
// one MCP server, and the routing of everything the server says back to the call it concerns.
//
// Ids are remapped in both directions: each request crank sends gets the connection's own id
// (UpstreamSession); a progress token of the client is replaced by one unique on this
// connection, and the server's progress for it goes to that call. A server-to-client request
// (sampling, elicitation, roots) goes to the call it is for (ClientRequests); a log line to the
// call the transport ties it to (the SSE stream of a Streamable HTTP POST), or, where the wire
// ties nothing (stdio, legacy SSE), to the one call in flight when there is exactly one. A log
// line no call owns goes to the host (every client of the workspace whose level lets it
// through).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "client_requests.h"
#include "upstream_listen.h"
#include "upstream_session.h"
#include <crank/sdk.hpp>

namespace crank::mcpc {

/// The upstream's config (`upstreams[].config`), checked.
struct McpUpstreamConfig {
    UpstreamOptions options;
    /// Server-to-client requests handled at once; more are refused.
    std::size_t max_client_requests = 16;
    /// A server-to-client request not yet tied to one call waits at most this long...
    std::chrono::milliseconds unrouted_request_wait{30'000};
    /// ...and a question of another call keeps it waiting at most this much longer.
    std::chrono::milliseconds blocking_question{15'000};
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
    /// The resources the server was asked to follow, at most.
    static constexpr std::size_t kMaxSubscribed = 100'000;

    /// Notes a resources/subscribe (or unsubscribe) of `uri` the server accepted.
    void remember(bool subscribed, const std::string& uri);
    /// On a new connection: subscribes again to every resource noted (2025 era; in the 2026 era
    /// the listen's filter carries them).
    void resubscribe();
    /// 2026 era: whether the connection speaks it now.
    bool modern() const;
    /// 2026 era: whether following `uri` too keeps the listen's filter within its bounds.
    bool fitsTheListen(const std::string& uri);
    /// The filter of the listen of list changes (`lists`) or of resources now: nullopt unless
    /// connected in the 2026 era.
    std::optional<ListenFilter> listenFilter(bool lists);
    /// Which listen a notification's _meta subscriptionId names: none when it has none, foreign
    /// (the notification is dropped, said once) when it is neither open listen's.
    enum class ListenOwner { none, lists, resources, foreign };
    ListenOwner ownerOf(const rapidjson::Value& params);
    void onMessage(std::string_view message,
                   const std::shared_ptr<ClientRequests::Flight>& related);
    void log(sdk::LogLevel level, const std::string& message) const;

    sdk::Host host_;
    sdk::Peer peer_;
    std::string name_;
    McpUpstreamConfig config_;
    /// Before session_: the session's handlers use it until the session is gone.
    std::unique_ptr<ClientRequests> requests_;
    std::unique_ptr<UpstreamSession> session_;
    std::atomic<std::uint64_t> next_token_{1};
    std::mutex subscribed_mutex_;
    std::set<std::string> subscribed_;
    /// 2026 era: the upstream's subscriptions/listen of list changes and of resources (after
    /// session_: they use it until stopped).
    std::unique_ptr<UpstreamListen> lists_listen_;
    std::unique_ptr<UpstreamListen> resources_listen_;
    std::atomic<bool> said_foreign_subscription_{false};
};

/// Registers the "mcp" adapter (CRANK_CAP_FEDERATION).
void registerMcpPlugin(sdk::Registrar& registrar);

}  // namespace crank::mcpc
