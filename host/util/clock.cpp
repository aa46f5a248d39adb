#include "util/clock.h"

#include <cstdio>
#include <ctime>

namespace crank {

std::string formatRfc3339(std::int64_t unix_ms) {
    const auto seconds = static_cast<std::time_t>(unix_ms / 1000);
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char text[40];
    const int n = std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                                tm.tm_sec, static_cast<int>(unix_ms % 1000));
    return {text, n > 0 ? static_cast<std::size_t>(n) : 0};
}

}  // namespace crank
