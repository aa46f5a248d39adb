#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "runtime/secret_scrubber.h"
#include <crank/plugin.h>

namespace crank::runtime {

/// "invalid_argument", "unavailable", "upstream", "protocol", "timeout", "resource_exhausted",
/// "unsupported", "internal" (the names the result's `error.code` uses).
std::string_view errorCodeName(crank_error_code code);

/// The details a plugin gave with set_error() as they may reach a client: `details_json` with the
/// secrets scrubbed, when it is a JSON object of at most kMaxErrorDetailsBytes; "" otherwise
/// (empty, too large, not an object, or broken by the scrubbing).
inline constexpr std::size_t kMaxErrorDetailsBytes = std::size_t{16} * 1024;
std::string clientErrorDetails(std::string_view details_json, const SecretScrubber& scrubber);

}  // namespace crank::runtime
