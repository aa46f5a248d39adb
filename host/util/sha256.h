#pragma once

#include <string>
#include <string_view>

namespace crank {

/// Lower-case hex SHA-256 of `data` (64 characters): the form in which agents' API keys are kept.
std::string sha256Hex(std::string_view data);

/// Compares without an early exit, so that timing does not tell how much of a key (or of its
/// digest) matched.
bool constantTimeEqual(std::string_view a, std::string_view b);

/// True when `authorization` (an Authorization header's value) is `Bearer TOKEN` with a non-empty
/// TOKEN whose sha256Hex() equals `digest`, compared in constant time.
bool bearerMatchesDigest(std::string_view authorization, std::string_view digest);

}  // namespace crank
