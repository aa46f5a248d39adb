#include "stdio_connection.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <system_error>

#include <rapidjson/document.h>

#include "json_text.h"
#include "modern_request.h"
#include "rpc_message.h"
#include <crank/sdk/json.hpp>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, not in a header

namespace crank::mcpc {
namespace {

using Clock = std::chrono::steady_clock;

/// Longest stderr line passed to the log (the rest of it is cut).
constexpr std::size_t kMaxLogLine = 4096;

std::string errnoText(int err) {
    return std::generic_category().message(err);  // strerror() is not thread-safe
}

/// Closes `fd` and sets it to -1.
void closeFd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

/// Reads `fd` line by line (LF, an optional CR before it dropped) until EOF or an error; a line
/// longer than `max` is reported through `on_overlong` (and the rest of it skipped) when given,
/// else cut. Returns the read error text, or empty at EOF.
std::string readLines(int fd, std::size_t max, const std::function<void(std::string_view)>& on_line,
                      const std::function<bool()>& on_overlong) {
    std::string pending;
    bool skipping = false;
    char buffer[65536];
    while (true) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n == 0) {
            return {};
        }
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errnoText(errno);
        }
        std::string_view chunk(buffer, static_cast<std::size_t>(n));
        while (!chunk.empty()) {
            const std::size_t lf = chunk.find('\n');
            const std::string_view part = chunk.substr(0, lf);
            if (!skipping) {
                pending.append(part.substr(0, max + 1 - std::min(max + 1, pending.size())));
                if (pending.size() > max) {
                    if (on_overlong && !on_overlong()) {
                        return {};
                    }
                    pending.resize(max);
                    on_line(pending);
                    pending.clear();
                    skipping = true;
                }
            }
            if (lf == std::string_view::npos) {
                break;
            }
            if (!skipping) {
                if (!pending.empty() && pending.back() == '\r') {
                    pending.pop_back();
                }
                on_line(pending);
            }
            pending.clear();
            skipping = false;
            chunk.remove_prefix(lf + 1);
        }
    }
}

}  // namespace

StdioConnection::StdioConnection(StdioOptions options, MessageHandler on_message, LogHandler on_log)
    : options_(std::move(options)),
      on_message_(std::move(on_message)),
      on_log_(std::move(on_log)) {}

