#pragma once

// Concurrency per upstream: the tools/call in progress that wait on one upstream (an origin, a
// gRPC target, a stdio command, a federated MCP server, or a name operations give themselves
// with `upstream`) are bounded by `server.max_calls_per_upstream`, so that an upstream that
// hangs holds at most that many of the node's call slots and every other upstream's tools keep
// the rest. The bound is a refusal, not a queue: a call beyond it is answered at once with an
// isError result that names the upstream and the limit, like the caller quotas.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace crank::mcp {

/// THREADING: every function may be called from any thread.
class UpstreamSlots : public std::enable_shared_from_this<UpstreamSlots> {
public:
    /// `per_upstream` >= 1: the calls one upstream may have in progress on this node.
    explicit UpstreamSlots(std::int64_t per_upstream);

    /// One slot taken, given back when destroyed (on any thread).
    class Hold {
    public:
        Hold(std::shared_ptr<UpstreamSlots> slots, std::string upstream);
        ~Hold();
        Hold(const Hold&) = delete;
        Hold& operator=(const Hold&) = delete;

    private:
        std::shared_ptr<UpstreamSlots> slots_;
        std::string upstream_;
    };

    /// A slot of `upstream`, or null with `refusal` set (in words that name the upstream and the
    /// limit) when it has per_upstream calls in progress already.
    std::unique_ptr<Hold> hold(const std::string& upstream, std::string& refusal);

    /// Calls in progress to `upstream` (tests, metrics).
    std::int64_t held(const std::string& upstream) const;
    std::int64_t perUpstream() const { return per_upstream_; }

private:
    void release(const std::string& upstream);

    const std::int64_t per_upstream_;
    mutable std::mutex mutex_;
    /// Only upstreams with a call in progress: at most the node's call slots entries.
    std::map<std::string, std::int64_t, std::less<>> held_;
};

}  // namespace crank::mcp
