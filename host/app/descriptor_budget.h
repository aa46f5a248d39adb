#pragma once

#include <cstdint>
#include <string>

#include "config/config.h"
#include "util/error.h"

namespace crank::app {

/// The file descriptors a configuration may need at once: every client connection
/// (server.max_connections), every SSE stream (mcp.max_streams), an upstream connection per
/// worker, per job worker, and a reserve for the store, the plugins, the listener and the logs.
struct DescriptorBudget {
    std::uint64_t connections = 0;
    std::uint64_t streams = 0;
    std::uint64_t workers = 0;
    std::uint64_t reserve = 0;
    std::uint64_t total() const { return connections + streams + workers + reserve; }
    /// "server.max_connections 4096 + mcp.max_streams 10000 + ...".
    std::string describe() const;
};

/// Descriptors kept for what the configuration does not count: the store's connections, plugin
/// libraries, the listener, epoll sets, stdio upstreams, the logs.
inline constexpr std::uint64_t kDescriptorReserve = 256;

DescriptorBudget descriptorBudget(const config::Config& config);

/// What to do about RLIMIT_NOFILE (soft, hard) for `budget`: nothing, raise the soft limit to
/// `raise_to`, or refuse to start (the error names the numbers and what to change).
struct DescriptorDecision {
    std::uint64_t raise_to = 0;  ///< 0: leave the limit as it is
};
Result<DescriptorDecision> decideDescriptors(const DescriptorBudget& budget, std::uint64_t soft,
                                             std::uint64_t hard);

/// Checks the process's RLIMIT_NOFILE against the configuration at start-up, raising the soft
/// limit when the hard one allows. Fails (unavailable) with the numbers when it cannot.
Result<void> ensureDescriptors(const config::Config& config);

}  // namespace crank::app
