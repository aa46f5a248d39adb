// Fault injection against real processes (issue 12): the real crankd, the real REST, aggregator
// and synthetic plugins, and real upstream processes (crank-rest-fixture, a listener that accepts
// and never answers), all on 127.0.0.1.
//
//   UpstreamFaultTest   an upstream killed (SIGKILL by pid) mid-window, mid-session and mid-job;
//                       an upstream that accepts and never answers, in every mode; a client that
//                       reads an SSE answer one byte a second; no descriptor or thread left behind
//   CrashRecoveryTest   crankd killed with SIGKILL under mixed load (unary calls, sessions and
//                       jobs, synthetic and REST) and restarted on the same SQLite store
//   DiskFullTest        the store's file system full: crankd runs in a private mount namespace
//                       (unshare -m) with the store on a small tmpfs that only it sees, which the
//                       test fills through /proc/<pid>/root and frees again
//
// Every wait is bounded; the only timing assertions are generous deadlines that tell "prompt"
// from "hung".

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <Poco/Exception.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/StreamSocket.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "log/log.h"
#include "mcp_http_client.h"
#include "proc_stats.h"
#include "store/sqlite_store.h"
#include "temp_dir.h"
#include "test_json.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

// Statuses by name in assertion messages.
namespace crank::store {
void PrintTo(JobStatus status, std::ostream* out) {  // NOLINT(readability-identifier-naming)
    *out << jobStatusName(status);
}
void PrintTo(SessionStatus status, std::ostream* out) {  // NOLINT(readability-identifier-naming)
    *out << sessionStatusName(status);
}
}  // namespace crank::store

namespace {

using crank::store::JobRecord;
using crank::store::JobStatus;
using crank::store::SessionRecord;
using crank::store::SessionStatus;
using crank::testing::ChildProcess;
using crank::testing::contains;
using crank::testing::eventually;
using crank::testing::jsonText;
using crank::testing::kAccept;
using crank::testing::msBetween;
using crank::testing::Reply;
using crank::testing::TempDir;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

/// Prints a measurement for the record ("[ fault    ] ...").
__attribute__((format(printf, 1, 2))) void note(const char* format, ...) {
    std::printf("[ fault    ] ");
    va_list args;
    va_start(args, format);
    std::vprintf(format, args);
    va_end(args);
    std::printf("\n");
    std::fflush(stdout);
}

/// crankd built with a sanitizer (CRANK_SANITIZE): its memory use says nothing about Crank's.
constexpr bool kSanitized = !std::string_view(CRANK_FAULT_SANITIZER).empty();

/// Joins the threads when it goes out of scope (after `stop`, which tells them to end), so that
/// an assertion that returns early does not leave a joinable std::thread behind (which would
/// abort the whole suite).
class Joined {
public:
    explicit Joined(std::vector<std::thread>& threads, std::function<void()> stop = {})
        : threads_(threads), stop_(std::move(stop)) {}
    ~Joined() { join(); }
    Joined(const Joined&) = delete;
    Joined& operator=(const Joined&) = delete;
    void join() {
        if (stop_) {
            stop_();
        }
        for (std::thread& t : threads_) {
            if (t.joinable()) {
                t.join();
            }
        }
    }

private:
    std::vector<std::thread>& threads_;
    std::function<void()> stop_;
};

// --- the processes -------------------------------------------------------------------------------

/// A number from /proc/<pid>/status ("VmRSS" in kB, "Threads"); -1 when unreadable.
std::int64_t procStatus(pid_t pid, const std::string& key) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key + ":", 0) == 0) {
            return std::strtoll(line.c_str() + key.size() + 1, nullptr, 10);
        }
    }
    return -1;
}

std::int64_t rssKb(pid_t pid) {
    return procStatus(pid, "VmRSS");
}

std::int64_t threads(pid_t pid) {
    return procStatus(pid, "Threads");
}

/// Open descriptors of `pid`.
std::int64_t fds(pid_t pid) {
    return crank::testing::openFds(pid);
}

/// Reads what a child wrote so far, so that no pipe fills up.
void drain(ChildProcess& process) {
    process.waitForStderrLine("\x01 never printed", 5ms);
}

std::size_t occurrences(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
        ++n;
    }
    return n;
}

/// A REST fixture process; `port` 0 picks one.
std::unique_ptr<ChildProcess> startFixture(std::uint16_t port, std::uint16_t* bound) {
    auto fixture = std::make_unique<ChildProcess>(std::vector<std::string>{
        CRANK_REST_FIXTURE_PATH, "--listen", "127.0.0.1:" + std::to_string(port)});
    const auto p = fixture->waitForListeningPort(20s);
    EXPECT_TRUE(p) << fixture->stderrText();
    *bound = p.value_or(0);
    return fixture;
}

/// `text` with every placeholder replaced by its value.
std::string substitute(std::string text, const std::map<std::string, std::string>& values) {
    for (const auto& [placeholder, value] : values) {
        for (auto at = text.find(placeholder); at != std::string::npos;
             at = text.find(placeholder, at + value.size())) {
            text.replace(at, placeholder.size(), value);
        }
    }
    return text;
}

std::string pluginDirs() {
    return R"("plugins": {"directories": [")" CRANK_PLUGIN_DIR R"(", ")" CRANK_TEST_PLUGIN_DIR
           R"("]})";
}

// --- HTTP and MCP that survive a dying crankd ----------------------------------------------------

/// One HTTP/1.1 exchange on a fresh connection (Connection: close). nullopt when the connection
/// fails, is cut before a complete response head, or `timeout` passes: a killed crankd is a
/// result here, not a test failure.
std::optional<Reply> tryExchange(std::uint16_t port, const std::string& method,
                                 const std::string& path,
                                 const std::vector<std::pair<std::string, std::string>>& headers,
                                 const std::string& body = "", std::chrono::seconds timeout = 30s) {
    std::string data;
    try {
        Poco::Net::StreamSocket socket(Poco::Net::SocketAddress("127.0.0.1", port));
        socket.setReceiveTimeout(Poco::Timespan(timeout.count(), 0));
        std::string request =
            method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n";
        for (const auto& [name, value] : headers) {
            request.append(name).append(": ").append(value).append("\r\n");
        }
        request += "Connection: close\r\nContent-Length: " + std::to_string(body.size()) +
                   "\r\n\r\n" + body;
        socket.sendBytes(request.data(), static_cast<int>(request.size()));
        char buffer[16384];
        int n = 0;
        while ((n = socket.receiveBytes(buffer, sizeof buffer)) > 0) {
            data.append(buffer, static_cast<std::size_t>(n));
        }
    } catch (const Poco::Exception&) {
        return std::nullopt;
    }
    const auto headEnd = data.find("\r\n\r\n");
    if (headEnd == std::string::npos || data.size() < 12) {
        return std::nullopt;
    }
    Reply reply;
    std::istringstream head(data.substr(0, headEnd));
    std::string line;
    std::getline(head, line);
    reply.status = static_cast<int>(std::strtol(line.substr(9, 3).c_str(), nullptr, 10));
    while (std::getline(head, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) {
            continue;
        }
        std::string name = line.substr(0, colon);
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' '));
        while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) {
            value.pop_back();
        }
        reply.headers[name] = value;
    }
    reply.body = data.substr(headEnd + 4);
    return reply;
}

bool healthy(std::uint16_t port, std::chrono::seconds timeout = 20s) {
    const auto reply = tryExchange(port, "GET", "/healthz", {}, "", timeout);
    return reply && reply->status == 200;
}

bool isError(const rapidjson::Value& result) {
    return result.IsObject() && result.HasMember("isError") && result["isError"].IsBool() &&
           result["isError"].GetBool();
}

std::string firstText(const rapidjson::Value& result) {
    if (result.IsObject() && result.HasMember("content") && result["content"].IsArray() &&
        !result["content"].Empty() && result["content"][0].HasMember("text")) {
        return result["content"][0]["text"].GetString();
    }
    return jsonText(result);
}

/// The structuredContent of a tool result (an empty object when it has none).
rapidjson::Document structured(const rapidjson::Value& result) {
    rapidjson::Document out;
    if (result.IsObject() && result.HasMember("structuredContent")) {
        out.CopyFrom(result["structuredContent"], out.GetAllocator());
    } else {
        out.SetObject();
    }
    return out;
}

std::string str(const rapidjson::Value& object, const char* member) {
    return object.IsObject() && object.HasMember(member) && object[member].IsString()
               ? object[member].GetString()
               : "";
}

std::int64_t num(const rapidjson::Value& object, const char* member) {
    return object.IsObject() && object.HasMember(member) && object[member].IsInt64()
               ? object[member].GetInt64()
               : -1;
}

/// `seq` of every item of a window or a poll.
std::vector<int> seqs(const rapidjson::Value& page) {
    std::vector<int> out;
    if (!page.IsObject() || !page.HasMember("items") || !page["items"].IsArray()) {
        return out;
    }
    for (const auto& item : page["items"].GetArray()) {
        if (item.IsObject() && item.HasMember("seq") && item["seq"].IsInt()) {
            out.push_back(item["seq"].GetInt());
        }
    }
    return out;
}

bool consecutiveFrom(const std::vector<int>& values, int first) {
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (values[i] != first + static_cast<int>(i)) {
            return false;
        }
    }
    return true;
}

