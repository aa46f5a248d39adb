#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace crank::testing {

/// A child process started by a test, with its stdout and stderr captured. The destructor kills
/// it (SIGKILL, by pid) and reaps it if it is still running, so no test leaves a process behind.
class ChildProcess {
public:
    /// Starts `argv[0]` with `argv`; `env` entries are added to (or replace) the test's
    /// environment. Throws std::runtime_error when the process cannot be started.
    explicit ChildProcess(std::vector<std::string> argv,
                          std::map<std::string, std::string> env = {});
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }

    /// Reads stderr until a line contains `needle` or `timeout` passes (or the process closes
    /// stderr); returns that line.
    std::optional<std::string> waitForStderrLine(const std::string& needle,
                                                 std::chrono::milliseconds timeout);

    /// Waits for the "listening on http://127.0.0.1:PORT" line that crankd and the demo upstream
    /// log once they serve, and returns PORT; nullopt when it does not come within `timeout`.
    std::optional<std::uint16_t> waitForListeningPort(std::chrono::milliseconds timeout);

    /// Sends `signal` to the process.
    void signal(int signal);

    /// Waits for the process to end, at most `timeout`. Returns the exit status, or
    /// 128 + signal number when a signal ended it; nullopt on timeout (the process keeps running).
    std::optional<int> waitForExit(std::chrono::milliseconds timeout);

    /// Everything read so far from stdout / stderr (reading what is left once the process ended).
    std::string stdoutText();
    std::string stderrText();
    /// What the process wrote on stderr so far, after reading for `wait` more (it keeps running).
    std::string stderrSoFar(std::chrono::milliseconds wait);

private:
    void pump(std::chrono::milliseconds timeout);

    pid_t pid_ = -1;
    int stdout_ = -1;
    int stderr_ = -1;
    std::string out_;
    std::string err_;
    std::size_t errScanned_ = 0;
    std::optional<int> exit_;
};

}  // namespace crank::testing
