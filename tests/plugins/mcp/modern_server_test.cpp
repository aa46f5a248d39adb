// crank's MCP client against a 2026-07-28 server written with the official TypeScript SDK v2
// (tests/e2e/modern-server.mjs: createMcpHandler over HTTP, serveStdio over stdio), dual-era and
// modern-only: the era auto-detection, a tool call, and a multi-round-trip tool whose
// elicitation is answered and whose requestState comes back as the server minted it; and a
// strict 2025 stdio server that exits on the era probe (tests/e2e/fixture-strict-stdio-server.mjs).
#include <atomic>
#include <chrono>
#include <csignal>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "child_process.h"
#include "http_connection.h"
#include "upstream_session.h"

namespace crank::mcpc {
namespace {

using namespace std::chrono_literals;

/// tests/e2e/modern-server.mjs over HTTP, stopped by pid (SIGKILL) when destroyed.
class ModernServer {
public:
    explicit ModernServer(bool modern_only)
        : process_(modern_only ? std::vector<std::string>{CRANK_NODE_PATH, CRANK_MODERN_SERVER,
                                                          "http", "0", "--modern-only"}
                               : std::vector<std::string>{CRANK_NODE_PATH, CRANK_MODERN_SERVER,
                                                          "http", "0"}) {
        if (const auto line = process_.waitForStderrLine("listening http://", 20s)) {
            url_ = line->substr(line->find("http://"));
        }
    }
    ~ModernServer() {
        process_.signal(SIGKILL);
        process_.waitForExit(5s);
    }
    ModernServer(const ModernServer&) = delete;
    ModernServer& operator=(const ModernServer&) = delete;
    const std::string& url() const { return url_; }

private:
    testing::ChildProcess process_;
    std::string url_;
};

UpstreamOptions overHttp(const std::string& url, const std::string& protocol_version = "auto") {
    HttpOptions http;
    http.url = url;
    http.connect_timeout = 5s;
    UpstreamOptions o;
    o.transport = httpTransport(http);
    o.request_timeout = 20s;
    o.initialize_timeout = 20s;
    o.protocol_version = protocol_version;
    return o;
}

UpstreamOptions overStdio(bool modern_only) {
    StdioOptions stdio;
    stdio.command = CRANK_NODE_PATH;
    stdio.args = {CRANK_MODERN_SERVER, "stdio"};
    if (modern_only) {
        stdio.args.emplace_back("--modern-only");
    }
    UpstreamOptions o;
    o.transport = stdioTransport(stdio);
    o.request_timeout = 20s;
    o.initialize_timeout = 20s;
    return o;
}

/// The hooks of a caller that can answer elicitations: declared, and answered with "crank".
RequestHooks elicitingCaller(int& asked) {
    RequestHooks hooks;
    hooks.client_capabilities_json = R"({"elicitation":{"form":{}}})";
    hooks.answer_inputs = [&asked](const std::string& requests) -> std::optional<std::string> {
        ++asked;
        if (requests.find("elicitation/create") == std::string::npos) {
            return std::nullopt;
        }
        return std::string(R"({"name":{"action":"accept","content":{"name":"crank"}}})");
    };
    return hooks;
}

TEST(ModernServer, ADualEraServerIsSpokenToIn2026AndItsMultiRoundTripToolCompletes) {
    ModernServer server(false);
    ASSERT_FALSE(server.url().empty());
    UpstreamSession s(overHttp(server.url()), nullptr, nullptr);
    ASSERT_TRUE(s.connect()) << s.status().last_error;
    const UpstreamStatus status = s.status();
    EXPECT_EQ(status.protocol_version, "2026-07-28");
    EXPECT_EQ(status.server_name, "crank-modern-fixture");
    EXPECT_EQ(status.instructions, "a modern fixture");
    const RpcOutcome echoed =
        s.request("tools/call", R"({"name":"echo","arguments":{"text":"hi"}})");
    ASSERT_TRUE(echoed.ok) << echoed.error_message;
    EXPECT_NE(echoed.result_json.find(R"("text":"hi")"), std::string::npos) << echoed.result_json;
    int asked = 0;
    const RpcOutcome greeted =
        s.request("tools/call", R"({"name":"ask_name","arguments":{}})", elicitingCaller(asked));
    ASSERT_TRUE(greeted.ok) << greeted.error_message;
    EXPECT_NE(greeted.result_json.find("hello crank"), std::string::npos) << greeted.result_json;
    EXPECT_EQ(asked, 1);
    // A caller that declares no elicitation gets the server's refusal, not a question.
    const RpcOutcome undeclared = s.request("tools/call", R"({"name":"ask_name","arguments":{}})");
    EXPECT_FALSE(undeclared.ok);
    EXPECT_EQ(undeclared.error_code, -32021) << undeclared.error_message;
}

TEST(ModernServer, AListenOverHttpHearsTheToolChangesOfTheServer) {
    ModernServer server(true);
    ASSERT_FALSE(server.url().empty());
    std::mutex mutex;
    std::vector<std::string> heard;
    UpstreamSession s(
        overHttp(server.url()),
        [&](std::string_view message) {
            const std::lock_guard lock(mutex);
            heard.emplace_back(message);
        },
        nullptr);
    ASSERT_TRUE(s.connect()) << s.status().last_error;
    std::atomic<bool> stop{false};
    std::atomic<std::int64_t> listen_id{-1};
    RpcOutcome listened;
    std::thread listen([&] {
        RequestHooks hooks;
        hooks.cancelled = [&] { return stop.load(); };
        hooks.on_id = [&](std::int64_t id) { listen_id = id; };
        listened = s.request("subscriptions/listen",
                             R"({"notifications":{"toolsListChanged":true}})", hooks, 20s);
    });
    const auto saw = [&](const std::string& what) {
        const std::lock_guard lock(mutex);
        for (const std::string& m : heard) {
            if (m.find(what) != std::string::npos) {
                return true;
            }
        }
        return false;
    };
    for (int i = 0; i < 250 && !saw("notifications/subscriptions/acknowledged"); ++i) {
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(saw("notifications/subscriptions/acknowledged"));
    const RpcOutcome added =
        s.request("tools/call", R"({"name":"add_tool","arguments":{"name":"zz"}})");
    EXPECT_TRUE(added.ok) << added.error_message;
    for (int i = 0; i < 250 && !saw("notifications/tools/list_changed"); ++i) {
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(saw("notifications/tools/list_changed"));
    // Stamped with the listen's own id.
    EXPECT_TRUE(
        saw(R"("io.modelcontextprotocol/subscriptionId":)" + std::to_string(listen_id.load())));
    stop = true;
    listen.join();
    EXPECT_TRUE(listened.cancelled) << listened.error_message;
}

TEST(ModernServer, AModernOnlyServerIsReachedByAutoAndRefusesAPinned2025Version) {
    ModernServer server(true);
    ASSERT_FALSE(server.url().empty());
    UpstreamSession modern(overHttp(server.url()), nullptr, nullptr);
    ASSERT_TRUE(modern.connect()) << modern.status().last_error;
    EXPECT_EQ(modern.status().protocol_version, "2026-07-28");
    UpstreamSession pinned(overHttp(server.url(), "2025-11-25"), nullptr, nullptr);
    EXPECT_FALSE(pinned.connect());
    EXPECT_NE(pinned.status().last_error.find("initialize failed"), std::string::npos)
        << pinned.status().last_error;
}

TEST(ModernServer, OverStdioTheEraIsProbedWithDiscoverAndAPinned2025VersionIsInitialized) {
    for (const bool modern_only : {false, true}) {
        UpstreamSession s(overStdio(modern_only), nullptr, nullptr);
        ASSERT_TRUE(s.connect()) << s.status().last_error;
        EXPECT_EQ(s.status().protocol_version, "2026-07-28");
        EXPECT_EQ(s.status().transport, "stdio");
        int asked = 0;
        const RpcOutcome greeted = s.request("tools/call", R"({"name":"ask_name","arguments":{}})",
                                             elicitingCaller(asked));
        ASSERT_TRUE(greeted.ok) << greeted.error_message;
        EXPECT_NE(greeted.result_json.find("hello crank"), std::string::npos);
        s.close();
    }
    UpstreamOptions pinned = overStdio(false);
    pinned.protocol_version = "2025-11-25";
    UpstreamSession legacy(pinned, nullptr, nullptr);
    ASSERT_TRUE(legacy.connect()) << legacy.status().last_error;
    EXPECT_EQ(legacy.status().protocol_version, "2025-11-25");
    const RpcOutcome echoed =
        legacy.request("tools/call", R"({"name":"echo","arguments":{"text":"x"}})");
    ASSERT_TRUE(echoed.ok) << echoed.error_message;
    legacy.close();
}

TEST(ModernServer, AStdioServerThatExitsOnTheProbeIsStartedAgainAndInitialized) {
    StdioOptions stdio;
    stdio.command = CRANK_NODE_PATH;
    stdio.args = {CRANK_STRICT_STDIO_SERVER};
    UpstreamOptions o;
    o.transport = stdioTransport(stdio);
    o.initialize_timeout = 20s;
    UpstreamSession s(o, nullptr, nullptr);
    ASSERT_TRUE(s.connect()) << s.status().last_error;
    EXPECT_EQ(s.status().protocol_version, "2025-11-25");
    EXPECT_EQ(s.status().server_name, "strict");
    const RpcOutcome echoed =
        s.request("tools/call", R"({"name":"echo","arguments":{"text":"ok"}})");
    ASSERT_TRUE(echoed.ok) << echoed.error_message;
    EXPECT_NE(echoed.result_json.find(R"("text":"ok")"), std::string::npos);
    s.close();
}

}  // namespace
}  // namespace crank::mcpc
