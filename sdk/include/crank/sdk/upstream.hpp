// Crank SDK, C++ layer: federated upstreams (ABI 1.2, CRANK_CAP_FEDERATION).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "crank/sdk/call.hpp"
#include "crank/sdk/types.hpp"
#include <crank/plugin.h>

namespace crank::sdk {

/// The host's side of one open upstream: where the upstream's own notifications go
/// (list_changed, resources/updated, log lines that no call owns). A cheap value type; valid
/// until the Upstream is destroyed. Any thread.
class Peer {
public:
    Peer() = default;
    Peer(const crank_host_api* api, crank_peer* peer) noexcept : api_(api), peer_(peer) {}

    /// See crank_host_api.peer_notify. `params_json` is a JSON object's text, or empty.
    void notify(std::string_view method, std::string_view params_json) const noexcept {
        if (api_ != nullptr && peer_ != nullptr &&
            api_->struct_size > offsetof(crank_host_api, peer_notify) &&
            api_->peer_notify != nullptr) {
            api_->peer_notify(peer_, toCStr(method), toCStr(params_json));
        }
    }

    crank_peer* handle() const noexcept { return peer_; }

private:
    const crank_host_api* api_ = nullptr;
    crank_peer* peer_ = nullptr;
};

/// One open upstream (Adapter::openUpstream). Its destructor closes it: it ends the connection
/// and joins every thread of it; the host destroys it only when no request runs.
class Upstream {
public:
    Upstream() = default;
    Upstream(const Upstream&) = delete;
    Upstream& operator=(const Upstream&) = delete;
    Upstream(Upstream&&) = delete;
    Upstream& operator=(Upstream&&) = delete;
    virtual ~Upstream() = default;

    /// One MCP request (crank_adapter.upstream_request): returns the JSON text of the result
    /// object. Throws Error to fail; an error the upstream answered is thrown as
    /// ErrorCode::upstream with details {"jsonrpc_error":{"code":..,"message":..,"data":..}}.
    /// Called concurrently for different calls.
    virtual std::string request(Call& call, std::string_view method,
                                std::string_view params_json) = 0;
    /// A notification from the clients that no call owns (roots/list_changed).
    virtual void notify(std::string_view /*method*/, std::string_view /*params_json*/) {}
    /// The state for operators, one JSON object.
    virtual std::string status() { return "{}"; }
};

}  // namespace crank::sdk
