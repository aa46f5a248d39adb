// What a hostile HTTP client can do to a real crankd (issue 24, availability): heads and bodies
// sent a byte at a time, connections piled up from one address, framings that smuggle requests.
// crankd runs with 4 workers, so that a handful of such clients would take them all if they
// could; every test then checks that everyone else is still answered at once.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "crankd_suite.h"
#include "mcp_http_client.h"
#include "raw_socket.h"
#include <sys/socket.h>

namespace {

using crank::testing::connectLoopback;
using crank::testing::connectLoopbackFrom;
using crank::testing::exchange;
using crank::testing::Fd;
using crank::testing::kAccept;
using crank::testing::McpClient;
using crank::testing::readToEof;
using crank::testing::Reply;
using crank::testing::SseReader;
using crank::testing::writeAll;
using namespace std::chrono_literals;

constexpr int kWorkers = 4;

class HostileClientTest : public crank::testing::CrankdSuite<HostileClientTest> {
protected:
    static void SetUpTestSuite() {
        startCrankd(R"("server": {"threads": 4, "request_head_timeout_ms": 4000,
                                  "max_connections_per_address": 60},
            "operations": [
              {"name": "feed", "description": "three items", "protocol": "synthetic",
               "config": {"items": 3},
               "execution": {"mode": "window", "transport_behavior": "server_stream"}}])");
    }

    /// /healthz, and an MCP session that initializes and calls a tool: what everyone else does.
    static void everyoneElseIsServed(const char* when) {
        const auto healthz = exchange(port_, "GET", "/healthz", {});
        EXPECT_EQ(healthz.status, 200) << when;
        McpClient client(port_);
        ASSERT_TRUE(client.open()) << when;
        const auto result = client.callTool("feed", "{}");
        EXPECT_TRUE(result.HasMember("structuredContent")) << when;
    }
};

