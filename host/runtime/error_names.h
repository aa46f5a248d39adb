#pragma once

#include <string_view>

#include <crank/plugin.h>

namespace crank::runtime {

/// "invalid_argument", "unavailable", "upstream", "protocol", "timeout", "resource_exhausted",
/// "unsupported", "internal" (the names the result's `error.code` uses).
std::string_view errorCodeName(crank_error_code code);

}  // namespace crank::runtime
