#pragma once

// A request rate as the config writes it: `{"calls_per_second": R, "burst": B}`, a token bucket
// that holds B calls and refills at R a second (mcp/rate_limits.h applies it).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crank::config {

struct RateLimit {
    double calls_per_second = 0;  ///< > 0
    std::int64_t burst = 1;       ///< >= 1: calls let through at once after a pause
    bool operator==(const RateLimit&) const = default;
};

/// The largest rate and burst a config may give.
inline constexpr double kMaxCallsPerSecond = 1'000'000;
inline constexpr std::int64_t kMaxBurst = 1'000'000;

namespace detail {
class ObjectReader;
}  // namespace detail

/// `key` of the object `parent` reads as a RateLimit; nullopt when absent (its errors go to the
/// reader's ConfigErrors). `burst` defaults to the rate rounded up (at least 1).
std::optional<RateLimit> readRateLimit(detail::ObjectReader& parent, std::string_view key);

}  // namespace crank::config
