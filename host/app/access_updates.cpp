#include "app/access_updates.h"

#include <utility>

#include "mcp/mcp_endpoint.h"
#include "mcp/rate_limits.h"
#include "runtime/operation_runner.h"

namespace crank::app {

AccessUpdates::AccessUpdates(const config::Config& running, mcp::McpEndpoint& endpoint,
                             std::shared_ptr<mcp::RateLimits> rates,
                             runtime::OperationRunner& runner)
    : endpoint_(endpoint), rates_(std::move(rates)), runner_(runner), file_(running) {}

void AccessUpdates::setFile(const config::Config& next) {
    const std::lock_guard lock(mutex_);
    file_ = next;
    applyLocked();
}

void AccessUpdates::setApiAgents(std::vector<config::Agent> agents) {
    const std::lock_guard lock(mutex_);
    api_ = std::move(agents);
    applyLocked();
}

std::vector<config::Agent> AccessUpdates::fileAgents() const {
    const std::lock_guard lock(mutex_);
    return file_.auth.agents;
}

void AccessUpdates::applyLocked() {
    config::Config joined = file_;
    joined.auth.agents.insert(joined.auth.agents.end(), api_.begin(), api_.end());
    // Bounds before keys (reloadAuth's order): an agent admitted is counted against its own.
    endpoint_.reloadAuth(joined);
    if (rates_) {
        rates_->setRates(joined.auth);
    }
    runner_.setCallerLimits(joined.auth);
}

}  // namespace crank::app
