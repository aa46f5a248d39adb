// The stdio transport of plugins/mcp against a real MCP server written with the official
// TypeScript SDK (tests/e2e/mcp-stdio-server.mjs): the handshake, calls, notifications, a server
// that dies mid-request, malformed and oversized output, timeouts, and the shutdown order (stdin,
// SIGTERM, SIGKILL) with no process left behind.

#include "stdio_connection.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace crank::mcpc {
namespace {

using namespace std::chrono_literals;

constexpr const char* kInitialize =
    R"({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"crank-test","version":"1"}})";

/// True while a process with this pid exists (a zombie counts as existing).
bool processExists(pid_t pid) {
    return std::filesystem::exists("/proc/" + std::to_string(pid));
}

class StdioConnectionTest : public ::testing::Test {
protected:
    std::unique_ptr<StdioConnection> connect(std::vector<std::string> flags = {},
                                             StdioOptions options = {}) {
        options.command = CRANK_NODE_PATH;
        options.args = {CRANK_FIXTURE_SERVER};
        options.args.insert(options.args.end(), flags.begin(), flags.end());
        std::string error;
        auto c = StdioConnection::start(
            options,
            [this](std::string_view m) {
                const std::lock_guard lock(mutex_);
                messages_.emplace_back(m);
            },
            [this](std::string_view line) {
                const std::lock_guard lock(mutex_);
                logs_.emplace_back(line);
            },
            error);
        EXPECT_NE(c, nullptr) << error;
        return c;
    }

    static void initialize(StdioConnection& c) {
        const RpcOutcome init = c.request("initialize", kInitialize, 20s);
        ASSERT_TRUE(init.ok) << init.error_message;
        EXPECT_NE(init.result_json.find("crank-fixture-stdio"), std::string::npos);
        ASSERT_TRUE(c.notify("notifications/initialized", ""));
    }

    static RpcOutcome callTool(StdioConnection& c, const std::string& name,
                               const std::string& arguments,
                               std::chrono::milliseconds timeout = 20s) {
        return c.request("tools/call",
                         R"({"name":")" + name + R"(","arguments":)" + arguments + "}", timeout);
    }

    bool sawLog(const std::string& needle) {
        const std::lock_guard lock(mutex_);
        for (const std::string& l : logs_) {
            if (l.find(needle) != std::string::npos) {
                return true;
            }
        }
        return false;
    }

    std::mutex mutex_;
    std::vector<std::string> messages_;
    std::vector<std::string> logs_;
};

TEST_F(StdioConnectionTest, HandshakeListAndCallAndTheServersStderrIsLogged) {
    auto c = connect();
    ASSERT_NE(c, nullptr);
    initialize(*c);
    const RpcOutcome tools = c->request("tools/list", "{}", 20s);
    ASSERT_TRUE(tools.ok) << tools.error_message;
    EXPECT_NE(tools.result_json.find(R"("name":"echo")"), std::string::npos);
    const RpcOutcome echo = callTool(*c, "echo", R"({"text":"hé \"quoted\""})");
    ASSERT_TRUE(echo.ok) << echo.error_message;
    rapidjson::Document doc;
    doc.Parse(echo.result_json.c_str());
    EXPECT_STREQ(doc["structuredContent"]["text"].GetString(), "hé \"quoted\"");
    // A JSON-RPC error of the server comes back as one.
    const RpcOutcome unknown = c->request("no/such/method", "{}", 20s);
    EXPECT_FALSE(unknown.ok);
    EXPECT_EQ(unknown.error_code, -32601) << unknown.error_message;
    EXPECT_TRUE(sawLog("fixture ready"));
}

TEST_F(StdioConnectionTest, NotificationsDuringACallGoToTheHandler) {
    auto c = connect();
    ASSERT_NE(c, nullptr);
    initialize(*c);
    ASSERT_TRUE(c->request("logging/setLevel", R"({"level":"debug"})", 20s).ok);
    const RpcOutcome r = callTool(*c, "log_then_echo", R"({"text":"x"})");
    ASSERT_TRUE(r.ok) << r.error_message;
    const std::lock_guard lock(mutex_);
    bool logged = false;
    for (const std::string& m : messages_) {
        logged = logged || m.find("about to echo x") != std::string::npos;
    }
    EXPECT_TRUE(logged);
}

TEST_F(StdioConnectionTest, ConcurrentRequestsAreMatchedToTheirAnswers) {
    auto c = connect();
    ASSERT_NE(c, nullptr);
    initialize(*c);
    std::vector<std::thread> threads;
    std::vector<std::string> answers(8);
    for (int i = 0; i < 8; ++i) {
        threads.emplace_back([&, i] {
            // Later requests answer first: the answers arrive out of order.
            const RpcOutcome r =
                callTool(*c, "sleep", R"({"ms":)" + std::to_string(200 - i * 20) + "}");
            answers[static_cast<std::size_t>(i)] = r.ok ? r.result_json : r.error_message;
        });
    }
    for (std::thread& t : threads) {
        t.join();
    }
    for (int i = 0; i < 8; ++i) {
        EXPECT_NE(
            answers[static_cast<std::size_t>(i)].find("slept " + std::to_string(200 - i * 20)),
            std::string::npos)
            << answers[static_cast<std::size_t>(i)];
    }
}