std::unique_ptr<StdioConnection> StdioConnection::start(StdioOptions options,
                                                        MessageHandler on_message,
                                                        LogHandler on_log, std::string& error) {
    if (options.command.empty()) {
        error = "command: an upstream server's command is required";
        return nullptr;
    }
    std::unique_ptr<StdioConnection> c(
        new StdioConnection(std::move(options), std::move(on_message), std::move(on_log)));
    const StdioOptions& o = c->options_;

    // Everything the child needs is built before fork(): after it, only async-signal-safe calls.
    std::vector<std::string> argvText{o.command};
    argvText.insert(argvText.end(), o.args.begin(), o.args.end());
    std::vector<char*> argv;
    argv.reserve(argvText.size() + 1);
    for (std::string& a : argvText) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    std::map<std::string, std::string> envMap;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string_view entry(*e);
        const std::size_t eq = entry.find('=');
        if (eq != std::string_view::npos) {
            envMap.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
        }
    }
    for (const auto& [name, value] : o.env) {
        envMap[name] = value;
    }
    std::vector<std::string> envText;
    envText.reserve(envMap.size());
    for (const auto& [name, value] : envMap) {
        std::string entry = name;
        entry += '=';
        entry += value;
        envText.push_back(std::move(entry));
    }
    std::vector<char*> envp;
    envp.reserve(envText.size() + 1);
    for (std::string& e : envText) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    const bool searchPath = o.command.find('/') == std::string::npos;

    int in[2] = {-1, -1};
    int out[2] = {-1, -1};
    int err[2] = {-1, -1};
    int status[2] = {-1, -1};  // the child writes errno here when exec fails
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 ||
        ::pipe2(err, O_CLOEXEC) != 0 || ::pipe2(status, O_CLOEXEC) != 0) {
        error = std::string("cannot create pipes: ") + errnoText(errno);
        for (int* p : {in, out, err, status}) {
            closeFd(p[0]);
            closeFd(p[1]);
        }
        return nullptr;
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        error = std::string("cannot start the server (fork): ") + errnoText(errno);
        for (int* p : {in, out, err, status}) {
            closeFd(p[0]);
            closeFd(p[1]);
        }
        return nullptr;
    }
    if (pid == 0) {
        // The child. Dies with crankd, leads its own process group (the signals go to the whole
        // group, so that the server's own children go too).
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) {
            ::_exit(127);  // crankd died before the line above
        }
        ::setpgid(0, 0);
        ::dup2(in[0], STDIN_FILENO);
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(err[1], STDERR_FILENO);
        sigset_t none;
        sigemptyset(&none);
        // crankd blocks SIGTERM in its threads; the server gets the default mask. The child is
        // single-threaded here, so the per-thread form is the same thing.
        ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
        if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) {
            const int e = errno;
            (void)!::write(status[1], &e, sizeof e);
            ::_exit(127);
        }
        if (searchPath) {
            ::execvpe(argv[0], argv.data(), envp.data());
        } else {
            ::execve(argv[0], argv.data(), envp.data());
        }
        const int e = errno;
        (void)!::write(status[1], &e, sizeof e);
        ::_exit(127);
    }
    closeFd(in[0]);
    closeFd(out[1]);
    closeFd(err[1]);
    closeFd(status[1]);
    ::setpgid(pid, pid);  // also here: whichever runs first, the group exists before signals
    int execErrno = 0;
    ssize_t n = 0;
    do {
        n = ::read(status[0], &execErrno, sizeof execErrno);
    } while (n < 0 && errno == EINTR);
    closeFd(status[0]);
    c->pid_ = pid;
    c->stdin_fd_ = in[1];
    c->stdout_fd_ = out[0];
    c->stderr_fd_ = err[0];
    if (n == static_cast<ssize_t>(sizeof execErrno)) {
        error = "cannot run " + sdk::jsonQuote(o.command) +
                (o.cwd.empty() ? std::string() : " in " + sdk::jsonQuote(o.cwd)) + ": " +
                errnoText(execErrno);
        c->waitExit(std::chrono::milliseconds(1'000));
        c->close();
        return nullptr;
    }
    StdioConnection* self = c.get();
    c->stdout_thread_ = std::thread([self] { self->readStdout(); });
    c->stderr_thread_ = std::thread([self] { self->readStderr(); });
    return c;
}

StdioConnection::~StdioConnection() {
    close();
}

bool StdioConnection::open() const {
    const std::lock_guard lock(mutex_);
    return !ended_;
}

std::string StdioConnection::endReason() const {
    const std::lock_guard lock(mutex_);
    return end_reason_;
}

void StdioConnection::readStdout() {
    bool overlong = false;
    const std::string failure = readLines(
        stdout_fd_, options_.max_message_bytes, [this](std::string_view line) { dispatch(line); },
        [&overlong] {
            overlong = true;
            return false;  // a message we cannot read whole: the stream is out of step
        });
    if (overlong) {
        end("the server sent a message longer than " + std::to_string(options_.max_message_bytes) +
            " bytes");
        // Nothing more can be understood: stop the server.
        if (pid_ > 0) {
            ::kill(-pid_, SIGTERM);
        }
        return;
    }
    end(failure.empty() ? "the server closed its stdout (it exited?)"
                        : "reading the server's stdout failed: " + failure);
}

void StdioConnection::readStderr() {
    readLines(
        stderr_fd_, kMaxLogLine,
        [this](std::string_view line) {
            if (on_log_ && !line.empty()) {
                on_log_(line);
            }
        },
        nullptr);
}

void StdioConnection::dispatch(std::string_view line) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
        return;
    }
    rapidjson::Document doc;
    if (!parseServerMessage(line, doc).empty() || !doc.IsObject()) {
        if (on_log_) {
            on_log_("the server wrote a line that is not a JSON-RPC message; ignored: " +
                    std::string(line.substr(0, 200)));
        }
        return;
    }
    const Classified kind = classify(doc);
    if (kind.kind == Classified::Kind::answer && kind.int_id) {
        RpcOutcome outcome = answerOutcome(doc);
        const std::lock_guard lock(mutex_);
        const auto it = waiting_.find(kind.id);
        if (it != waiting_.end() && !it->second) {
            it->second = std::move(outcome);
            answered_.notify_all();
            return;
        }
        // An answer to nothing we wait for (late, after a timeout): dropped.
        return;
    }
    if (on_message_) {
        on_message_(line);
    }
}

bool StdioConnection::writeLine(std::string_view json) {
    const std::lock_guard lock(write_mutex_);
    if (stdin_fd_ < 0) {
        return false;
    }
    std::string data(json);
    data += '\n';
    std::size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(stdin_fd_, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;  // EPIPE: the server is gone (SIGPIPE is ignored by crankd)
        }
        done += static_cast<std::size_t>(n);
    }
    return true;
}

