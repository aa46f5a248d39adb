#pragma once

#include <chrono>
#include <cstdint>

namespace crank {

/// Wall-clock milliseconds since the Unix epoch (UTC). Persisted timestamps use this unit so that
/// SQLite and PostgreSQL store the same integers.
inline std::int64_t nowUnixMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace crank