/// Connections that send a request head a byte at a time, every 100 ms, on a thread of their own,
/// until destroyed. Each byte would restart a per-read timeout.
class Trickle {
public:
    Trickle(std::uint16_t port, int count) {
        for (int i = 0; i < count; ++i) {
            fds_.push_back(connectLoopbackFrom("127.0.0.5", port));
            writeAll(fds_.back().get(), "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
        }
        thread_ = std::thread([this] {
            for (int tick = 0; tick < 600 && !stop_.load(); ++tick) {  // at most a minute
                for (const Fd& fd : fds_) {
                    (void)::send(fd.get(), "a", 1, MSG_NOSIGNAL);
                }
                std::this_thread::sleep_for(100ms);
            }
        });
    }
    ~Trickle() {
        stop_ = true;
        thread_.join();
    }
    Trickle(const Trickle&) = delete;
    Trickle& operator=(const Trickle&) = delete;

private:
    std::vector<Fd> fds_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

TEST_F(HostileClientTest, HeadsSentAByteAtATimeByAsManyClientsAsWorkersThenTenTimesMoreStopNoOne) {
    {
        const Trickle slow(port_, kWorkers);
        std::this_thread::sleep_for(300ms);
        everyoneElseIsServed("with as many slow heads as workers");
    }
    {
        const Trickle slow(port_, 10 * kWorkers);
        std::this_thread::sleep_for(300ms);
        everyoneElseIsServed("with ten times as many slow heads as workers");
    }
}

TEST_F(HostileClientTest, AHeadThatNeverEndsIsAnswered408AtTheHeadDeadline) {
    Fd fd = connectLoopback(port_);
    writeAll(fd.get(), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const auto answer = readToEof(fd.get(), 20s);
    EXPECT_TRUE(answer.eof);
    EXPECT_NE(answer.bytes.find("HTTP/1.1 408"), std::string::npos) << answer.bytes;
    EXPECT_NE(answer.bytes.find("server.request_head_timeout_ms"), std::string::npos);
}

TEST_F(HostileClientTest, ContentLengthWithTransferEncodingIsRefused400AndTheConnectionClosed) {
    // The smuggling shape: a front end that reads Content-Length would see one request; a back
    // end that reads the chunks would see a second one hidden in the body.
    Fd fd = connectLoopback(port_);
    writeAll(fd.get(),
             "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             "Accept: application/json, text/event-stream\r\nContent-Length: 44\r\n"
             "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    const auto answer = readToEof(fd.get(), 20s);
    EXPECT_TRUE(answer.eof);
    EXPECT_EQ(answer.bytes.rfind("HTTP/1.1 400", 0), 0u) << answer.bytes;
    EXPECT_NE(answer.bytes.find("Content-Length and Transfer-Encoding"), std::string::npos);
    EXPECT_EQ(answer.bytes.find("HTTP/1.1 200"), std::string::npos) << answer.bytes;
}

TEST_F(HostileClientTest, OneAddressCannotHoldEveryConnection) {
    std::vector<Fd> idle;
    for (int i = 0; i < 60; ++i) {
        idle.push_back(connectLoopbackFrom("127.0.0.9", port_));
    }
    Fd extra = connectLoopbackFrom("127.0.0.9", port_);
    writeAll(extra.get(), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const auto refused = readToEof(extra.get(), 20s);
    EXPECT_NE(refused.bytes.find("HTTP/1.1 429"), std::string::npos) << refused.bytes;
    EXPECT_NE(refused.bytes.find("server.max_connections_per_address"), std::string::npos);
    everyoneElseIsServed("with 60 idle connections from one address");
}

TEST_F(HostileClientTest, BodiesSentAByteAtATimeAreCutAndTheirWorkersFreed) {
    // Larger than what the gate reads ahead, so each is read on a worker, at its minimum rate.
    std::vector<Fd> slow;
    for (int i = 0; i < kWorkers; ++i) {
        slow.push_back(connectLoopback(port_));
        writeAll(slow.back().get(),
                 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 "Accept: application/json, text/event-stream\r\nContent-Length: 500000\r\n\r\n{");
    }
    std::vector<bool> ended(slow.size(), false);
    std::size_t open = slow.size();
    for (int tick = 0; tick < 150 && open > 0; ++tick) {  // 15 s at most
        for (std::size_t i = 0; i < slow.size(); ++i) {
            if (!ended[i] && (::send(slow[i].get(), " ", 1, MSG_NOSIGNAL) != 1 ||
                              crank::testing::readFor(slow[i].get(), 25ms).eof)) {
                ended[i] = true;
                --open;
            }
        }
    }
    EXPECT_EQ(open, 0u) << "slow bodies still hold their workers";
    everyoneElseIsServed("after slow bodies");
}

// ----- What one agent may hold: MCP sessions, SSE streams, and what each session keeps ------

constexpr const char* kMalloryKey = "mallory-key-0123456789";
constexpr const char* kAliceKey = "alice-key-0123456789";

class AgentQuotaTest : public crank::testing::CrankdSuite<AgentQuotaTest> {
protected:
    static void SetUpTestSuite() {
        startCrankd(R"("mcp": {"max_streams_per_session": 2},
            "auth": {"mode": "api_key", "agents": [
                {"id": "mallory", "api_key": {"env": "KEY_MALLORY"},
                 "limits": {"max_mcp_sessions": 3, "max_streams": 2}},
                {"id": "alice", "api_key": {"env": "KEY_ALICE"}}]},
            "operations": [
              {"name": "feed", "description": "three items", "protocol": "synthetic",
               "config": {"items": 3},
               "execution": {"mode": "window", "transport_behavior": "server_stream"}}])",
                    {{"KEY_MALLORY", kMalloryKey},
                     {"KEY_ALICE", kAliceKey},
                     // What a session keeps is read from crankd's resident size: one malloc arena
                     // (glibc gives each worker thread its own, and which workers parse the warm-up
                     // round's bodies decides how much the second round finds free), and under
                     // AddressSanitizer no quarantine (which keeps every freed body resident).
                     {"MALLOC_ARENA_MAX", "1"},
                     {"ASAN_OPTIONS", asanOptions() + "quarantine_size_mb=0"}});
    }

    static std::string asanOptions() {
        const char* inherited = std::getenv("ASAN_OPTIONS");
        return inherited != nullptr && *inherited != '\0' ? std::string(inherited) + ":" : "";
    }

    static Reply initialize(const std::string& key, const std::string& capabilities = "{}") {
        return exchange(port_, "POST", "/mcp",
                        {{"Content-Type", "application/json"},
                         {"Accept", kAccept},
                         {"Authorization", std::string("Bearer ") + key}},
                        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{)"
                        R"("protocolVersion":"2025-11-25","capabilities":)" +
                            capabilities + R"(,"clientInfo":{"name":"t","version":"1"}}})");
    }

    static void end(const std::string& key, const std::string& session) {
        const Reply deleted = exchange(port_, "DELETE", "/mcp",
                                       {{"Mcp-Session-Id", session},
                                        {"MCP-Protocol-Version", "2025-11-25"},
                                        {"Authorization", std::string("Bearer ") + key}});
        EXPECT_EQ(deleted.status, 200) << deleted.body;
    }

    /// A GET stream of `session`; its head says whether it was opened.
    static std::unique_ptr<SseReader> stream(const std::string& key, const std::string& session) {
        return std::make_unique<SseReader>(port_, "GET",
                                           std::vector<std::pair<std::string, std::string>>{
                                               {"Accept", "text/event-stream"},
                                               {"Mcp-Session-Id", session},
                                               {"MCP-Protocol-Version", "2025-11-25"},
                                               {"Authorization", std::string("Bearer ") + key}});
    }

    static long rssKib() {
        std::ifstream status("/proc/" + std::to_string(process_->pid()) + "/status");
        std::string line;
        while (std::getline(status, line)) {
            if (line.rfind("VmRSS:", 0) == 0) {
                return std::stol(line.substr(6));
            }
        }
        return -1;
    }
};

TEST_F(AgentQuotaTest, OneAgentCannotOpenEverySessionOfTheNode) {
    std::vector<std::string> sessions;
    for (int i = 0; i < 3; ++i) {
        const Reply opened = initialize(kMalloryKey);
        ASSERT_EQ(opened.status, 200) << opened.body;
        sessions.push_back(opened.header("mcp-session-id"));
    }
    const Reply refused = initialize(kMalloryKey);
    EXPECT_EQ(refused.status, 429) << refused.body;
    EXPECT_NE(refused.body.find("auth.agents[].limits.max_mcp_sessions"), std::string::npos)
        << refused.body;
    // Another agent is not locked out.
    McpClient alice(port_, kAliceKey);
    ASSERT_TRUE(alice.open());
    EXPECT_TRUE(alice.callTool("feed", "{}").HasMember("structuredContent"));
    // A session that ends gives its place back.
    end(kMalloryKey, sessions.back());
    sessions.pop_back();
    const Reply again = initialize(kMalloryKey);
    EXPECT_EQ(again.status, 200) << again.body;
    sessions.push_back(again.header("mcp-session-id"));
    for (const std::string& session : sessions) {
        end(kMalloryKey, session);
    }
}

TEST_F(AgentQuotaTest, StreamsAreBoundedPerSessionAndPerAgent) {
    McpClient alice(port_, kAliceKey);
    ASSERT_TRUE(alice.open());
    auto first = stream(kAliceKey, alice.session());
    auto second = stream(kAliceKey, alice.session());
    EXPECT_NE(first->head().find("200 OK"), std::string::npos) << first->head();
    EXPECT_NE(second->head().find("200 OK"), std::string::npos) << second->head();
    auto third = stream(kAliceKey, alice.session());
    EXPECT_NE(third->head().find("429"), std::string::npos) << third->head();

    // mallory: two streams on two sessions is her limit, whatever the sessions allow.
    std::vector<std::string> sessions;
    std::vector<std::unique_ptr<SseReader>> open;
    for (int i = 0; i < 2; ++i) {
        const Reply opened = initialize(kMalloryKey);
        ASSERT_EQ(opened.status, 200) << opened.body;
        sessions.push_back(opened.header("mcp-session-id"));
        open.push_back(stream(kMalloryKey, sessions.back()));
        EXPECT_NE(open.back()->head().find("200 OK"), std::string::npos) << open.back()->head();
    }
    const auto refused = stream(kMalloryKey, sessions[1]);
    EXPECT_NE(refused->head().find("429"), std::string::npos) << refused->head();
    // A closed stream gives its place back.
    open.front()->close();
    bool reopened = false;
    for (int attempt = 0; attempt < 100 && !reopened; ++attempt) {
        const auto retry = stream(kMalloryKey, sessions[0]);
        reopened = retry->head().find("200 OK") != std::string::npos;
        if (!reopened) {
            std::this_thread::sleep_for(50ms);
        }
    }
    EXPECT_TRUE(reopened);
    open.clear();
    for (const std::string& session : sessions) {
        end(kMalloryKey, session);
    }
}

TEST_F(AgentQuotaTest, ASessionKeepsOnlyTheCapabilitiesCrankdReads) {
    // 900 KB of `experimental` a session: 30 of them would keep 27 MB if they were kept as sent.
    const std::string capabilities =
        R"({"elicitation":{},"experimental":{"junk":")" + std::string(900 * 1000, 'x') + R"("}})";
    // A first round, ended at once, warms the allocator with what parsing such bodies costs: what
    // the second round adds is what the sessions keep.
    for (int i = 0; i < 30; ++i) {
        const Reply opened = initialize(kAliceKey, capabilities);
        ASSERT_EQ(opened.status, 200) << opened.body;
        end(kAliceKey, opened.header("mcp-session-id"));
    }
    const long before = rssKib();
    std::vector<std::string> sessions;
    for (int i = 0; i < 30; ++i) {  // alice may hold 32 (an agent's default)
        const Reply opened = initialize(kAliceKey, capabilities);
        ASSERT_EQ(opened.status, 200) << opened.body;
        sessions.push_back(opened.header("mcp-session-id"));
    }
    const long after = rssKib();
    for (const std::string& session : sessions) {
        end(kAliceKey, session);
    }
    ASSERT_GT(before, 0);
    EXPECT_LT(after - before, 8 * 1024)
        << "crankd grew from " << before << " to " << after << " KiB over 30 sessions";
}

// ----- The open file limit, checked against the configuration at start-up ------------------

/// crankd under `prlimit --nofile=SOFT:HARD` (util-linux), with a config of `members`.
std::unique_ptr<crank::testing::ChildProcess> crankdWithFileLimit(
    const crank::testing::TempDir& dir, const std::string& limits, const std::string& members) {
    const std::string config = dir.write(
        "crank.json", R"({"store": {"path": ")" + dir.file("crank.db") +
                          R"("}, "plugins": {"directories": [")" CRANK_PLUGIN_DIR R"("]})" +
                          members + "}");
    return std::make_unique<crank::testing::ChildProcess>(
        std::vector<std::string>{"/usr/bin/prlimit", "--nofile=" + limits, CRANKD_PATH, "--config",
                                 config, "--listen", "127.0.0.1:0"});
}

TEST(DescriptorLimit, ALimitTooLowForTheConfigurationIsRefusedWithTheNumbers) {
    const crank::testing::TempDir dir;
    auto crankd = crankdWithFileLimit(dir, "512:512", "");
    EXPECT_EQ(crankd->waitForExit(20s), 1) << crankd->stderrText();
    const std::string err = crankd->stderrText();
    EXPECT_NE(err.find("14384 file descriptors"), std::string::npos) << err;
    EXPECT_NE(err.find("at most 512"), std::string::npos) << err;
    EXPECT_NE(err.find("server.max_connections 4096"), std::string::npos) << err;
}

TEST(DescriptorLimit, ASoftLimitBelowTheNeedIsRaisedWhenTheHardLimitAllows) {
    const crank::testing::TempDir dir;
    auto crankd = crankdWithFileLimit(
        dir, "256:1024", R"(, "server": {"max_connections": 300}, "mcp": {"max_streams": 200})");
    const auto port = crankd->waitForListeningPort(20s);
    ASSERT_TRUE(port) << crankd->stderrText();
    EXPECT_NE(crankd->stderrText().find("raised the open file limit from 256 to 788"),
              std::string::npos)
        << crankd->stderrText();
    EXPECT_EQ(exchange(*port, "GET", "/healthz", {}).status, 200);
    crankd->signal(SIGTERM);
    EXPECT_EQ(crankd->waitForExit(20s), 0) << crankd->stderrText();
}

// ----- One workspace cannot take every call slot ------------------------------------------

constexpr const char* kTeamKey = "team-key-0123456789";

class WorkspaceIsolationTest : public crank::testing::CrankdSuite<WorkspaceIsolationTest> {
protected:
    static void SetUpTestSuite() {
        // 8 workers: 6 call slots (server.max_concurrent_calls 0), two workspaces reserving one
        // slot each by default; the upstream bound is lifted to the node's (UpstreamIsolation
        // tests it).
        startCrankd(R"("server": {"threads": 8, "max_calls_per_upstream": 6},
            "auth": {"mode": "api_key", "workspaces": [{"id": "team"}], "agents": [
                {"id": "mallory", "api_key": {"env": "KEY_MALLORY"},
                 "limits": {"max_concurrent_calls": 10}},
                {"id": "alice", "workspace": "team", "api_key": {"env": "KEY_TEAM"}}]},
            "operations": [
              {"name": "hang", "description": "an upstream that takes 3 s", "protocol": "synthetic",
               "config": {"items": 1, "delay_ms": 3000},
               "execution": {"mode": "unary", "transport_behavior": "request_response",
                             "upstream_timeout_ms": 20000}},
              {"name": "feed", "description": "three items", "protocol": "synthetic",
               "workspace": "team", "config": {"items": 3},
               "execution": {"mode": "window", "transport_behavior": "server_stream"}}])",
                    {{"KEY_MALLORY", kMalloryKey}, {"KEY_TEAM", kTeamKey}});
    }
};

