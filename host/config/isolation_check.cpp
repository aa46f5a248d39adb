#include "config/isolation_check.h"

#include <algorithm>

#include <fmt/core.h>

namespace crank::config {

std::map<std::string, std::int64_t> reservedCalls(const Config& config) {
    const std::int64_t slots = config.server.effectiveMaxConcurrentCalls();
    const auto workspaces = static_cast<std::int64_t>(config.auth.workspaces.size());
    std::int64_t share = 0;
    if (workspaces > 1 && workspaces <= slots / 2) {
        share = std::max<std::int64_t>(1, slots / (2 * workspaces));
    }
    std::map<std::string, std::int64_t> out;
    for (const Workspace& ws : config.auth.workspaces) {
        out[ws.id] = ws.limits.reserved_calls >= 0 ? ws.limits.reserved_calls : share;
    }
    return out;
}

std::vector<std::string> isolationWarnings(const Config& config) {
    std::vector<std::string> warnings;
    const std::int64_t slots = config.server.effectiveMaxConcurrentCalls();
    const auto reserved = reservedCalls(config);
    std::int64_t total = 0;
    for (const auto& [id, n] : reserved) {
        total += n;
    }
    if (total > slots) {
        warnings.push_back(fmt::format(
            "auth.workspaces[].limits.reserved_calls: the workspaces reserve {} call slots in "
            "all, more than server.max_concurrent_calls ({}): the reservations cannot all be "
            "kept; lower them or raise server.threads",
            total, slots));
    }
    if (reserved.size() > 1) {
        for (const auto& [id, n] : reserved) {
            if (n == 0) {
                warnings.push_back(
                    fmt::format("workspace \"{}\" reserves no call slots (auth.workspaces[].limits."
                                "reserved_calls): calls of the other workspaces can take all {} "
                                "(server.max_concurrent_calls) and lock it out",
                                id, slots));
            }
        }
    }
    return warnings;
}

}  // namespace crank::config