/// An MCP session over tryExchange.
class Mcp {
public:
    explicit Mcp(std::uint16_t port) : port_(port) {}

    /// initialize + notifications/initialized; false when crankd does not answer.
    bool open() {
        const auto init =
            post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
                 R"("2025-11-25","capabilities":{},"clientInfo":{"name":"fault","version":"1"}}})");
        if (!init || init->status != 200) {
            return false;
        }
        session_ = init->header("mcp-session-id");
        const auto done = post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
        return done && done->status == 202;
    }

    std::optional<Reply> post(const std::string& body, std::chrono::seconds timeout = 30s) const {
        std::vector<std::pair<std::string, std::string>> headers{
            {"Content-Type", "application/json"}, {"Accept", kAccept}};
        if (!session_.empty()) {
            headers.emplace_back("Mcp-Session-Id", session_);
            headers.emplace_back("MCP-Protocol-Version", "2025-11-25");
        }
        return tryExchange(port_, "POST", "/mcp", headers, body, timeout);
    }

    /// tools/call's result; nullopt when crankd did not answer (or answered without a result).
    std::optional<rapidjson::Document> tryCall(const std::string& tool,
                                               const std::string& arguments = "{}",
                                               std::chrono::seconds timeout = 30s) const {
        const auto reply =
            post(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":")" + tool +
                     R"(","arguments":)" + arguments + "}}",
                 timeout);
        if (!reply || reply->status != 200) {
            return std::nullopt;
        }
        rapidjson::Document doc;
        doc.Parse(reply->body.c_str());
        if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("result")) {
            return std::nullopt;
        }
        rapidjson::Document result;
        result.CopyFrom(doc["result"], result.GetAllocator());
        return result;
    }

    /// tools/call's result; a failure of the test when crankd does not answer.
    rapidjson::Document call(const std::string& tool, const std::string& arguments = "{}") const {
        auto result = tryCall(tool, arguments);
        if (!result) {
            ADD_FAILURE() << tool << " " << arguments << ": crankd gave no tools/call result";
            rapidjson::Document empty;
            empty.SetObject();
            return empty;
        }
        return std::move(*result);
    }

    /// The structuredContent of a call that must succeed.
    rapidjson::Document ok(const std::string& tool, const std::string& arguments = "{}") const {
        const rapidjson::Document result = call(tool, arguments);
        EXPECT_FALSE(isError(result)) << tool << " " << arguments << ": " << jsonText(result);
        EXPECT_TRUE(result.HasMember("structuredContent")) << tool << ": " << jsonText(result);
        return structured(result);
    }

    /// The text of a call that must fail (isError).
    std::string failure(const std::string& tool, const std::string& arguments = "{}") const {
        const rapidjson::Document result = call(tool, arguments);
        EXPECT_TRUE(isError(result)) << tool << " " << arguments << ": " << jsonText(result);
        return firstText(result);
    }

    const std::string& session() const { return session_; }

private:
    std::uint16_t port_;
    std::string session_;
};

std::string idArgs(const char* member, const std::string& id) {
    return std::string(R"({")") + member + R"(": ")" + id + "\"}";
}

/// Polls `_status` until the job is terminal or `timeout` passes; the last status.
std::string waitForJobEnd(const Mcp& mcp, const std::string& op, const std::string& id,
                          std::chrono::milliseconds timeout, rapidjson::Document* last = nullptr) {
    std::string status;
    eventually(
        [&] {
            const auto r = mcp.tryCall(op + "_status", idArgs("job_id", id));
            if (!r) {
                return false;
            }
            const rapidjson::Document s = structured(*r);
            status = str(s, "status");
            if (last != nullptr) {
                last->CopyFrom(s, last->GetAllocator());
            }
            return status != "queued" && status != "running" && !status.empty();
        },
        timeout);
    return status;
}

// --- the store -----------------------------------------------------------------------------------

std::unique_ptr<crank::store::SqliteStore> openSqlite(const std::string& path) {
    // The store logs every open at info; the test opens it often.
    static const bool quiet =
        (crank::log::configure(crank::log::Format::text, crank::log::Level::warn), true);
    (void)quiet;
    crank::store::StoreOptions options;
    options.path = path;
    auto store = crank::store::SqliteStore::open(options);
    EXPECT_TRUE(static_cast<bool>(store)) << (store ? "" : store.error().message);
    return store ? std::move(*store) : nullptr;
}

std::vector<JobRecord> storedJobs(const std::string& path) {
    auto store = openSqlite(path);
    if (!store) {
        return {};
    }
    crank::store::JobFilter f;
    f.limit = 1000;
    auto rows = store->listJobs(f);
    EXPECT_TRUE(static_cast<bool>(rows));
    return rows ? *rows : std::vector<JobRecord>{};
}

std::vector<SessionRecord> storedSessions(const std::string& path) {
    auto store = openSqlite(path);
    if (!store) {
        return {};
    }
    crank::store::SessionFilter f;
    f.limit = 1000;
    auto rows = store->listSessions(f);
    EXPECT_TRUE(static_cast<bool>(rows));
    return rows ? *rows : std::vector<SessionRecord>{};
}

/// PRAGMA integrity_check: "ok", or SQLite's findings.
std::string integrity(const std::string& path) {
    auto store = openSqlite(path);
    if (!store) {
        return "cannot open " + path;
    }
    const auto checked = store->integrityCheck();
    return checked ? "ok" : checked.error().message;
}

std::map<std::string, int> countByStatus(const std::vector<JobRecord>& rows) {
    std::map<std::string, int> counts;
    for (const JobRecord& row : rows) {
        ++counts[std::string(crank::store::jobStatusName(row.status))];
    }
    return counts;
}

std::string describe(const std::map<std::string, int>& counts) {
    std::string out;
    for (const auto& [status, n] : counts) {
        out += (out.empty() ? "" : ", ") + status + " " + std::to_string(n);
    }
    return out.empty() ? "none" : out;
}

// --- an upstream that accepts and never answers --------------------------------------------------

/// A loopback listener that accepts every connection and then neither reads nor writes; it keeps
/// the connections until it is destroyed, so that it can tell which ones crankd closed.
class SilentUpstream {
public:
    SilentUpstream() : listener_(Poco::Net::SocketAddress("127.0.0.1", 0), 64) {
        thread_ = std::thread([this] { run(); });
    }
    ~SilentUpstream() {
        stop_ = true;
        thread_.join();
    }
    SilentUpstream(const SilentUpstream&) = delete;
    SilentUpstream& operator=(const SilentUpstream&) = delete;

    std::uint16_t port() const { return listener_.address().port(); }

    std::size_t accepted() {
        std::lock_guard lock(mutex_);
        return connections_.size();
    }

    /// Connections that crankd has closed (FIN or reset seen).
    std::size_t closedByCrankd() {
        std::lock_guard lock(mutex_);
        std::size_t closed = 0;
        for (const auto& socket : connections_) {
            pollfd p{socket.impl()->sockfd(), POLLRDHUP, 0};
            if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
                ++closed;
            }
        }
        return closed;
    }

private:
    void run() {
        while (!stop_) {
            try {
                if (listener_.poll(Poco::Timespan(0, 50'000), Poco::Net::Socket::SELECT_READ)) {
                    Poco::Net::StreamSocket socket = listener_.acceptConnection();
                    std::lock_guard lock(mutex_);
                    connections_.push_back(socket);
                }
            } catch (const Poco::Exception&) {
                std::this_thread::sleep_for(10ms);
            }
        }
    }

    Poco::Net::ServerSocket listener_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::vector<Poco::Net::StreamSocket> connections_;
};

// --- a client that reads one byte a second -------------------------------------------------------

struct SlowRead {
    std::size_t bytes = 0;  // read in all
    std::size_t slow = 0;   // read during the slow phase
    bool ended = false;     // EOF or reset seen
    bool reset = false;     // the end was a reset
    std::string head;       // the first bytes (the response head)
    std::int64_t endedAtMs = -1;
};

/// A tools/call with a progress token (answered as an SSE stream) on a raw socket whose receive
/// buffer is 4 KiB; reads one byte a second for `slowPhase`, then whatever is left as fast as it
/// can for at most `drainPhase`, and reports how the stream ended.
SlowRead slowToolCall(std::uint16_t port, const std::string& session, const std::string& tool,
                      std::chrono::seconds slowPhase, std::chrono::seconds drainPhase) {
    SlowRead out;
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return out;
    }
    int small = 4096;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        ::close(fd);
        return out;
    }
    const std::string body = R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":")" +
                             tool + R"(","arguments":{},"_meta":{"progressToken":"slow-1"}}})";
    const std::string request =
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
        "\r\nContent-Type: application/json\r\nAccept: " + kAccept +
        "\r\nMcp-Session-Id: " + session +
        "\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\n\r\n" + body;
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
        ::close(fd);
        return out;
    }
    const auto start = Clock::now();
    auto record = [&](ssize_t n, char* data) {
        if (n > 0) {
            if (out.head.size() < 256) {
                out.head.append(data, std::min<std::size_t>(static_cast<std::size_t>(n),
                                                            256 - out.head.size()));
            }
            out.bytes += static_cast<std::size_t>(n);
            return true;
        }
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            out.ended = true;
            out.reset = n < 0 && errno == ECONNRESET;
            out.endedAtMs = msBetween(start, Clock::now());
        }
        return false;
    };
    // The slow phase: one byte a second.
    const auto slowUntil = start + slowPhase;
    while (!out.ended && Clock::now() < slowUntil) {
        std::this_thread::sleep_for(1s);
        char byte = 0;
        const ssize_t n = ::recv(fd, &byte, 1, MSG_DONTWAIT);
        if (record(n, &byte)) {
            ++out.slow;
        }
    }
    // Then as fast as possible: a stream crankd dropped ends after what the kernel held.
    const auto drainUntil = Clock::now() + drainPhase;
    std::vector<char> chunk(std::size_t{64} * 1024);
    while (!out.ended && Clock::now() < drainUntil) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) {
            continue;
        }
        record(::recv(fd, chunk.data(), chunk.size(), MSG_DONTWAIT), chunk.data());
    }
    ::close(fd);
    return out;
}

