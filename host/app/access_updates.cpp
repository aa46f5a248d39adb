#include "app/access_updates.h"

#include <set>
#include <utility>

#include "log/log.h"
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

bool AccessUpdates::fileDefines(std::string_view id) const {
    const std::lock_guard lock(mutex_);
    for (const config::Agent& a : file_.auth.agents) {
        if (a.id == id) {
            return true;
        }
    }
    return false;
}

std::vector<std::string> AccessUpdates::hidden() const {
    const std::lock_guard lock(mutex_);
    return hidden_;
}

void AccessUpdates::applyLocked() {
    config::Config joined = file_;
    std::set<std::string> ids;
    for (const config::Agent& a : file_.auth.agents) {
        ids.insert(a.id);
    }
    std::vector<std::string> hidden;
    for (const config::Agent& a : api_) {
        if (!ids.insert(a.id).second) {
            hidden.push_back(a.id);
            continue;
        }
        joined.auth.agents.push_back(a);
    }
    if (hidden != hidden_) {
        for (const std::string& id : hidden) {
            log::warn(
                "auth: the config file defines agent {}, which the admin API defines too; "
                "the file's is used",
                id);
        }
        hidden_ = std::move(hidden);
    }
    // Bounds before keys (reloadAuth's order): an agent admitted is counted against its own.
    endpoint_.reloadAuth(joined);
    if (rates_) {
        rates_->setRates(joined.auth);
    }
    runner_.setCallerLimits(joined.auth);
}

}  // namespace crank::app
