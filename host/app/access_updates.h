#pragma once

// Who may call, in one place: the config file's agents (at start, and each reload) and the
// admin API's agents (admin::AgentCatalog, as the store has them) are joined into one
// AuthConfig, and the endpoint's keys, concurrency bounds and rates, and the runner's session
// and job bounds, are replaced by it whenever either side changes. An API agent whose id the file
// gives too is left out (the file wins), and said so in the log.
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

    /// Whether the config file (as last applied) defines agent `id`.
    bool fileDefines(std::string_view id) const;

    /// The ids of the API's agents that the file's agents hide (tests, the log).
    std::vector<std::string> hidden() const;

private:
    void applyLocked();

    mcp::McpEndpoint& endpoint_;
    std::shared_ptr<mcp::RateLimits> rates_;
    runtime::OperationRunner& runner_;
    mutable std::mutex mutex_;
    config::Config file_;
    std::vector<config::Agent> api_;
    std::vector<std::string> hidden_;
};

}  // namespace crank::app