// =================================================================================================
// Upstream faults: one crankd, a healthy fixture, a victim fixture that the tests kill (and start
// again on the same port), and a silent upstream.
// =================================================================================================

constexpr int kServerThreads = 8;

class UpstreamFaultTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir();
        silent_ = new SilentUpstream();
        healthy_ = startFixture(0, &healthyPort_).release();
        victim_ = startFixture(0, &victimPort_).release();
        ASSERT_NE(healthyPort_, 0);
        ASSERT_NE(victimPort_, 0);
        const std::string config = dir_->write(
            "crank.json",
            substitute(R"({"server": {"threads": @THREADS@},
            "store": {"path": "@DB@"}, @PLUGINS@,
            "mcp": {"stream_buffer_bytes": 8388608, "stream_stall_timeout_ms": 2000},
            "jobs": {"workers": 8, "heartbeat_interval_ms": 500},
            "operations": [
              {"name": "ok", "description": "a healthy REST upstream", "protocol": "rest",
               "config": {"url": "@HEALTHY@/json?n=1", "keep_alive": {"max_idle": 0}}},
              {"name": "v_window", "description": "an endless SSE stream of the victim",
               "protocol": "rest", "config": {"url": "@VICTIM@/sse?count=0&rate=20"},
               "execution": {"mode": "window", "transport_behavior": "server_stream",
                             "window_duration_ms": 20000, "upstream_timeout_ms": 10000,
                             "max_items": 1000, "aggregation": {"max_items": 1000}}},
              {"name": "v_session", "description": "an endless SSE stream of the victim",
               "protocol": "rest", "config": {"url": "@VICTIM@/sse?count=0&rate=20"},
               "execution": {"mode": "session", "transport_behavior": "server_stream",
                             "max_items": 1000}},
              {"name": "v_job", "description": "a 30 s job of the victim", "protocol": "rest",
               "config": {"url": "@VICTIM@/jobs", "method": "POST",
                          "body": {"duration_ms": 30000, "steps": 30, "result": {"ok": true}},
                          "job": {"status_url_path": "$.status_url", "poll_interval_ms": 100,
                                  "progress_path": "$.progress", "total_path": "$.total",
                                  "result_url_path": "$.result_url"}},
               "execution": {"mode": "async_job", "upstream_timeout_ms": 60000}},
              {"name": "h_unary", "description": "a silent upstream", "protocol": "rest",
               "config": {"url": "@SILENT@/unary"},
               "execution": {"mode": "unary", "upstream_timeout_ms": 2500}},
              {"name": "h_window", "description": "a silent SSE upstream", "protocol": "rest",
               "config": {"url": "@SILENT@/sse"},
               "execution": {"mode": "window", "transport_behavior": "server_stream",
                             "window_duration_ms": 20000, "upstream_timeout_ms": 2500}},
              {"name": "h_poll", "description": "a silent long-poll upstream", "protocol": "rest",
               "config": {"url": "@SILENT@/poll"},
               "execution": {"mode": "window", "transport_behavior": "request_response",
                             "items_path": "events", "window_duration_ms": 20000,
                             "upstream_timeout_ms": 2500}},
              {"name": "h_job", "description": "a silent job upstream", "protocol": "rest",
               "config": {"url": "@SILENT@/jobs", "method": "POST", "body": {},
                          "job": {"status_url_path": "$.status_url"}},
               "execution": {"mode": "async_job", "upstream_timeout_ms": 1500}},
              {"name": "h_plain_job", "description": "a silent upstream as a job",
               "protocol": "rest", "config": {"url": "@SILENT@/plain"},
               "execution": {"mode": "async_job", "upstream_timeout_ms": 1500}},
              {"name": "h_session", "description": "a silent SSE upstream", "protocol": "rest",
               "config": {"url": "@SILENT@/session", "timeouts": {"headers_ms": 1500}},
               "execution": {"mode": "session", "transport_behavior": "server_stream",
                             "upstream_timeout_ms": 1500}},
              {"name": "h_long", "description": "a silent upstream, a longer bound",
               "protocol": "rest", "config": {"url": "@SILENT@/long"},
               "execution": {"mode": "unary", "upstream_timeout_ms": 6000}},
              {"name": "big", "description": "a large window answer", "protocol": "synthetic",
               "config": {"items": 600, "item_bytes": 5000},
               "execution": {"mode": "window", "transport_behavior": "server_stream",
                             "max_items": 1000, "max_bytes": 4000000,
                             "max_result_bytes": 4000000,
                             "aggregation": {"max_items": 1000, "max_bytes": 4000000}}}]})",
                       {{"@THREADS@", std::to_string(kServerThreads)},
                        {"@DB@", dir_->file("crank.db")},
                        {"@PLUGINS@", pluginDirs()},
                        {"@HEALTHY@", "http://127.0.0.1:" + std::to_string(healthyPort_)},
                        {"@VICTIM@", "http://127.0.0.1:" + std::to_string(victimPort_)},
                        {"@SILENT@", "http://127.0.0.1:" + std::to_string(silent_->port())}}));
        crankd_ = new ChildProcess(
            std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"});
        const auto port = crankd_->waitForListeningPort(20s);
        ASSERT_TRUE(port) << crankd_->stderrText();
        port_ = *port;

        // Warm up every path once (thread pools, plugin state, the store), then take the
        // baseline that the last test compares with.
        Mcp mcp(port_);
        ASSERT_TRUE(mcp.open());
        std::vector<std::thread> warm;
        warm.reserve(kServerThreads);
        for (int i = 0; i < kServerThreads; ++i) {
            warm.emplace_back([] {
                Mcp m(port_);
                if (m.open()) {
                    m.tryCall("ok");
                }
            });
        }
        for (auto& t : warm) {
            t.join();
        }
        const auto big = mcp.post(
            R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}})");
        ASSERT_TRUE(big && big->status == 200);
        bigAnswerBytes_ = big->body.size();
        std::this_thread::sleep_for(300ms);
        baselineFds_ = fds(crankd_->pid());
        baselineThreads_ = threads(crankd_->pid());
        note("baseline after warm-up: %lld descriptors, %lld threads, VmRSS %lld kB",
             static_cast<long long>(baselineFds_), static_cast<long long>(baselineThreads_),
             static_cast<long long>(rssKb(crankd_->pid())));
    }

    static void TearDownTestSuite() {
        if (crankd_ != nullptr) {
            crankd_->signal(SIGTERM);
            EXPECT_EQ(crankd_->waitForExit(20s), 0) << crankd_->stderrText();
            delete crankd_;
            crankd_ = nullptr;
        }
        for (ChildProcess** fixture : {&healthy_, &victim_}) {
            delete *fixture;  // SIGKILL by pid when still running
            *fixture = nullptr;
        }
        delete silent_;
        silent_ = nullptr;
        delete dir_;
        dir_ = nullptr;
    }

    void SetUp() override {
        ASSERT_NE(port_, 0);
        drain(*crankd_);
        mcp_.emplace(port_);
        ASSERT_TRUE(mcp_->open());
    }

    void TearDown() override { drain(*crankd_); }

    /// The victim fixture, started again on its port when an earlier test killed it.
    static void reviveVictim() {
        if (victim_ != nullptr && !victim_->waitForExit(0ms).has_value()) {
            return;
        }
        delete victim_;
        std::uint16_t port = 0;
        victim_ = startFixture(victimPort_, &port).release();
        ASSERT_EQ(port, victimPort_);
    }

    /// Kills the victim with SIGKILL, by pid, and reaps it.
    static Clock::time_point killVictim() {
        victim_->signal(SIGKILL);
        const auto killedAt = Clock::now();
        EXPECT_EQ(victim_->waitForExit(10s), 128 + SIGKILL);
        return killedAt;
    }

    static std::int64_t victimStat(const char* name) {
        const auto reply = tryExchange(victimPort_, "GET", "/stats", {}, "", 5s);
        if (!reply) {
            return -1;
        }
        const rapidjson::Document doc = reply->json();
        return num(doc, name);
    }

    static TempDir* dir_;
    static SilentUpstream* silent_;
    static ChildProcess* healthy_;
    static ChildProcess* victim_;
    static ChildProcess* crankd_;
    static std::uint16_t port_;
    static std::uint16_t healthyPort_;
    static std::uint16_t victimPort_;
    static std::size_t bigAnswerBytes_;
    static std::int64_t baselineFds_;
    static std::int64_t baselineThreads_;
    std::optional<Mcp> mcp_;
};

