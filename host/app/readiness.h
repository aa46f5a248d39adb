#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "util/error.h"

namespace crank::app {

/// The answer of /readyz: named checks (store open, plugins loaded, ...) that all must pass, and
/// a draining flag that turns it to "not ready" as soon as shutdown begins so that a load balancer
/// stops sending new traffic while in-flight requests finish.
class Readiness {
public:
    using Check = std::function<Result<void>()>;

    /// Registers a check; call before serving starts (the list is not locked).
    void add(std::string name, Check check) {
        checks_.emplace_back(std::move(name), std::move(check));
    }

    void setDraining() { draining_ = true; }

    struct Report {
        bool ready = false;
        std::string
            json;  ///< {"status":"ready"|"not_ready"|"draining","checks":{"store":"ok",...}}
    };
    /// Runs every check now. Thread-safe.
    Report run() const;

private:
    std::vector<std::pair<std::string, Check>> checks_;
    std::atomic<bool> draining_{false};
};

}  // namespace crank::app
