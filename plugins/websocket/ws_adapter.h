// plugins/websocket: the "websocket" protocol adapter (README.md).
#pragma once

#include <string>
#include <string_view>

#include <crank/sdk.hpp>

namespace crank::ws {

/// WebSocket upstreams, never a live channel into the chat: a subscription read as a window, a
/// session or a streaming job (server_stream), or an async job over a progress channel (`job`,
/// request_response: the final message is the result).
class WsAdapter final : public sdk::Adapter {
public:
    void validate(std::string_view config_json, sdk::Diagnostics& diagnostics) override;
    std::string describe(std::string_view config_json, sdk::Diagnostics& diagnostics) override;
    void unaryCall(sdk::Call& call, const sdk::Request& request) override;
    std::unique_ptr<sdk::Stream> openStream(sdk::Call& call, const sdk::Request& request) override;
};

sdk::AdapterInfo wsAdapterInfo();
void registerWsPlugin(sdk::Registrar& registrar);

}  // namespace crank::ws