TEST_F(WorkspaceIsolationTest, CallsToAHangingUpstreamInOneWorkspaceLeaveAnotherItsSlots) {
    std::vector<std::string> answers(6);
    std::vector<std::thread> callers;
    for (std::size_t i = 0; i < answers.size(); ++i) {
        callers.emplace_back([i, &answers] {
            McpClient mallory(port_, kMalloryKey);
            if (mallory.open()) {
                mallory.callTool("hang", "{}", &answers[i]);
            }
        });
    }
    std::this_thread::sleep_for(700ms);  // the calls have taken their slots
    McpClient alice(port_, kTeamKey, "/w/team/mcp");
    ASSERT_TRUE(alice.open());
    std::string body;
    const auto result = alice.callTool("feed", "{}", &body);
    EXPECT_TRUE(result.HasMember("structuredContent")) << body;
    for (auto& caller : callers) {
        caller.join();
    }
    // One of mallory's six was refused: the slot team reserves (or, had alice's call come first,
    // the node's bound) kept it out.
    int refused = 0;
    for (const std::string& answer : answers) {
        refused += answer.find("reserved for other workspaces") != std::string::npos ||
                           answer.find("calls running, its limit") != std::string::npos
                       ? 1
                       : 0;
    }
    EXPECT_EQ(refused, 1) << "mallory's workspace may take 5 of the 6 slots";
}

