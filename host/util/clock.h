#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace crank {

/// Wall-clock milliseconds since the Unix epoch (UTC). Persisted timestamps use this unit so that
/// SQLite and PostgreSQL store the same integers.
inline std::int64_t nowUnixMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// RFC 3339 in UTC with milliseconds, e.g. "2026-11-30T06:20:00.123Z" (the form MCP uses).
std::string formatRfc3339(std::int64_t unix_ms);

}  // namespace crank
