#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <crank/plugin.h>

namespace crank::runtime {

struct Operation;

/// The texts behind one crank_request, owned for the duration of the call.
struct PreparedRequest {
    std::string request_json;  ///< the protocol config with its templates rendered
    std::string input_json;    ///< the validated tool input
    std::string cursor;
    std::int64_t timeout_ms = 0;
    std::int64_t max_item_bytes = 0;
    /// The client's W3C trace context (checked), passed on to the upstream; empty: none.
    std::string traceparent;
    std::string tracestate;
    /// Called (on the plugin's thread) with every cursor the plugin sets during a unary call;
    /// async jobs persist it so that the call can be followed again after a restart.
    std::function<void(std::string_view)> on_cursor;

    /// The C view handed to the adapter; valid while this object and `op` live unchanged.
    crank_request view(const Operation& op) const;
};

}  // namespace crank::runtime
