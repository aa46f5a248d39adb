#include "config/rate_limit.h"

#include <cmath>

#include "config/json_reader.h"

namespace crank::config {

std::optional<RateLimit> readRateLimit(detail::ObjectReader& parent, std::string_view key) {
    const detail::Json* value = parent.get(key);
    if (value == nullptr) {
        return std::nullopt;
    }
    detail::ObjectReader r(value, parent.pathOf(key), parent.errors());
    if (!r.present()) {
        return std::nullopt;  // not an object: reported by the reader
    }
    RateLimit rate;
    if (r.get("calls_per_second") == nullptr) {
        parent.errors().add(r.pathOf("calls_per_second"),
                            "is required (a number: the calls a second the bucket refills)");
    }
    // A rate below one a second is fine (0.1: one call every ten seconds), but not none.
    rate.calls_per_second = r.number("calls_per_second", 1, 0.001, kMaxCallsPerSecond);
    const auto rounded = static_cast<std::int64_t>(std::ceil(rate.calls_per_second));
    rate.burst = r.integer("burst", rounded < 1 ? 1 : rounded, 1, kMaxBurst);
    r.finish();
    return rate;
}

}  // namespace crank::config