// Issue 45: which workspaces exist cannot be learned from their endpoints: without a key every
// /w/{name}/mcp answers 401, with another workspace's key 404, whether {name} exists or not.
TEST_F(WorkspaceIsolationTest, WorkspaceNamesCannotBeEnumerated) {
    const std::string initialize =
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
        R"("2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
    const auto post = [&](const std::string& path, const std::string& key) {
        std::vector<std::pair<std::string, std::string>> headers{
            {"Content-Type", "application/json"}, {"Accept", crank::testing::kAccept}};
        if (!key.empty()) {
            headers.emplace_back("Authorization", "Bearer " + key);
        }
        return crank::testing::exchange(port_, "POST", path, headers, initialize);
    };
    for (const char* path : {"/w/team/mcp", "/w/nosuch/mcp", "/w/default/mcp", "/w/x/y/mcp"}) {
        const auto anonymous = post(path, "");
        EXPECT_EQ(anonymous.status, 401) << path << ": " << anonymous.body;
        EXPECT_EQ(anonymous.header("www-authenticate"), R"(Bearer realm="crank")") << path;
    }
    for (const char* path : {"/w/team/mcp", "/w/nosuch/mcp", "/w/x/y/mcp"}) {
        const auto foreign = post(path, kMalloryKey);
        EXPECT_EQ(foreign.status, 404) << path << ": " << foreign.body;
        EXPECT_NE(foreign.body.find("no MCP endpoint at this path"), std::string::npos) << path;
    }
    EXPECT_EQ(post("/w/team/mcp", kTeamKey).status, 200);
}

