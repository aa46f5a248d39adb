#pragma once

#include <csignal>
#include <functional>

#include "app/command_line.h"

namespace crank::mcp {
class FunctionToolRegistry;
}  // namespace crank::mcp

namespace crank::app {

/// Exit statuses of crankd (also listed in --help and docs/operations.md).
enum ExitCode : int {
    kExitOk = 0,
    kExitRuntime = 1,  ///< could not listen, could not open the store, ...
    kExitUsage = 2,    ///< bad command-line arguments
    kExitConfig = 3,   ///< invalid configuration
};

/// Runs crankd as the command line asks: --version, --check, or serve until one of `stopSignals`
/// arrives (the caller must have blocked them in every thread, see main.cpp), then drain and
/// return. Returns the process exit status.
/// `addTools`, when set, adds tools before serving. The shipped crankd passes nothing; test
/// builds of crankd (tests/support) use it to publish fixture tools until plugins exist.
int runCrankd(const CommandLine& commandLine, const sigset_t& stopSignals,
              const std::function<void(mcp::FunctionToolRegistry&)>& addTools = {});

/// The whole of crankd's main(): blocks the stop signals, parses the arguments, runs.
int crankdMain(int argc, char** argv,
               const std::function<void(mcp::FunctionToolRegistry&)>& addTools = {});

}  // namespace crank::app