TempDir* UpstreamFaultTest::dir_ = nullptr;
SilentUpstream* UpstreamFaultTest::silent_ = nullptr;
ChildProcess* UpstreamFaultTest::healthy_ = nullptr;
ChildProcess* UpstreamFaultTest::victim_ = nullptr;
ChildProcess* UpstreamFaultTest::crankd_ = nullptr;
std::uint16_t UpstreamFaultTest::port_ = 0;
std::uint16_t UpstreamFaultTest::healthyPort_ = 0;
std::uint16_t UpstreamFaultTest::victimPort_ = 0;
std::size_t UpstreamFaultTest::bigAnswerBytes_ = 0;
std::int64_t UpstreamFaultTest::baselineFds_ = -1;
std::int64_t UpstreamFaultTest::baselineThreads_ = -1;

TEST_F(UpstreamFaultTest, AnUpstreamKilledMidWindowEndsTheCallAtOnceWithWhatItCollected) {
    reviveVictim();
    std::optional<rapidjson::Document> result;
    Clock::time_point returnedAt;
    std::vector<std::thread> caller;
    const Joined joined(caller);
    caller.emplace_back([&] {
        result = mcp_->tryCall("v_window");
        returnedAt = Clock::now();
    });
    // The window reads the stream (20 events a second) for a while, then the upstream dies.
    ASSERT_TRUE(eventually([] { return victimStat("streams_open") == 1; }, 10s));
    std::this_thread::sleep_for(700ms);
    const auto killedAt = killVictim();
    caller.front().join();

    ASSERT_TRUE(result) << "crankd gave no answer";
    const std::int64_t afterKill = msBetween(killedAt, returnedAt);
    note("window: answered %lld ms after the upstream's SIGKILL (window_duration_ms 20000)",
         static_cast<long long>(afterKill));
    EXPECT_LT(afterKill, 5000) << "the call waited for the window instead of ending with the "
                                  "upstream";
    EXPECT_FALSE(isError(*result)) << "items were collected: " << jsonText(*result);
    const rapidjson::Document w = structured(*result);
    const std::vector<int> got = seqs(w);
    note("window: item_count %lld, stop_reason %s, error %s",
         static_cast<long long>(num(w, "item_count")), str(w, "stop_reason").c_str(),
         w.HasMember("error") ? jsonText(w["error"]).c_str() : "-");
    EXPECT_GE(got.size(), 5U) << jsonText(w);
    EXPECT_EQ(num(w, "item_count"), static_cast<std::int64_t>(got.size()));
    EXPECT_TRUE(consecutiveFrom(got, 1)) << "the items collected so far, in order";
    EXPECT_EQ(str(w, "stop_reason"), "upstream_error") << jsonText(w);
    ASSERT_TRUE(w.HasMember("window_complete"));
    EXPECT_FALSE(w["window_complete"].GetBool()) << "the window did not run its duration";
    ASSERT_TRUE(w.HasMember("error") && w["error"].IsObject()) << jsonText(w);
    const std::string message = str(w["error"], "message");
    EXPECT_TRUE(contains(message, "GET http://127.0.0.1:" + std::to_string(victimPort_) + "/sse"));
    EXPECT_TRUE(contains(message, "closed the connection"));
    EXPECT_EQ(str(w, "cursor"), std::to_string(got.empty() ? 0 : got.back()));
    // crankd goes on.
    EXPECT_TRUE(healthy(port_));
    EXPECT_FALSE(isError(mcp_->call("ok")));
}

TEST_F(UpstreamFaultTest, AnUpstreamKilledMidSessionFailsItAfterTheBufferedItems) {
    reviveVictim();
    const rapidjson::Document started = mcp_->ok("v_session_start");
    const std::string id = str(started, "session_id");
    ASSERT_FALSE(id.empty()) << jsonText(started);
    std::vector<int> all;
    std::string cursor;
    // A first page, acknowledged with its cursor.
    ASSERT_TRUE(eventually(
        [&] {
            const auto page = mcp_->ok("v_session_poll", idArgs("session_id", id));
            return num(page, "item_count") >= 10;
        },
        10s));
    {
        const auto page =
            mcp_->ok("v_session_poll", R"({"session_id": ")" + id + R"(", "max_items": 3})");
        for (int s : seqs(page)) {
            all.push_back(s);
        }
        cursor = str(page, "cursor");
    }
    const auto killedAt = killVictim();

    // The next polls: what was buffered, then the terminal state with the upstream's error.
    std::string status = "active";
    rapidjson::Document last;
    const auto deadline = Clock::now() + 10s;
    bool more = true;
    while ((status == "active" || more) && Clock::now() < deadline) {
        std::string args = R"({"session_id": ")" + id;
        args.append(R"(", "cursor": ")").append(cursor).append("\"}");
        const auto page = mcp_->ok("v_session_poll", args);
        for (int s : seqs(page)) {
            all.push_back(s);
        }
        cursor = str(page, "cursor");
        status = str(page, "status");
        more = page.HasMember("has_more") && page["has_more"].GetBool();
        last.CopyFrom(page, last.GetAllocator());
        if (status == "active" && !more) {
            std::this_thread::sleep_for(50ms);
        }
    }
    note("session: %s %lld ms after the kill, %zu items delivered in all", status.c_str(),
         static_cast<long long>(msBetween(killedAt, Clock::now())), all.size());
    EXPECT_EQ(status, "failed") << jsonText(last);
    EXPECT_GE(all.size(), 10U) << "the items buffered before the kill";
    EXPECT_TRUE(consecutiveFrom(all, 1)) << "no buffered item lost or repeated";
    EXPECT_EQ(num(last, "item_count"), static_cast<std::int64_t>(all.size())) << jsonText(last);
    ASSERT_TRUE(last.HasMember("has_more"));
    EXPECT_FALSE(last["has_more"].GetBool());
    ASSERT_TRUE(last.HasMember("error") && last["error"].IsObject()) << jsonText(last);
    EXPECT_TRUE(contains(str(last["error"], "message"),
                         "GET http://127.0.0.1:" + std::to_string(victimPort_) + "/sse"));
    // Polling again says the same.
    const auto again = mcp_->ok("v_session_poll", idArgs("session_id", id));
    EXPECT_EQ(str(again, "status"), "failed");

    // The row says so too (written a moment after the state changes), and _stop still answers.
    std::optional<SessionRecord> row;
    eventually(
        [&] {
            for (const SessionRecord& s : storedSessions(dir_->file("crank.db"))) {
                if (s.id == id) {
                    row = s;
                }
            }
            return row && row->status != SessionStatus::active;
        },
        5s);
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, SessionStatus::failed);
    EXPECT_TRUE(row->closed_at.has_value());
    const auto stopped = mcp_->ok("v_session_stop", idArgs("session_id", id));
    EXPECT_EQ(str(stopped, "session_id"), id) << jsonText(stopped);
    EXPECT_EQ(num(stopped, "item_count"), static_cast<std::int64_t>(all.size()));
}

TEST_F(UpstreamFaultTest, AnUpstreamKilledMidJobFailsTheJobAndTheStoreSaysSo) {
    reviveVictim();
    const rapidjson::Document started = mcp_->ok("v_job_start");
    const std::string id = str(started, "job_id");
    ASSERT_FALSE(id.empty()) << jsonText(started);
    // Running upstream: the plugin told its cursor (the upstream job's status URL).
    ASSERT_TRUE(eventually(
        [&] {
            for (const JobRecord& job : storedJobs(dir_->file("crank.db"))) {
                if (job.id == id) {
                    return job.status == JobStatus::running && job.cursor.has_value();
                }
            }
            return false;
        },
        10s));
    const auto killedAt = killVictim();
    rapidjson::Document last;
    const std::string status = waitForJobEnd(*mcp_, "v_job", id, 15s, &last);
    const std::int64_t afterKill = msBetween(killedAt, Clock::now());
    note("job: %s %lld ms after the upstream's SIGKILL: %s", status.c_str(),
         static_cast<long long>(afterKill),
         last.HasMember("error") ? jsonText(last["error"]).c_str() : "-");
    EXPECT_EQ(status, "failed") << jsonText(last);
    const std::string statusUrl = "GET http://127.0.0.1:" + std::to_string(victimPort_) + "/jobs/";
    EXPECT_TRUE(contains(jsonText(last), statusUrl));
    // _result says why there is none; the store holds the same.
    const rapidjson::Document result = mcp_->call("v_job_result", idArgs("job_id", id));
    EXPECT_TRUE(contains(jsonText(result), statusUrl));
    std::optional<JobRecord> row;
    for (const JobRecord& job : storedJobs(dir_->file("crank.db"))) {
        if (job.id == id) {
            row = job;
        }
    }
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, JobStatus::failed);
    EXPECT_TRUE(row->finished_at.has_value());
    EXPECT_TRUE(contains(row->error_json.value_or(""), statusUrl));
    EXPECT_TRUE(healthy(port_));
}

