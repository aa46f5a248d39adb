#include "app/descriptor_budget.h"

#include <cerrno>
#include <system_error>

#include <fmt/core.h>

#include "log/log.h"
#include <sys/resource.h>

namespace crank::app {

std::string DescriptorBudget::describe() const {
    return fmt::format(
        "server.max_connections {} + mcp.max_streams {} + server.threads and jobs.workers {} + "
        "a reserve of {}",
        connections, streams, workers, reserve);
}

DescriptorBudget descriptorBudget(const config::Config& config) {
    DescriptorBudget b;
    b.connections = static_cast<std::uint64_t>(config.server.max_connections);
    b.streams = static_cast<std::uint64_t>(config.mcp.max_streams);
    b.workers = static_cast<std::uint64_t>(config.server.threads) +
                static_cast<std::uint64_t>(config.jobs.workers);
    b.reserve = kDescriptorReserve;
    return b;
}

Result<DescriptorDecision> decideDescriptors(const DescriptorBudget& budget, std::uint64_t soft,
                                             std::uint64_t hard) {
    const std::uint64_t need = budget.total();
    if (soft >= need) {
        return DescriptorDecision{};
    }
    if (hard >= need) {
        return DescriptorDecision{need};
    }
    return Error{ErrorCode::unavailable,
                 fmt::format("this configuration may need {} file descriptors ({}), but the "
                             "process may open at most {} (RLIMIT_NOFILE hard limit): lower "
                             "server.max_connections or mcp.max_streams, or raise the limit "
                             "(ulimit -Hn, systemd LimitNOFILE=)",
                             need, budget.describe(), hard)};
}

Result<void> ensureDescriptors(const config::Config& config) {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
        return {};  // nothing known: nothing to check
    }
    const auto unlimited = [](rlim_t v) {
        return v == RLIM_INFINITY ? UINT64_MAX : static_cast<std::uint64_t>(v);
    };
    const DescriptorBudget budget = descriptorBudget(config);
    auto decision = decideDescriptors(budget, unlimited(limit.rlim_cur), unlimited(limit.rlim_max));
    if (!decision) {
        return decision.error();
    }
    if (decision->raise_to > 0) {
        const rlim_t before = limit.rlim_cur;
        limit.rlim_cur = static_cast<rlim_t>(decision->raise_to);
        if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
            return Error{ErrorCode::unavailable,
                         fmt::format("cannot raise RLIMIT_NOFILE from {} to {} ({}): {}", before,
                                     decision->raise_to, budget.describe(),
                                     std::generic_category().message(errno))};
        }
        log::info("raised the open file limit from {} to {} ({})", before, decision->raise_to,
                  budget.describe());
    }
    return {};
}

}  // namespace crank::app