// ----- A hanging upstream only hurts its own tools ---------------------------------------------

class UpstreamIsolationTest : public crank::testing::CrankdSuite<UpstreamIsolationTest> {
protected:
    static void SetUpTestSuite() {
        // 8 workers: 6 call slots, of which one upstream may hold 4 (server.max_calls_per_upstream
        // 0). Two operations name one upstream that takes 3 s to answer; a third has its own.
        startCrankd(R"("server": {"threads": 8},
            "operations": [
              {"name": "slow_a", "description": "a hanging backend", "protocol": "synthetic",
               "upstream": "slow-backend", "config": {"items": 1, "delay_ms": 3000},
               "execution": {"mode": "unary", "transport_behavior": "request_response",
                             "upstream_timeout_ms": 20000}},
              {"name": "slow_b", "description": "the same backend", "protocol": "synthetic",
               "upstream": "slow-backend", "config": {"items": 1, "delay_ms": 3000},
               "execution": {"mode": "unary", "transport_behavior": "request_response",
                             "upstream_timeout_ms": 20000}},
              {"name": "feed", "description": "three items", "protocol": "synthetic",
               "config": {"items": 3},
               "execution": {"mode": "window", "transport_behavior": "server_stream"}}])");
    }
};

TEST_F(UpstreamIsolationTest, CallsToAHangingUpstreamTakeOnlyItsShareAndOtherToolsRun) {
    std::vector<std::string> answers(5);
    std::vector<std::thread> callers;
    for (std::size_t i = 0; i < answers.size(); ++i) {
        callers.emplace_back([i, &answers] {
            McpClient client(port_);
            if (client.open()) {
                client.callTool(i % 2 == 0 ? "slow_a" : "slow_b", "{}", &answers[i]);
            }
        });
    }
    std::this_thread::sleep_for(700ms);  // the calls have taken their slots
    McpClient other(port_);
    ASSERT_TRUE(other.open());
    std::string body;
    const auto result = other.callTool("feed", "{}", &body);
    EXPECT_TRUE(result.HasMember("structuredContent")) << body;
    for (auto& caller : callers) {
        caller.join();
    }
    int refused = 0;
    int answered = 0;
    for (const std::string& answer : answers) {
        if (answer.find("upstream slow-backend already has 4 calls in progress") !=
            std::string::npos) {
            ++refused;
            EXPECT_NE(answer.find("server.max_calls_per_upstream: 4"), std::string::npos) << answer;
        } else if (answer.find("\"isError\":true") == std::string::npos) {
            ++answered;
        }
    }
    EXPECT_EQ(refused, 1) << "the two tools of one upstream share its 4 slots";
    EXPECT_EQ(answered, 4);
}

