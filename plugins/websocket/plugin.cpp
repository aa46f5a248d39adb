// The "websocket" plugin library: one adapter, "websocket" (see ws_adapter.h, README.md).
#include "ws_adapter.h"
#include <crank/sdk.hpp>

CRANK_PLUGIN(
    "websocket", "1.0.0",
    "WebSocket upstreams: subscriptions as windows, sessions and jobs, never a live channel",
    crank::ws::registerWsPlugin);
