#pragma once

// The register of opened request states in the store (Store::recordUsedState): a sealed
// requestState opens once in the whole deployment, whichever node it reaches, because every node
// of one store sees the others' records. Each agent, and each workspace, may hold only its share
// of unexpired records (mcp.max_request_states_per_agent, mcp.max_request_states_per_workspace),
// so that no caller can fill the register for the others; a refusal names only the caller's own
// limit. Expired records are deleted here, in batches, at most once a cleanup interval.
//
// THREADING: consume() may be called from any thread, concurrently.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>

#include "mcp/modern/used_states.h"
#include "store/store.h"

namespace crank::runtime {

class StoreUsedStates final : public mcp::UsedStates {
public:
    /// `cleanup_every`: how often (at most) a consume() first deletes expired records.
    StoreUsedStates(std::shared_ptr<store::Store> store, store::UsedStateLimits limits,
                    std::chrono::milliseconds cleanup_every = std::chrono::seconds(30));

    Result<bool> consume(std::string_view id, const mcp::StateOwner& owner,
                         std::int64_t expires_at_ms) override;

private:
    void cleanup(std::int64_t now_ms);

    std::shared_ptr<store::Store> store_;
    store::UsedStateLimits limits_;
    std::chrono::milliseconds cleanup_every_;
    std::atomic<std::int64_t> next_cleanup_ms_{0};
};

}  // namespace crank::runtime
