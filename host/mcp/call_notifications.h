#pragma once

// The notifications a running request sends its client, written alike by both protocol eras:
// notifications/progress and notifications/message.
//
// THREADING: pure functions.

#include <optional>
#include <string>
#include <string_view>

#include "mcp/log_level.h"
#include "mcp/request_id.h"

namespace crank::mcp {

/// notifications/progress for `token`; "" when `progress` (or nothing else) is not finite.
/// A `total` that is not finite is left out, as is an empty `message`.
std::string progressNotification(const RequestId& token, double progress,
                                 std::optional<double> total, std::string_view message);

/// notifications/message at `level` from `logger` ("" for none) with `data_json` (JSON text;
/// empty for null).
std::string logNotification(LogLevel level, std::string_view logger, std::string_view data_json);

}  // namespace crank::mcp
