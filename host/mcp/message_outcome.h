#pragma once

// How the endpoint names what it answered, for /metrics: the method of a JSON-RPC message as a
// bounded label, and the name of an error code.

#include <cstdint>
#include <string_view>

namespace crank::mcp {

/// `method` when it is one Crank serves or takes as a notification; "unknown" otherwise (a client
/// cannot grow the label set).
std::string_view methodLabel(std::string_view method);

/// The metric name of a JSON-RPC error code ("invalid_params", "method_not_found", ...;
/// "server_error" for codes without a name of their own).
std::string_view errorName(std::int64_t code);

}  // namespace crank::mcp
