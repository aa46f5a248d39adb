// crankd: the Crank MCP gateway. See `crankd --help` and docs/.

#include <csignal>
#include <cstdio>
#include <exception>
#include <string_view>
#include <vector>

#include "app/command_line.h"
#include "app/crankd.h"

int main(int argc, char** argv) {
    // Block the stop signals before any thread exists: every thread inherits the mask, and the
    // main thread alone takes them with sigwait(), outside any signal-handler restrictions.
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGTERM);
    sigaddset(&stopSignals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);  // a peer closing a socket is an error value, not a death

    std::vector<std::string_view> args(argv + 1, argv + argc);
    auto commandLine = crank::app::parseCommandLine(args);
    if (!commandLine) {
        std::fprintf(stderr, "crankd: %s\nTry 'crankd --help'.\n",
                     commandLine.error().message.c_str());
        return crank::app::kExitUsage;
    }
    try {
        return crank::app::runCrankd(*commandLine, stopSignals);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "crankd: fatal: %s\n", e.what());
        return crank::app::kExitRuntime;
    }
}
