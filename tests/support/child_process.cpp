#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>
#include <stdexcept>
#include <thread>

#include <sys/wait.h>

extern char** environ;

namespace crank::testing {
namespace {

void closeFd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

}  // namespace

ChildProcess::ChildProcess(std::vector<std::string> argv, std::map<std::string, std::string> env) {
    int outPipe[2];
    int errPipe[2];
    if (::pipe2(outPipe, O_CLOEXEC) != 0 || ::pipe2(errPipe, O_CLOEXEC) != 0) {
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    }
    std::vector<std::string> envStrings;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry(*e);
        if (env.count(entry.substr(0, entry.find('='))) == 0) {
            envStrings.push_back(entry);
        }
    }
    for (const auto& [key, value] : env) {
        envStrings.push_back(key + "=" + value);
    }
    std::vector<char*> args;
    for (auto& a : argv) {
        args.push_back(a.data());
    }
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (auto& e : envStrings) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);

    pid_ = ::fork();
    if (pid_ < 0) {
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid_ == 0) {
        ::dup2(outPipe[1], STDOUT_FILENO);
        ::dup2(errPipe[1], STDERR_FILENO);
        // The child must not inherit the test's blocked signals.
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::execve(args[0], args.data(), envp.data());
        ::_exit(127);
    }
    ::close(outPipe[1]);
    ::close(errPipe[1]);
    stdout_ = outPipe[0];
    stderr_ = errPipe[0];
}

ChildProcess::~ChildProcess() {
    if (!exit_ && pid_ > 0) {
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }
    closeFd(stdout_);
    closeFd(stderr_);
}

void ChildProcess::pump(std::chrono::milliseconds timeout) {
    pollfd fds[2] = {{stdout_, POLLIN, 0}, {stderr_, POLLIN, 0}};
    if (stdout_ < 0 && stderr_ < 0) {
        std::this_thread::sleep_for(timeout);
        return;
    }
    if (::poll(fds, 2, static_cast<int>(timeout.count())) <= 0) {
        return;
    }
    char buffer[4096];
    int* fdsOwned[2] = {&stdout_, &stderr_};
    std::string* sinks[2] = {&out_, &err_};
    for (int i = 0; i < 2; ++i) {
        if (*fdsOwned[i] >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            const ssize_t n = ::read(*fdsOwned[i], buffer, sizeof buffer);
            if (n > 0) {
                sinks[i]->append(buffer, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                closeFd(*fdsOwned[i]);
            }
        }
    }
}

std::optional<std::string> ChildProcess::waitForStderrLine(const std::string& needle,
                                                           std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        std::size_t lineEnd;
        while ((lineEnd = err_.find('\n', errScanned_)) != std::string::npos) {
            const std::string line = err_.substr(errScanned_, lineEnd - errScanned_);
            errScanned_ = lineEnd + 1;
            if (line.find(needle) != std::string::npos) {
                return line;
            }
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline || (stderr_ < 0)) {
            return std::nullopt;
        }
        pump(std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now),
                      std::chrono::milliseconds(100)));
    }
}

void ChildProcess::signal(int sig) {
    if (!exit_ && pid_ > 0) {
        ::kill(pid_, sig);
    }
}

std::optional<int> ChildProcess::waitForExit(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!exit_) {
        int status = 0;
        const pid_t r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            exit_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            break;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return std::nullopt;
        }
        pump(std::chrono::milliseconds(20));
    }
    return exit_;
}

std::string ChildProcess::stdoutText() {
    while (exit_ && stdout_ >= 0) {
        pump(std::chrono::milliseconds(100));
    }
    return out_;
}

std::string ChildProcess::stderrText() {
    while (exit_ && stderr_ >= 0) {
        pump(std::chrono::milliseconds(100));
    }
    return err_;
}

std::string ChildProcess::stderrSoFar(std::chrono::milliseconds wait) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (stderr_ >= 0 && std::chrono::steady_clock::now() < deadline) {
        pump(std::chrono::milliseconds(50));
    }
    return err_;
}

std::optional<std::uint16_t> ChildProcess::waitForListeningPort(std::chrono::milliseconds timeout) {
    const auto line = waitForStderrLine("listening on http://", timeout);
    std::smatch m;
    if (!line ||
        !std::regex_search(*line, m, std::regex(R"(listening on http://127\.0\.0\.1:(\d+))"))) {
        return std::nullopt;
    }
    return static_cast<std::uint16_t>(std::stoi(m[1].str()));
}

}  // namespace crank::testing