// ----- Logs an outsider can fill -------------------------------------------------------------

class LogFloodTest : public crank::testing::CrankdSuite<LogFloodTest> {
protected:
    static void SetUpTestSuite() {
        // A stdio upstream that writes 300000 lines to its stderr at once (and a line with a
        // terminal escape), then never answers.
        startCrankd(R"("upstreams": [{"name": "noisy", "config": {"command": "/bin/sh",
            "args": ["-c", "printf 'evil \\033[31mred\\n' >&2; yes 'upstream noise line' | head -n 300000 >&2; exec sleep 60"],
            "close_wait_ms": 200, "term_wait_ms": 200}}])");
    }
};

TEST_F(LogFloodTest, AnUpstreamsStderrAndAClientsNameCannotFloodOrForgeTheLog) {
    // A client name that would forge a line of its own, and a megabyte long one.
    const std::string forged = "x\\n2026-12-01T00:00:00.000+0000 critical forged line";
    for (const std::string& name : {forged, std::string(900 * 1000, 'n')}) {
        const Reply opened = exchange(
            port_, "POST", "/mcp", {{"Content-Type", "application/json"}, {"Accept", kAccept}},
            R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{)"
            R"("protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":")" +
                name + R"(","version":"1"}}})");
        EXPECT_EQ(opened.status, 200) << opened.body.substr(0, 200);
    }
    // Long enough for the flood to have been read (it takes well under a second to write);
    // stderrSoFar() keeps reading crankd's stderr meanwhile, so crankd never waits on the pipe.
    const std::string log = process_->stderrSoFar(3s);
    EXPECT_EQ(exchange(port_, "GET", "/healthz", {}).status, 200);
    std::size_t noise = 0;
    for (std::size_t at = log.find("upstream noise line"); at != std::string::npos;
         at = log.find("upstream noise line", at + 1)) {
        ++noise;
    }
    EXPECT_GT(noise, 0u) << "the upstream's stderr reaches the log";
    EXPECT_LE(noise, 100u) << "one source may write --log-source-rate (100) lines per 10 s";
    EXPECT_LT(log.size(), 256u * 1024) << "the log grew to " << log.size() << " bytes";
    EXPECT_EQ(log.find("\n2026-12-01T00:00:00.000+0000 critical forged line"), std::string::npos);
    EXPECT_NE(log.find("\\n2026-12-01T00:00:00.000+0000 critical forged"), std::string::npos);
    EXPECT_EQ(log.find('\x1b'), std::string::npos) << "a terminal escape reached the log raw";
}

