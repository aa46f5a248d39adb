#pragma once

#include <csignal>

#include "app/command_line.h"

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
int runCrankd(const CommandLine& commandLine, const sigset_t& stopSignals);

}  // namespace crank::app