TEST_F(UpstreamFaultTest, AnUpstreamThatNeverAnswersEndsEveryModeByItsTimeout) {
    const std::size_t acceptedBefore = silent_->accepted();
    struct Outcome {
        std::optional<rapidjson::Document> result;
        std::int64_t ms = 0;
    };
    std::map<std::string, Outcome> outcomes;
    for (const char* tool : {"h_unary", "h_window", "h_poll"}) {
        outcomes[tool];
    }
    std::vector<std::thread> callers;
    Joined joined(callers);
    for (auto& [tool, outcome] : outcomes) {
        callers.emplace_back([&, tool = tool, out = &outcome] {
            Mcp m(port_);
            if (!m.open()) {
                return;
            }
            const auto start = Clock::now();
            out->result = m.tryCall(tool);
            out->ms = msBetween(start, Clock::now());
        });
    }
    // Two jobs against it too, and a session (its stream never gets its response head).
    const std::string job = str(mcp_->ok("h_job_start"), "job_id");
    const std::string plainJob = str(mcp_->ok("h_plain_job_start"), "job_id");
    const std::string session = str(mcp_->ok("h_session_start"), "session_id");
    ASSERT_FALSE(job.empty());
    ASSERT_FALSE(plainJob.empty());
    ASSERT_FALSE(session.empty());

    // Meanwhile crankd answers everything else at once.
    ASSERT_TRUE(eventually([&] { return silent_->accepted() >= acceptedBefore + 5; }, 5s))
        << "crankd did not reach the silent upstream";
    const auto hangingSince = Clock::now();
    EXPECT_TRUE(healthy(port_, 5s));
    EXPECT_FALSE(isError(mcp_->call("ok")));
    const std::int64_t othersMs = msBetween(hangingSince, Clock::now());
    joined.join();
    note("/healthz and a healthy tool answered in %lld ms while the calls hung",
         static_cast<long long>(othersMs));
    EXPECT_LT(othersMs, 2000) << "/healthz and a healthy tool waited for the hanging calls "
                                 "(upstream_timeout_ms 2500)";

    for (const auto& [tool, outcome] : outcomes) {
        ASSERT_TRUE(outcome.result) << tool;
        note("%s: answered after %lld ms (upstream_timeout_ms 2500)", tool.c_str(),
             static_cast<long long>(outcome.ms));
        EXPECT_GE(outcome.ms, 2400) << tool;
        EXPECT_LT(outcome.ms, 7500) << tool << " outlived its upstream_timeout_ms by far";
    }
    const std::string unary = firstText(*outcomes["h_unary"].result);
    EXPECT_TRUE(isError(*outcomes["h_unary"].result));
    EXPECT_TRUE(contains(unary, "GET http://127.0.0.1:" + std::to_string(silent_->port()) +
                                    "/unary: no complete response within 2500 ms "
                                    "(upstream_timeout_ms) (timeout)"));
    for (const char* tool : {"h_window", "h_poll"}) {
        const rapidjson::Document w = structured(*outcomes[tool].result);
        EXPECT_EQ(str(w, "stop_reason"), "upstream_timeout") << tool << ": " << jsonText(w);
        EXPECT_EQ(num(w, "item_count"), 0) << tool;
        ASSERT_TRUE(w.HasMember("window_complete")) << tool;
        EXPECT_FALSE(w["window_complete"].GetBool()) << tool;
    }

    // Both jobs end failed, by upstream_timeout_ms, saying so.
    for (const auto& [op, id] : std::vector<std::pair<std::string, std::string>>{
             {"h_job", job}, {"h_plain_job", plainJob}}) {
        rapidjson::Document last;
        EXPECT_EQ(waitForJobEnd(*mcp_, op, id, 10s, &last), "failed") << op;
        const std::string error = last.HasMember("error") ? jsonText(last["error"]) : "";
        note("%s: failed: %s", op.c_str(), error.c_str());
        EXPECT_TRUE(contains(error, "1500 ms")) << op;
        EXPECT_TRUE(contains(error, "upstream_timeout_ms")) << op;
        EXPECT_TRUE(contains(error, "(timeout)")) << op;
    }
    // The session fails by its headers timeout.
    rapidjson::Document page;
    ASSERT_TRUE(eventually(
        [&] {
            page = mcp_->ok("h_session_poll", idArgs("session_id", session));
            return str(page, "status") != "active";
        },
        10s));
    EXPECT_EQ(str(page, "status"), "failed") << jsonText(page);
    ASSERT_TRUE(page.HasMember("error")) << jsonText(page);
    EXPECT_EQ(str(page["error"], "code"), "timeout");
    EXPECT_TRUE(contains(str(page["error"], "message"),
                         "no response headers within 1500 ms (timeouts.headers_ms)"));

    // crankd closed every connection it opened to the silent upstream.
    const std::size_t opened = silent_->accepted() - acceptedBefore;
    EXPECT_GE(opened, 6U);
    EXPECT_TRUE(eventually([&] { return silent_->closedByCrankd() == silent_->accepted(); }, 5s))
        << silent_->closedByCrankd() << " of " << silent_->accepted() << " closed";
    note("silent upstream: %zu connections opened by crankd, %zu closed by it", opened,
         silent_->closedByCrankd());
}

TEST_F(UpstreamFaultTest, HangingCallsBeyondServerThreadsDoNotStallHealthz) {
    // More hanging calls than crankd has workers (kServerThreads).
    std::vector<std::thread> callers;
    Joined joined(callers);
    std::atomic<int> answered{0};
    for (int i = 0; i < kServerThreads + 2; ++i) {
        callers.emplace_back([&] {
            Mcp m(port_);
            if (m.open() && m.tryCall("h_long", "{}", 20s)) {
                ++answered;
            }
        });
    }
    std::this_thread::sleep_for(1000ms);
    // /healthz and a healthy tool, side by side, while every worker holds a hanging call.
    bool alive = false;
    std::int64_t healthzMs = 0;
    std::thread probe([&] {
        const auto start = Clock::now();
        alive = healthy(port_, 20s);
        healthzMs = msBetween(start, Clock::now());
    });
    const auto okStart = Clock::now();
    const auto ok = mcp_->tryCall("ok", "{}", 20s);
    const std::int64_t okMs = msBetween(okStart, Clock::now());
    probe.join();
    joined.join();
    note("%d hanging calls on %d workers: /healthz took %lld ms, a healthy tool %lld ms",
         kServerThreads + 2, kServerThreads, static_cast<long long>(healthzMs),
         static_cast<long long>(okMs));
    EXPECT_TRUE(alive);
    EXPECT_LT(healthzMs, 2000) << "/healthz waited for the hanging calls (upstream_timeout_ms "
                                  "6000)";
    // A healthy tool answers at once: its result, or a clear refusal naming a limit.
    EXPECT_TRUE(ok.has_value());
    EXPECT_LT(okMs, 2000) << "a healthy tool waited for the hanging calls";
    EXPECT_EQ(answered.load(), kServerThreads + 2);
}

