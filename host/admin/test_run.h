#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "runtime/operation.h"

namespace crank::runtime {
class OperationRunner;
}  // namespace crank::runtime

namespace crank::admin {

/// One test run (docs/admin-api.md, "Test runs"): an operation that need not be published, run
/// in its mode through the runner exactly as its tools would run it.
struct TestRunRequest {
    runtime::OperationPtr operation;
    std::string arguments_json = "{}";  ///< the tool input (the _start tool's)
    int polls = 3;                      ///< session: polls before the stop
    std::chrono::milliseconds poll_interval{1000};
    std::chrono::milliseconds timeout{60'000};  ///< the whole run
    std::string agent = "admin";                ///< runs as this agent of the op's workspace
    /// Set when crankd stops: the run ends as if its time were up. May be null.
    const std::atomic<bool>* stopping = nullptr;
};

/// The shortest pause between a test run's polls: a job's _status is audited and read from the
/// store each time.
inline constexpr std::chrono::milliseconds kMinTestPollInterval{100};

/// Runs it and returns the answer's JSON object (mode, outcome, result, contract, warnings,
/// steps, elapsed_ms). Blocks for at most the timeout plus one step's own bound; a session is
/// always stopped and a job still live at the end is cancelled.
std::string runTest(runtime::OperationRunner& runner, const TestRunRequest& request);

}  // namespace crank::admin
