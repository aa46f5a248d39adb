#pragma once

// What a running request sends its client, written alike by both protocol eras:
// notifications/progress and notifications/message, and the requests a tool may ask the client.
//
// THREADING: pure functions.

#include <optional>
#include <string>
#include <string_view>

#include "mcp/wire/log_level.h"
#include "mcp/wire/request_id.h"

namespace crank::mcp {

/// notifications/progress for `token`; "" when `progress` (or nothing else) is not finite.
/// A `total` that is not finite is left out, as is an empty `message`.
std::string progressNotification(const RequestId& token, double progress,
                                 std::optional<double> total, std::string_view message);

/// notifications/message at `level` from `logger` ("" for none) with `data_json` (JSON text;
/// empty for null).
std::string logNotification(LogLevel level, std::string_view logger, std::string_view data_json);

/// The JSON-RPC error object for a request to the client of a method clientCapabilityFor() does
/// not know.
std::string notForwardedError(std::string_view method);

}  // namespace crank::mcp