TEST_F(UpstreamFaultTest, ASlowSseReaderIsDisconnectedWithoutHoldingBackOthers) {
    const pid_t pid = crankd_->pid();
    const std::int64_t rssBefore = rssKb(pid);
    const std::int64_t fdsBefore = fds(pid);
    const std::string logBefore = crankd_->stderrSoFar(300ms);
    const std::size_t stallsBefore = occurrences(logBefore, "(stall_timeout_ms); disconnecting it");

    // Three clients read a ~6 MB SSE answer one byte a second: crankd holds what the kernel
    // does not take (at most mcp.stream_buffer_bytes each) and drops each stream once its client
    // has taken nothing for mcp.stream_stall_timeout_ms (2000).
    constexpr int kReaders = 3;
    constexpr auto kSlowPhase = 6s;
    Mcp other(port_);  // another session, served meanwhile
    ASSERT_TRUE(other.open());
    const std::int64_t fdBound = std::max(fdsBefore, baselineFds_) + 1;
    const auto readersStart = Clock::now();
    std::vector<SlowRead> reads(kReaders);
    std::vector<std::thread> readers;
    Joined joinedReaders(readers);
    for (int i = 0; i < kReaders; ++i) {
        readers.emplace_back([&, i] {
            reads[static_cast<std::size_t>(i)] =
                slowToolCall(port_, mcp_->session(), "big", kSlowPhase, 10s);
        });
    }
    std::atomic<bool> sampling{true};
    std::atomic<std::int64_t> peak{rssBefore};
    std::atomic<std::int64_t> mostFds{fdsBefore};
    std::atomic<std::int64_t> droppedAtMs{-1};  // when crankd's descriptors fell back
    std::vector<std::thread> sampler;
    Joined joinedSampler(sampler, [&] { sampling = false; });
    sampler.emplace_back([&] {
        while (sampling) {
            peak = std::max(peak.load(), rssKb(pid));
            const std::int64_t n = fds(pid);
            mostFds = std::max(mostFds.load(), n);
            if (droppedAtMs < 0 && mostFds >= fdsBefore + kReaders && n <= fdBound) {
                droppedAtMs = msBetween(readersStart, Clock::now());
            }
            std::this_thread::sleep_for(100ms);
        }
    });
    // Meanwhile other sessions are served as usual.
    std::int64_t slowest = 0;
    for (int i = 0; i < 10; ++i) {
        const auto start = Clock::now();
        EXPECT_FALSE(isError(other.call("ok")));
        EXPECT_TRUE(healthy(port_, 5s));
        slowest = std::max(slowest, msBetween(start, Clock::now()));
        crankd_->waitForStderrLine("\x01 never printed", 300ms);
    }
    joinedReaders.join();
    joinedSampler.join();

    note("slow readers: the answer is %zu bytes; other calls took at most %lld ms", bigAnswerBytes_,
         static_cast<long long>(slowest));
    EXPECT_LT(slowest, 3000) << "other sessions waited for the slow readers";
    for (const SlowRead& r : reads) {
        note("slow reader: %zu bytes in all (%zu one a second), %s after %lld ms", r.bytes, r.slow,
             r.ended ? (r.reset ? "reset" : "EOF") : "still open",
             static_cast<long long>(r.endedAtMs));
        EXPECT_TRUE(contains(r.head, "HTTP/1.1 200")) << r.head;
        EXPECT_TRUE(contains(r.head, "text/event-stream")) << r.head;
        EXPECT_GE(r.slow, 3U) << "the stream was readable";
        EXPECT_TRUE(r.ended) << "crankd kept the stream of a client that does not read";
        EXPECT_LT(r.bytes, bigAnswerBytes_ / 2)
            << "the whole answer reached a client that reads one byte a second";
    }
    // crankd says why it dropped each, and gives back the descriptors and the memory.
    const std::string log = crankd_->stderrSoFar(300ms);
    EXPECT_EQ(occurrences(log, "(stall_timeout_ms); disconnecting it") - stallsBefore,
              static_cast<std::size_t>(kReaders))
        << log.substr(logBefore.size());
    // Dropped while the clients were still reading a byte a second, and every descriptor given
    // back (crankd's own count moves by one now and then: the store's files).
    note(
        "the %d streams held %lld descriptors at most; crankd had closed them %lld ms after "
        "the calls (stream_stall_timeout_ms 2000)",
        kReaders, static_cast<long long>(mostFds.load() - fdsBefore),
        static_cast<long long>(droppedAtMs.load()));
    EXPECT_GE(droppedAtMs.load(), 0) << "the streams' descriptors were never seen open and closed";
    EXPECT_LT(droppedAtMs.load(), std::chrono::milliseconds(kSlowPhase).count());
    EXPECT_TRUE(eventually([&] { return fds(pid) <= fdBound; }, 5s))
        << fds(pid) << " descriptors, " << fdsBefore << " before, " << kReaders << " streams";
    std::this_thread::sleep_for(300ms);
    const std::int64_t rssAfter = rssKb(pid);
    note(
        "crankd VmRSS: %lld kB before, %lld kB peak, %lld kB after; descriptors %lld before, "
        "%lld after",
        static_cast<long long>(rssBefore), static_cast<long long>(peak.load()),
        static_cast<long long>(rssAfter), static_cast<long long>(fdsBefore),
        static_cast<long long>(fds(pid)));
    // Bounded: per stream, the 8 MiB stream buffer and the answer being built, not the answer
    // times the time the client takes.
    if (!kSanitized) {
        EXPECT_LT(peak.load() - rssBefore, std::int64_t{kReaders} * 48 * 1024);
        EXPECT_LT(rssAfter - rssBefore, 64 * 1024);
    }
}

TEST_F(UpstreamFaultTest, ZzNoDescriptorOrThreadIsLeftBehindByTheFaults) {
    const pid_t pid = crankd_->pid();
    EXPECT_TRUE(healthy(port_));
    // Idle keep-alive connections, stream threads and the HTTP pool settle.
    const bool settled = eventually([&] { return fds(pid) <= baselineFds_ + 2; }, 10s);
    note("after every fault: %lld descriptors (baseline %lld), %lld threads (baseline %lld)",
         static_cast<long long>(fds(pid)), static_cast<long long>(baselineFds_),
         static_cast<long long>(threads(pid)), static_cast<long long>(baselineThreads_));
    EXPECT_TRUE(settled) << fds(pid) << " descriptors, " << baselineFds_ << " after the warm-up";
    // The HTTP pool may keep a few more idle workers (at most server.threads + 1 in all) than the
    // warm-up started; nothing else may stay. Threads that are ending settle like descriptors.
    eventually([&] { return threads(pid) <= baselineThreads_ + 3; }, 10s);
    EXPECT_LE(threads(pid), baselineThreads_ + 3);
}

// =================================================================================================
// crankd killed with SIGKILL under mixed load, restarted on the same store.
// =================================================================================================

class CrashRecoveryTest : public ::testing::Test {
protected:
    void SetUp() override {
        fixture_ = startFixture(0, &fixturePort_);
        ASSERT_NE(fixturePort_, 0);
        config_ = dir_.write(
            "crank.json",
            substitute(R"({"server": {"node_id": "fault-node"}, "store": {"path": "@DB@"},
            @PLUGINS@,
            "jobs": {"workers": 64, "heartbeat_interval_ms": 500, "lease_ms": 60000},
            "operations": [
              {"name": "syn_unary", "description": "synthetic unary", "protocol": "synthetic",
               "config": {"items": 1, "delay_ms": 20}},
              {"name": "rest_unary", "description": "REST unary", "protocol": "rest",
               "config": {"url": "@BASE@/json?n=2"}},
              {"name": "syn_session", "description": "synthetic session",
               "protocol": "synthetic", "config": {"items": -1, "rate_per_sec": 50},
               "execution": {"mode": "session", "transport_behavior": "server_stream",
                             "max_items": 100}},
              {"name": "rest_session", "description": "REST session", "protocol": "rest",
               "config": {"url": "@BASE@/sse?count=0&rate=20"},
               "execution": {"mode": "session", "transport_behavior": "server_stream",
                             "max_items": 100}},
              {"name": "syn_job", "description": "synthetic job", "protocol": "synthetic",
               "input_schema": {"type": "object",
                                "properties": {"delay": {"type": "integer"}}},
               "config": {"items": 1, "delay_ms": "{{delay}}"},
               "execution": {"mode": "async_job", "upstream_timeout_ms": 60000}},
              {"name": "rest_job", "description": "REST job", "protocol": "rest",
               "config": {"url": "@BASE@/jobs", "method": "POST",
                          "body": {"duration_ms": 2500, "steps": 5, "result": {"done": true}},
                          "job": {"status_url_path": "$.status_url", "poll_interval_ms": 100,
                                  "progress_path": "$.progress", "total_path": "$.total",
                                  "result_url_path": "$.result_url"}},
               "execution": {"mode": "async_job", "upstream_timeout_ms": 60000}}]})",
                       {{"@DB@", dir_.file("crank.db")},
                        {"@PLUGINS@", pluginDirs()},
                        {"@BASE@", "http://127.0.0.1:" + std::to_string(fixturePort_)}}));
    }

    void TearDown() override {
        if (crankd_) {
            crankd_->signal(SIGTERM);
            crankd_->waitForExit(20s);
        }
    }

    std::uint16_t startCrankd() {
        crankd_.emplace(
            std::vector<std::string>{CRANKD_PATH, "--config", config_, "--listen", "127.0.0.1:0"});
        const auto port = crankd_->waitForListeningPort(20s);
        EXPECT_TRUE(port) << crankd_->stderrText();
        return port.value_or(0);
    }

    TempDir dir_;
    std::string config_;
    std::unique_ptr<ChildProcess> fixture_;
    std::uint16_t fixturePort_ = 0;
    std::optional<ChildProcess> crankd_;
};