RpcOutcome StdioConnection::request(std::string_view method, std::string_view params_json,
                                    std::chrono::milliseconds timeout, const RequestHooks& hooks) {
    std::int64_t id = 0;
    {
        const std::lock_guard lock(mutex_);
        if (ended_) {
            RpcOutcome closed;
            closed.error_message = "the connection to the server is closed: " + end_reason_;
            return closed;
        }
        id = next_id_++;
        waiting_.emplace(id, std::nullopt);
    }
    if (hooks.on_id) {
        hooks.on_id(id);
    }
    ModernClient client;
    {
        const std::lock_guard lock(mutex_);
        client.protocol_version = modern_version_;
        client.client_name = client_name_;
        client.client_version = client_version_;
    }
    std::string message;
    if (client.protocol_version.empty()) {
        message = requestText(id, method, params_json);
    } else {
        ModernRequest modern;
        std::string error;
        const std::string& capabilities = hooks.client_capabilities_json;
        if (!buildModernRequest(id, method, params_json, client,
                                capabilities.empty() ? std::string_view("{}") : capabilities,
                                nullptr, modern, error)) {
            const std::lock_guard lock(mutex_);
            waiting_.erase(id);
            RpcOutcome refused;
            refused.error_message = std::string(method) + ": " + error;
            return refused;
        }
        message = std::move(modern.body);
    }
    if (!writeLine(message)) {
        const std::lock_guard lock(mutex_);
        waiting_.erase(id);
        RpcOutcome failed;
        failed.error_message = "cannot write to the server (it exited?)";
        return failed;
    }
    const Clock::time_point deadline = Clock::now() + timeout;
    std::unique_lock lock(mutex_);
    const auto ready = [&] {
        const auto it = waiting_.find(id);
        return ended_ || (it != waiting_.end() && it->second.has_value());
    };
    bool done = false;
    bool cancelled = false;
    while (!done) {
        // Without a cancellation hook one wait to the deadline; with one, slices of 50 ms.
        const Clock::time_point until =
            hooks.cancelled ? std::min(deadline, Clock::now() + std::chrono::milliseconds(50))
                            : deadline;
        done = answered_.wait_until(lock, until, ready);
        if (done || Clock::now() >= deadline) {
            break;
        }
        lock.unlock();
        cancelled = hooks.cancelled();
        lock.lock();
        if (cancelled) {
            break;
        }
    }
    std::optional<RpcOutcome> outcome = std::move(waiting_[id]);
    waiting_.erase(id);
    const bool ended = ended_;
    const std::string reason = end_reason_;
    lock.unlock();
    if (outcome) {
        return std::move(*outcome);
    }
    RpcOutcome failed;
    if (cancelled || !done) {
        if (!ended) {
            // MCP cancellation: the server should stop; its late answer, if any, is dropped.
            notify("notifications/cancelled",
                   R"({"requestId":)" + std::to_string(id) + R"(,"reason":)" +
                       sdk::jsonQuote(cancelled ? "cancelled by the client" : "timed out") + "}");
        }
        failed.cancelled = cancelled;
        failed.error_message = cancelled
                                   ? std::string(method) + ": cancelled"
                                   : std::string(method) + ": the server did not answer within " +
                                         std::to_string(timeout.count()) + " ms";
        return failed;
    }
    failed.error_message = std::string(method) + ": " + reason;
    return failed;
}

bool StdioConnection::notify(std::string_view method, std::string_view params_json) {
    return open() && writeLine(notificationText(method, params_json));
}

bool StdioConnection::setModernVersion(const std::string& version) {
    const std::lock_guard lock(mutex_);
    modern_version_ = version;
    return true;
}

std::string StdioConnection::modernVersion() const {
    const std::lock_guard lock(mutex_);
    return modern_version_;
}

void StdioConnection::setClientInfo(const std::string& name, const std::string& version) {
    const std::lock_guard lock(mutex_);
    client_name_ = name;
    client_version_ = version;
}

bool StdioConnection::send(std::string_view message_json) {
    return open() && writeLine(message_json);
}

void StdioConnection::end(const std::string& reason) {
    const std::lock_guard lock(mutex_);
    if (!ended_) {
        ended_ = true;
        end_reason_ = reason;
    }
    answered_.notify_all();
}

bool StdioConnection::waitExit(std::chrono::milliseconds wait) {
    if (pid_ <= 0 || reaped_) {
        return true;
    }
    const auto until = Clock::now() + wait;
    while (true) {
        // Seen exited but not reaped yet (WNOWAIT): its process group id cannot have been reused,
        // so whatever the server left behind in its group can still be killed safely.
        siginfo_t info{};
        const int r = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
        if (r < 0 && errno == ECHILD) {
            reaped_ = true;
            return true;
        }
        if (r == 0 && info.si_pid == pid_) {
            ::kill(-pid_, SIGKILL);
            int status = 0;
            ::waitpid(pid_, &status, 0);
            reaped_ = true;
            return true;
        }
        if (Clock::now() >= until) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

void StdioConnection::close() {
    {
        const std::lock_guard lock(write_mutex_);
        closeFd(stdin_fd_);  // 1. the server sees EOF on its stdin
    }
    if (pid_ > 0 && !reaped_) {
        if (!waitExit(options_.close_wait)) {
            ::kill(-pid_, SIGTERM);  // 2. the process group
            if (!waitExit(options_.term_wait)) {
                ::kill(-pid_, SIGKILL);  // 3.
                waitExit(std::chrono::milliseconds(5'000));
            }
        }
    }
    end("the connection was closed");
    if (stdout_thread_.joinable()) {
        stdout_thread_.join();
    }
    if (stderr_thread_.joinable()) {
        stderr_thread_.join();
    }
    closeFd(stdout_fd_);
    closeFd(stderr_fd_);
}

}  // namespace crank::mcpc