// ----- Failed authentications and the metrics token ------------------------------------------

constexpr const char* kMetricsToken = "metrics-token-0123456789";

class AuthFailureTest : public crank::testing::CrankdSuite<AuthFailureTest> {
protected:
    static void SetUpTestSuite() {
        startCrankd(R"("server": {"max_auth_failures": 5, "auth_failure_window_ms": 60000,
                                  "metrics_token": {"env": "METRICS_TOKEN"}},
            "auth": {"mode": "api_key", "agents": [
                {"id": "alice", "api_key": {"env": "KEY_ALICE"}}]})",
                    {{"KEY_ALICE", kAliceKey}, {"METRICS_TOKEN", kMetricsToken}});
    }

    static int initializeFrom(const char* source, const std::string& key) {
        Fd fd = connectLoopbackFrom(source, port_);
        const std::string body =
            R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
            R"("2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
        writeAll(fd.get(),
                 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                 "application/json\r\nAccept: application/json, text/event-stream\r\n"
                 "Authorization: Bearer " +
                     key + "\r\nConnection: close\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body);
        const std::string answer = readToEof(fd.get(), 20s).bytes;
        return answer.size() > 12 ? std::stoi(answer.substr(9, 3)) : 0;
    }
};

TEST_F(AuthFailureTest, GuessingKeysFromOneAddressIsThrottledAndOtherAddressesAreNot) {
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(initializeFrom("127.0.0.21", "guess-" + std::to_string(i)), 401);
    }
    // The sixth attempt, even with the right key, waits for the window.
    EXPECT_EQ(initializeFrom("127.0.0.21", kAliceKey), 429);
    EXPECT_EQ(initializeFrom("127.0.0.22", kAliceKey), 200);
}

TEST_F(AuthFailureTest, TheMetricsNeedTheirToken) {
    const Reply open = exchange(port_, "GET", "/metrics", {});
    EXPECT_EQ(open.status, 401) << open.body;
    EXPECT_NE(open.body.find("server.metrics_token"), std::string::npos) << open.body;
    const Reply wrong = exchange(port_, "GET", "/metrics", {{"Authorization", "Bearer nope"}});
    EXPECT_EQ(wrong.status, 401);
    const Reply right = exchange(port_, "GET", "/metrics",
                                 {{"Authorization", std::string("Bearer ") + kMetricsToken}});
    EXPECT_EQ(right.status, 200);
    EXPECT_NE(right.body.find("crank_"), std::string::npos);
}

}  // namespace
