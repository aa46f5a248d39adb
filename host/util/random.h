#pragma once

#include <cstddef>
#include <string>

namespace crank {

/// Returns `bytes` bytes from the kernel's CSPRNG (getrandom), hex-encoded, so 2*bytes visible
/// ASCII characters. Used for session ids, job ids and anything else a client must not guess.
/// Throws std::system_error only if the kernel refuses, which Linux does not do after boot.
std::string randomHex(std::size_t bytes);

/// A new identifier for a stored entity: `prefix` followed by 128 random bits in hex,
/// e.g. "ses_3f2a...". The prefix tells a human reading logs what kind of id it is.
std::string newId(std::string_view prefix);

}  // namespace crank
