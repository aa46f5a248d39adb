#pragma once

#include <string_view>

#include <crank/plugin.h>

namespace crank::plugins {

/// The host side of one federated upstream (`crank_peer`, ABI 1.2): what the plugin's
/// peer_notify() reaches. The federation implements it for every upstream it opens; it outlives
/// the plugin's upstream (until upstream_close() returns).
///
/// THREADING: called from the plugin's threads, concurrently; no exception may escape.
class PluginPeer {
public:
    virtual ~PluginPeer() = default;
    virtual void notify(std::string_view method, std::string_view params_json) noexcept = 0;

    crank_peer* handle() noexcept { return reinterpret_cast<crank_peer*>(this); }
    static PluginPeer* fromHandle(crank_peer* peer) noexcept {
        return reinterpret_cast<PluginPeer*>(peer);
    }
};

}  // namespace crank::plugins