TEST_F(StdioConnectionTest, ATimeoutNamesTheBoundAndTheConnectionGoesOn) {
    auto c = connect();
    ASSERT_NE(c, nullptr);
    initialize(*c);
    const RpcOutcome slow = callTool(*c, "sleep", R"({"ms":2000})", 200ms);
    EXPECT_FALSE(slow.ok);
    EXPECT_NE(slow.error_message.find("did not answer within 200 ms"), std::string::npos)
        << slow.error_message;
    EXPECT_TRUE(callTool(*c, "echo", R"({"text":"still here"})").ok);
}

TEST_F(StdioConnectionTest, AServerThatDiesMidRequestFailsItWithTheReason) {
    auto c = connect();
    ASSERT_NE(c, nullptr);
    initialize(*c);
    const pid_t pid = c->pid();
    const RpcOutcome r = callTool(*c, "exit", R"({"code":3})");
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error_message.find("closed its stdout"), std::string::npos) << r.error_message;
    EXPECT_FALSE(c->open());
    EXPECT_FALSE(c->request("tools/list", "{}", 1s).ok);
    c->close();
    EXPECT_FALSE(processExists(pid)) << "the server was not reaped";
}

TEST_F(StdioConnectionTest, ALineThatIsNotJsonIsLoggedAndSkipped) {
    auto c = connect();
    ASSERT_NE(c, nullptr);
    initialize(*c);
    const RpcOutcome r = callTool(*c, "garbage", "{}");
    ASSERT_TRUE(r.ok) << r.error_message;
    EXPECT_NE(r.result_json.find("after garbage"), std::string::npos);
    EXPECT_TRUE(sawLog("not a JSON-RPC message"));
    EXPECT_TRUE(c->open());
}

TEST_F(StdioConnectionTest, AnOversizedMessageEndsTheConnectionWithTheLimit) {
    StdioOptions options;
    options.max_message_bytes = 64 * 1024;
    auto c = connect({}, options);
    ASSERT_NE(c, nullptr);
    initialize(*c);
    const RpcOutcome r = callTool(*c, "big", R"({"bytes":200000})");
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error_message.find("longer than 65536 bytes"), std::string::npos)
        << r.error_message;
    EXPECT_FALSE(c->open());
}

TEST_F(StdioConnectionTest, ACommandThatCannotRunIsAnErrorThatSaysWhy) {
    StdioOptions options;
    options.command = "/nonexistent/mcp-server";
    std::string error;
    EXPECT_EQ(StdioConnection::start(options, nullptr, nullptr, error), nullptr);
    EXPECT_NE(error.find("cannot run \"/nonexistent/mcp-server\": No such file or directory"),
              std::string::npos)
        << error;
    options.command = "definitely-not-a-command-crank";
    EXPECT_EQ(StdioConnection::start(options, nullptr, nullptr, error), nullptr);
    EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
}

TEST_F(StdioConnectionTest, ShutdownClosesStdinFirstThenTermThenKillAndReaps) {
    StdioOptions quick;
    quick.close_wait = 300ms;
    quick.term_wait = 300ms;
    // A well-behaved server exits when its stdin closes: within a close wait long enough for a
    // loaded machine (300 ms was not, under the sanitizer suites), so ending before it means no
    // signal was sent.
    {
        StdioOptions patient = quick;
        patient.close_wait = 10s;
        auto c = connect({}, patient);
        ASSERT_NE(c, nullptr);
        initialize(*c);
        const pid_t pid = c->pid();
        const auto t0 = std::chrono::steady_clock::now();
        c->close();
        EXPECT_LT(std::chrono::steady_clock::now() - t0, patient.close_wait)
            << "it needed a signal";
        EXPECT_FALSE(processExists(pid));
    }
    // One that ignores EOF gets SIGTERM.
    {
        auto c = connect({"--ignore-stdin-close"}, quick);
        ASSERT_NE(c, nullptr);
        initialize(*c);
        const pid_t pid = c->pid();
        c->close();
        EXPECT_FALSE(processExists(pid));
    }
    // One that ignores SIGTERM too gets SIGKILL, after both waits.
    {
        auto c = connect({"--ignore-stdin-close", "--ignore-sigterm"}, quick);
        ASSERT_NE(c, nullptr);
        initialize(*c);
        const pid_t pid = c->pid();
        const auto t0 = std::chrono::steady_clock::now();
        c->close();
        EXPECT_GE(std::chrono::steady_clock::now() - t0, 600ms);
        EXPECT_FALSE(processExists(pid));
    }
}

}  // namespace
}  // namespace crank::mcpc
