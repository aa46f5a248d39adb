#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace crank::config {

/// The shortest agent API key, admin token or metrics token crankd accepts in clear (from an env
/// variable or a file). 16 characters of a random hex string are 64 bits: out of reach of online
/// guessing, which failed-authentication throttling bounds further. A `{"sha256": ...}` digest
/// cannot be checked and is taken as it is.
inline constexpr std::size_t kMinKeyLength = 16;

/// Why `key` (a clear credential) cannot be used, or nullopt when it can.
std::optional<std::string> weakKeyReason(std::string_view key);

}  // namespace crank::config
