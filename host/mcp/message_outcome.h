#pragma once

// How the endpoint names what it answered, for /metrics: the method of a JSON-RPC message as a
// bounded label, and the outcome of a reply read from its first members.

#include <cstdint>
#include <string_view>

namespace crank::mcp {

/// `method` when it is one Crank serves or takes as a notification; "unknown" otherwise (a client
/// cannot grow the label set).
std::string_view methodLabel(std::string_view method);

/// The metric name of a JSON-RPC error code ("invalid_params", "method_not_found", ...;
/// "server_error" for codes without a name of their own).
std::string_view errorName(std::int64_t code);

/// "ok" for a result, the errorName() of an error's code: read from a reply this endpoint made
/// (makeResult / makeError), only as far as it takes. The rest of a possibly large result is
/// never parsed.
std::string_view replyOutcome(std::string_view reply);

}  // namespace crank::mcp
