#include "mcp/upstream_slots.h"

#include <algorithm>
#include <utility>

#include <fmt/core.h>

namespace crank::mcp {

UpstreamSlots::UpstreamSlots(std::int64_t per_upstream)
    : per_upstream_(std::max<std::int64_t>(per_upstream, 1)) {}

UpstreamSlots::Hold::Hold(std::shared_ptr<UpstreamSlots> slots, std::string upstream)
    : slots_(std::move(slots)), upstream_(std::move(upstream)) {}

UpstreamSlots::Hold::~Hold() {
    slots_->release(upstream_);
}

std::unique_ptr<UpstreamSlots::Hold> UpstreamSlots::hold(const std::string& upstream,
                                                         std::string& refusal) {
    {
        const std::lock_guard lock(mutex_);
        std::int64_t& held = held_[upstream];
        if (held >= per_upstream_) {
            refusal = fmt::format(
                "upstream {} already has {} calls in progress from this node, its limit "
                "(server.max_calls_per_upstream: {}); retry when one of them has ended",
                upstream, held, per_upstream_);
            return nullptr;
        }
        ++held;
    }
    return std::make_unique<Hold>(shared_from_this(), upstream);
}

std::int64_t UpstreamSlots::held(const std::string& upstream) const {
    const std::lock_guard lock(mutex_);
    const auto it = held_.find(upstream);
    return it == held_.end() ? 0 : it->second;
}

void UpstreamSlots::release(const std::string& upstream) {
    const std::lock_guard lock(mutex_);
    const auto it = held_.find(upstream);
    if (it != held_.end() && --it->second <= 0) {
        held_.erase(it);
    }
}

}  // namespace crank::mcp
