#pragma once

// Who may call, in one place: the config file's agents (at start, and each reload) and the
// admin API's agents (admin::AgentCatalog, as the store has them) are joined into one
// AuthConfig, and the endpoint's keys, concurrency bounds and rates, and the runner's session
// and job bounds, are replaced by it whenever either side changes. The API's agents call as
// `api:ID` (admin::kApiAgentPrefix), an id no file agent can have.
//
// THREADING: both setters may be called from any thread; they are serialised.

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace crank::mcp {
class McpEndpoint;
class RateLimits;
}  // namespace crank::mcp
namespace crank::runtime {
class OperationRunner;
}  // namespace crank::runtime

namespace crank::app {

class AccessUpdates {
public:
    /// `running`: the config crankd started with; the endpoint and the rates must outlive this.
    AccessUpdates(const config::Config& running, mcp::McpEndpoint& endpoint,
                  std::shared_ptr<mcp::RateLimits> rates, runtime::OperationRunner& runner);

    /// A reload's config: its workspaces, agents, bounds and rates, with the API's agents.
    void setFile(const config::Config& next);
    /// The admin API's agents now, with the file's.
    void setApiAgents(std::vector<config::Agent> agents);

    /// The config file's agents, as last applied.
    std::vector<config::Agent> fileAgents() const;

private:
    void applyLocked();

    mcp::McpEndpoint& endpoint_;
    std::shared_ptr<mcp::RateLimits> rates_;
    runtime::OperationRunner& runner_;
    mutable std::mutex mutex_;
    config::Config file_;
    std::vector<config::Agent> api_;
};

}  // namespace crank::app