TEST_F(CrashRecoveryTest, NothingAcceptedIsLostAndNothingStaysRunningAfterAKillAndARestart) {
    const std::uint16_t port = startCrankd();
    ASSERT_NE(port, 0);
    const std::string db = dir_.file("crank.db");

    // Mixed load from three MCP clients until crankd dies under them.
    struct Accepted {
        std::mutex mutex;
        std::map<std::string, std::string> jobs;      // id -> operation
        std::map<std::string, std::string> sessions;  // id -> operation
        int unary = 0;
        int failedTransport = 0;
    } accepted;
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    Joined joinedClients(clients, [&] { stop = true; });
    for (int c = 0; c < 3; ++c) {
        clients.emplace_back([&, c] {
            Mcp m(port);
            if (!m.open()) {
                return;
            }
            std::vector<std::pair<std::string, std::string>> open;  // sessions to stop later
            int longJobs = 0;
            const auto deadline = Clock::now() + 15s;
            for (int round = 0; !stop && Clock::now() < deadline; ++round) {
                auto call = [&](const std::string& tool, const std::string& args) {
                    auto r = m.tryCall(tool, args, 10s);
                    if (!r) {
                        std::lock_guard lock(accepted.mutex);
                        ++accepted.failedTransport;
                    }
                    return r;
                };
                if (!call(round % 2 == 0 ? "syn_unary" : "rest_unary", "{}")) {
                    return;  // crankd is gone
                }
                {
                    std::lock_guard lock(accepted.mutex);
                    ++accepted.unary;
                }
                const std::string sessionOp = (round + c) % 2 == 0 ? "syn_session" : "rest_session";
                if (auto r = call(sessionOp + "_start", "{}"); r && !isError(*r)) {
                    const std::string id = str(structured(*r), "session_id");
                    std::lock_guard lock(accepted.mutex);
                    accepted.sessions[id] = sessionOp;
                    open.emplace_back(sessionOp, id);
                }
                if (!open.empty()) {
                    call(open.back().first + "_poll", idArgs("session_id", open.back().second));
                }
                if (open.size() > 4) {
                    call(open.front().first + "_stop", idArgs("session_id", open.front().second));
                    open.erase(open.begin());
                }
                std::vector<std::pair<std::string, std::string>> starts{
                    {"syn_job", R"({"delay": 50})"}};
                if (longJobs < 6) {
                    starts.emplace_back("syn_job", R"({"delay": 3000})");
                    starts.emplace_back("rest_job", "{}");
                    ++longJobs;
                }
                for (const auto& [op, args] : starts) {
                    if (auto r = call(op + "_start", args); r && !isError(*r)) {
                        const std::string id = str(structured(*r), "job_id");
                        std::lock_guard lock(accepted.mutex);
                        accepted.jobs[id] = op;
                    }
                }
            }
        });
    }
    // Let the load run, with REST jobs started upstream, then kill -9 in the middle of it.
    ASSERT_TRUE(eventually(
        [&] {
            drain(*crankd_);
            std::lock_guard lock(accepted.mutex);
            return accepted.jobs.size() >= 20 && accepted.sessions.size() >= 8;
        },
        15s));
    crankd_->waitForStderrLine("\x01 never printed", 700ms);
    crankd_->signal(SIGKILL);
    ASSERT_EQ(crankd_->waitForExit(10s), 128 + SIGKILL);
    joinedClients.join();
    crankd_.reset();

    // What the store holds after the kill: every accepted job and session, and a sound file.
    const std::vector<JobRecord> atKill = storedJobs(db);
    const std::vector<SessionRecord> sessionsAtKill = storedSessions(db);
    EXPECT_EQ(integrity(db), "ok") << "after SIGKILL";
    std::map<std::string, JobRecord> byId;
    for (const JobRecord& job : atKill) {
        byId[job.id] = job;
    }
    std::set<std::string> sessionIds;
    int activeAtKill = 0;
    for (const SessionRecord& s : sessionsAtKill) {
        sessionIds.insert(s.id);
        activeAtKill += s.status == SessionStatus::active ? 1 : 0;
    }
    note("load: %d unary calls, %zu jobs and %zu sessions accepted before the SIGKILL",
         accepted.unary, accepted.jobs.size(), accepted.sessions.size());
    note("store after the SIGKILL: jobs %s; %zu sessions, %d active",
         describe(countByStatus(atKill)).c_str(), sessionsAtKill.size(), activeAtKill);
    for (const auto& [id, op] : accepted.jobs) {
        EXPECT_EQ(byId.count(id), 1U) << "accepted job " << id << " (" << op << ") lost";
    }
    for (const auto& [id, op] : accepted.sessions) {
        EXPECT_EQ(sessionIds.count(id), 1U) << "accepted session " << id << " lost";
    }

    // Restart on the same store: recovery brings every job to a terminal state.
    const auto restartedAt = Clock::now();
    const std::uint16_t again = startCrankd();
    ASSERT_NE(again, 0);
    std::vector<JobRecord> after;
    const bool settled = eventually(
        [&] {
            drain(*crankd_);
            after = storedJobs(db);
            const auto counts = countByStatus(after);
            return counts.count("queued") == 0 && counts.count("running") == 0;
        },
        20s);
    note("store %lld ms after the restart: jobs %s",
         static_cast<long long>(msBetween(restartedAt, Clock::now())),
         describe(countByStatus(after)).c_str());
    EXPECT_TRUE(settled) << "jobs still live: " << describe(countByStatus(after));
    ASSERT_EQ(after.size(), atKill.size()) << "rows appeared or vanished across the restart";
    for (const JobRecord& job : after) {
        const JobRecord& before = byId[job.id];
        const std::string what = job.id + " (" + job.operation_id + ", " +
                                 std::string(crank::store::jobStatusName(before.status)) +
                                 " at the kill): " + job.error_json.value_or("");
        if (before.status == JobStatus::running && before.cursor) {
            // A REST job started upstream: followed again from its cursor.
            EXPECT_EQ(job.status, JobStatus::succeeded) << what;
            EXPECT_TRUE(contains(job.result_json.value_or(""), R"("done":true)")) << what;
        } else if (before.status == JobStatus::running) {
            // No way to follow it again: interrupted, saying why.
            EXPECT_EQ(job.status, JobStatus::interrupted) << what;
            EXPECT_TRUE(contains(job.error_json.value_or(""), "crankd restarted")) << what;
        } else if (before.status == JobStatus::queued) {
            EXPECT_EQ(job.status, JobStatus::succeeded) << what;  // run again
        } else {
            EXPECT_EQ(job.status, before.status) << what;  // ended before: untouched
        }
    }
    // Sessions: the ones live at the kill are failed, with the reason; none is live.
    std::vector<SessionRecord> sessionsAfter = storedSessions(db);
    std::map<std::string, SessionStatus> sessionBefore;
    for (const SessionRecord& s : sessionsAtKill) {
        sessionBefore[s.id] = s.status;
    }
    EXPECT_EQ(sessionsAfter.size(), sessionsAtKill.size());
    int failedByRestart = 0;
    for (const SessionRecord& s : sessionsAfter) {
        EXPECT_NE(s.status, SessionStatus::active) << s.id;
        EXPECT_NE(s.status, SessionStatus::paused) << s.id;
        if (sessionBefore[s.id] == SessionStatus::active) {
            EXPECT_EQ(s.status, SessionStatus::failed) << s.id;
            EXPECT_TRUE(contains(s.state_json, "crankd restarted")) << s.id;
            EXPECT_TRUE(s.closed_at.has_value()) << s.id;
            ++failedByRestart;
        }
    }
    note("sessions after the restart: %d of %zu failed as \"crankd restarted\", none live",
         failedByRestart, sessionsAfter.size());

    // MCP clients see the same: every accepted job answers _status with a final state, and a
    // session of the killed process is no longer served.
    Mcp mcp(again);
    ASSERT_TRUE(mcp.open());
    std::map<std::string, int> seen;
    for (const auto& [id, op] : accepted.jobs) {
        const rapidjson::Document s = mcp.ok(op + "_status", idArgs("job_id", id));
        ++seen[str(s, "status")];
    }
    note("_status of the accepted jobs after the restart: %s", describe(seen).c_str());
    EXPECT_EQ(seen.count("queued") + seen.count("running"), 0U);
    for (const SessionRecord& s : sessionsAtKill) {
        if (s.status != SessionStatus::active) {
            continue;
        }
        // One that was live at the kill: its stream died with the process.
        const rapidjson::Document r =
            mcp.call(s.operation_id + "_poll", idArgs("session_id", s.id));
        note("a session live at the kill, polled after the restart: %s", firstText(r).c_str());
        EXPECT_TRUE(isError(r) || str(structured(r), "status") != "active") << jsonText(r);
        break;
    }
    // A graceful stop, and the file is sound.
    crankd_->signal(SIGTERM);
    ASSERT_EQ(crankd_->waitForExit(20s), 0) << crankd_->stderrText();
    crankd_.reset();
    EXPECT_EQ(integrity(db), "ok");
}

// =================================================================================================
// The store's file system full.
// =================================================================================================

constexpr const char* kUnshare = "/usr/bin/unshare";
constexpr const char* kNsenter = "/usr/bin/nsenter";

class DiskFullTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (::geteuid() != 0 || ::access(kUnshare, X_OK) != 0 || ::access(kNsenter, X_OK) != 0) {
            GTEST_SKIP() << "needs root, unshare and nsenter: the store goes on a tmpfs mounted "
                            "in a private mount namespace";
        }
        store_ = dir_.file("store");
        ASSERT_EQ(::mkdir(store_.c_str(), 0700), 0);
        // The namespace holder: a private mount namespace with a small tmpfs on store_, seen by
        // its processes only (never in the host's mounts); it ends with its last process.
        holder_.emplace(
            std::vector<std::string>{kUnshare, "-m", "--propagation", "private", "/bin/sh", "-c",
                                     "mount -t tmpfs -o size=8m crank-fault-store " + store_ +
                                         " && echo crank-fault-mounted >&2 && exec sleep 300"});
        if (!holder_->waitForStderrLine("crank-fault-mounted", 10s)) {
            GTEST_SKIP() << "cannot mount a tmpfs in a private mount namespace: "
                         << holder_->stderrSoFar(100ms);
        }
        inside_ = "/proc/" + std::to_string(holder_->pid()) + "/root" + store_;
        const std::string config = dir_.write(
            "crank.json", substitute(R"({"store": {"path": "@STORE@/crank.db"}, @PLUGINS@,
            "server": {"node_id": "disk-node"},
            "jobs": {"workers": 8, "heartbeat_interval_ms": 500},
            "operations": [
              {"name": "su", "description": "synthetic unary", "protocol": "synthetic",
               "config": {"items": 1}},
              {"name": "sj", "description": "synthetic job", "protocol": "synthetic",
               "input_schema": {"type": "object", "properties": {"delay": {"type": "integer"}}},
               "config": {"items": 1, "delay_ms": "{{delay}}"},
               "execution": {"mode": "async_job", "upstream_timeout_ms": 60000}},
              {"name": "ss", "description": "synthetic session", "protocol": "synthetic",
               "config": {"items": -1, "rate_per_sec": 50},
               "execution": {"mode": "session", "transport_behavior": "server_stream",
                             "max_items": 1000}}]})",
                                     {{"@STORE@", store_}, {"@PLUGINS@", pluginDirs()}}));
        // crankd joins the namespace (nsenter execs it: the pid is crankd's).
        crankd_.emplace(std::vector<std::string>{kNsenter, "-t", std::to_string(holder_->pid()),
                                                 "-m", "--", CRANKD_PATH, "--config", config,
                                                 "--listen", "127.0.0.1:0"});
        const auto port = crankd_->waitForListeningPort(20s);
        ASSERT_TRUE(port) << crankd_->stderrText();
        port_ = *port;
        mcp_.emplace(port_);
        ASSERT_TRUE(mcp_->open());
    }

    void TearDown() override {
        if (crankd_) {
            crankd_->signal(SIGTERM);
            crankd_->waitForExit(20s);
            crankd_.reset();
        }
        holder_.reset();  // SIGKILL: the namespace and its tmpfs go with it
    }

    /// Fills the tmpfs with a filler file until the kernel says ENOSPC; the bytes written.
    std::size_t fill() {
        const std::string path = inside_ + "/filler";
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        EXPECT_GE(fd, 0) << path << ": " << std::generic_category().message(errno);
        if (fd < 0) {
            return 0;
        }
        const std::string block(std::size_t{64} * 1024, 'f');
        std::size_t written = 0;
        int error = 0;
        for (int i = 0; i < 1024; ++i) {  // at most 64 MiB; the file system has 8
            const ssize_t n = ::write(fd, block.data(), block.size());
            if (n <= 0) {
                error = errno;
                break;
            }
            written += static_cast<std::size_t>(n);
        }
        // The last pages, smaller than a block.
        for (int i = 0; i < 64 && error == ENOSPC; ++i) {
            if (::write(fd, block.data(), 1024) <= 0) {
                break;
            }
            written += 1024;
        }
        ::close(fd);
        EXPECT_EQ(error, ENOSPC) << std::generic_category().message(error);
        return written;
    }

    void freeSpace() { EXPECT_EQ(::unlink((inside_ + "/filler").c_str()), 0); }

    /// Stops crankd gracefully and copies the store's files out of the namespace (SQLite must not
    /// open them through /proc/<pid>/root: it resolves that link to "/" and would open the host's
    /// path instead); the copy's path.
    std::string stopAndCopyStore() {
        const auto stopping = Clock::now();
        crankd_->signal(SIGTERM);
        EXPECT_EQ(crankd_->waitForExit(20s), 0) << crankd_->stderrText();
        note("crankd stopped %lld ms after SIGTERM",
             static_cast<long long>(msBetween(stopping, Clock::now())));
        crankd_.reset();
        const std::string copy = dir_.file("copy");
        std::filesystem::create_directory(copy);
        for (const char* suffix : {"", "-wal"}) {
            const std::string from = inside_ + "/crank.db" + suffix;
            if (std::filesystem::exists(from)) {
                std::filesystem::copy_file(from, copy + "/crank.db" + suffix);
            }
        }
        return copy + "/crank.db";
    }

    TempDir dir_;
    std::string store_;
    std::string inside_;
    std::optional<ChildProcess> holder_;
    std::optional<ChildProcess> crankd_;
    std::uint16_t port_ = 0;
    std::optional<Mcp> mcp_;
};

TEST_F(DiskFullTest, WritesFailClearlyReadsGoOnAndWritesResumeOnceSpaceReturns) {
    // Before: a finished job and a live session.
    const std::string done = str(mcp_->ok("sj_start", R"({"delay": 10})"), "job_id");
    ASSERT_EQ(waitForJobEnd(*mcp_, "sj", done, 10s), "succeeded");
    const std::string live = str(mcp_->ok("ss_start"), "session_id");
    ASSERT_FALSE(live.empty());

    const std::size_t filler = fill();
    note("disk full: %zu filler bytes on the 8 MiB tmpfs", filler);

    // Writes fail with an error that names the store and the reason. (SQLite may still fit a
    // small transaction into WAL pages that a failed one had allocated: such a start succeeds,
    // and must then be in the store like any other.)
    std::vector<std::string> startedWhileFull;
    const auto refused = [&](const std::string& tool, const char* id) {
        for (int attempt = 0; attempt < 10; ++attempt) {
            const rapidjson::Document r = mcp_->call(tool, R"({"delay": 10})");
            if (isError(r)) {
                return firstText(r);
            }
            startedWhileFull.push_back(str(structured(r), id));
        }
        return std::string("(never refused)");
    };
    const std::string job = refused("sj_start", "job_id");
    const std::string session = refused("ss_start", "session_id");
    note("sj_start: %s", job.c_str());
    note("ss_start: %s", session.c_str());
    for (const std::string& message : {job, session}) {
        EXPECT_TRUE(contains(message, "store"));
        EXPECT_TRUE(contains(message, "disk is full"));
    }
    // crankd stays up, and what does not write works.
    EXPECT_TRUE(healthy(port_));
    EXPECT_FALSE(crankd_->waitForExit(0ms).has_value());
    EXPECT_FALSE(isError(mcp_->call("su")));
    EXPECT_EQ(str(mcp_->ok("sj_status", idArgs("job_id", done)), "status"), "succeeded");
    const rapidjson::Document result = mcp_->ok("sj_result", idArgs("job_id", done));
    ASSERT_TRUE(result.HasMember("ready"));
    EXPECT_TRUE(result["ready"].GetBool());
    rapidjson::Document page;
    EXPECT_TRUE(eventually(
        [&] {
            page = mcp_->ok("ss_poll", idArgs("session_id", live));
            return !seqs(page).empty();
        },
        5s));
    EXPECT_EQ(str(page, "status"), "active");
    // Audit records that cannot be written are logged, not sent to the client.
    note("while full: crankd logged %zu audit records it could not write",
         occurrences(crankd_->stderrSoFar(100ms), "the audit log refused"));
    const auto ready = tryExchange(port_, "GET", "/readyz", {});
    note("while full: /readyz answers %d %s", ready ? ready->status : 0,
         ready ? ready->body.c_str() : "");

    // Space again: writes succeed.
    freeSpace();
    const std::string after = str(mcp_->ok("sj_start", R"({"delay": 10})"), "job_id");
    EXPECT_EQ(waitForJobEnd(*mcp_, "sj", after, 10s), "succeeded");
    const std::string second = str(mcp_->ok("ss_start"), "session_id");
    ASSERT_FALSE(second.empty());
    for (const std::string& id : {live, second}) {
        const rapidjson::Document stopped = mcp_->ok("ss_stop", idArgs("session_id", id));
        EXPECT_EQ(str(stopped, "status"), "stopped");
    }

    // And the file is sound, with every row as the clients were told.
    const std::string copy = stopAndCopyStore();
    EXPECT_EQ(integrity(copy), "ok");
    std::map<std::string, JobStatus> jobs;
    for (const JobRecord& row : storedJobs(copy)) {
        jobs[row.id] = row.status;
    }
    std::map<std::string, SessionStatus> sessions;
    for (const SessionRecord& row : storedSessions(copy)) {
        sessions[row.id] = row.status;
    }
    EXPECT_EQ(jobs.size() + sessions.size(), 4 + startedWhileFull.size())
        << "a refused start left a row, or an accepted one none";
    EXPECT_EQ(jobs[done], JobStatus::succeeded);
    EXPECT_EQ(jobs[after], JobStatus::succeeded);
    EXPECT_EQ(sessions[live], SessionStatus::closed);
    EXPECT_EQ(sessions[second], SessionStatus::closed);
    for (const std::string& id : startedWhileFull) {
        EXPECT_TRUE(jobs.count(id) + sessions.count(id) == 1) << id;
    }
}

TEST_F(DiskFullTest, AnEndNotRecordedWhileTheDiskIsFullIsRecordedOnceSpaceReturns) {
    const std::string job = str(mcp_->ok("sj_start", R"({"delay": 1500})"), "job_id");
    ASSERT_TRUE(eventually(
        [&] { return str(mcp_->ok("sj_status", idArgs("job_id", job)), "status") == "running"; },
        5s));
    const std::string session = str(mcp_->ok("ss_start"), "session_id");
    fill();
    // The session stops and the job ends while nothing can be written.
    EXPECT_EQ(str(mcp_->ok("ss_stop", idArgs("session_id", session)), "status"), "stopped");
    EXPECT_TRUE(crankd_->waitForStderrLine("cannot record the end of job", 10s).has_value())
        << "the job did not end while the disk was full";
    freeSpace();
    rapidjson::Document last;
    const std::string status = waitForJobEnd(*mcp_, "sj", job, 10s, &last);
    EXPECT_EQ(status, "succeeded") << "once the store can write again: " << jsonText(last);
    const std::string copy = stopAndCopyStore();
    EXPECT_EQ(integrity(copy), "ok");
    for (const SessionRecord& row : storedSessions(copy)) {
        EXPECT_EQ(row.status, SessionStatus::closed) << row.id;
    }
}

}  // namespace
