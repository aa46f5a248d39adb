// The MCP lifecycle over the stdio transport (plugins/mcp UpstreamSession) against the fixture
// server written with the official TypeScript SDK: the handshake and the status it leaves, paged
// tools/list, the test connection, reconnecting after the server died, and the backoff after a
// failed connect.

#include "upstream_session.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace crank::mcpc {
namespace {

using namespace std::chrono_literals;

StdioOptions fixtureStdio() {
    StdioOptions o;
    o.command = CRANK_NODE_PATH;
    o.args = {CRANK_FIXTURE_SERVER};
    o.close_wait = 500ms;
    o.term_wait = 500ms;
    return o;
}

UpstreamOptions fixture(StdioOptions stdio = fixtureStdio()) {
    UpstreamOptions o;
    o.transport = stdioTransport(std::move(stdio));
    o.request_timeout = 20s;
    o.initialize_timeout = 20s;
    return o;
}

TEST(UpstreamSession, ConnectsLazilyAndReportsWhatItNegotiated) {
    UpstreamSession s(fixture(), nullptr, nullptr);
    EXPECT_FALSE(s.status().connected);
    std::vector<std::string> tools;
    const RpcOutcome listed = s.listTools(tools);
    ASSERT_TRUE(listed.ok) << listed.error_message;
    EXPECT_EQ(tools.size(), 6U);
    EXPECT_NE(tools.front().find(R"("inputSchema")"), std::string::npos);
    const UpstreamStatus st = s.status();
    EXPECT_TRUE(st.connected);
    EXPECT_GT(st.connected_since_ms, 0);
    EXPECT_GE(st.last_used_ms, st.connected_since_ms);
    EXPECT_EQ(st.protocol_version, "2025-11-25");
    EXPECT_EQ(st.server_name, "crank-fixture-stdio");
    EXPECT_EQ(st.server_version, "1.0.0");
    EXPECT_EQ(st.reconnects, 0);
}

TEST(UpstreamSession, TheTestConnectionInitializesPingsAndLeavesNothingRunning) {
    const RpcOutcome ok = UpstreamSession::test(fixture());
    EXPECT_TRUE(ok.ok) << ok.error_message;
    StdioOptions missing = fixtureStdio();
    missing.command = "/nonexistent/server";
    const UpstreamOptions broken = fixture(missing);
    const RpcOutcome failed = UpstreamSession::test(broken);
    EXPECT_FALSE(failed.ok);
    EXPECT_NE(failed.error_message.find("cannot run"), std::string::npos) << failed.error_message;
}

TEST(UpstreamSession, AServerThatDiedIsReconnectedOnTheNextRequest) {
    UpstreamSession s(fixture(), nullptr, nullptr);
    ASSERT_TRUE(s.connect()) << s.status().last_error;
    // The call that kills it fails (and is not sent again: it may have had effects).
    const RpcOutcome killed = s.request("tools/call", R"({"name":"exit","arguments":{"code":1}})");
    EXPECT_FALSE(killed.ok);
    EXPECT_FALSE(s.status().connected);
    EXPECT_NE(s.status().last_error.find("tools/call"), std::string::npos);
    const RpcOutcome again =
        s.request("tools/call", R"({"name":"echo","arguments":{"text":"back"}})");
    ASSERT_TRUE(again.ok) << again.error_message;
    EXPECT_TRUE(s.status().connected);
    EXPECT_EQ(s.status().reconnects, 1);
}

TEST(UpstreamSession, AFailedConnectBacksOffAndSaysWhen) {
    StdioOptions missing = fixtureStdio();
    missing.command = "/nonexistent/server";
    UpstreamOptions o = fixture(missing);
    o.backoff_initial = 500ms;
    UpstreamSession s(o, nullptr, nullptr);
    EXPECT_FALSE(s.connect());
    EXPECT_NE(s.status().last_error.find("cannot run"), std::string::npos);
    // Within the backoff: refused at once, without a new attempt.
    const auto t0 = std::chrono::steady_clock::now();
    const RpcOutcome r = s.request("ping", "");
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error_message.find("next attempt in"), std::string::npos) << r.error_message;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 100ms);
    std::this_thread::sleep_for(600ms);
    EXPECT_FALSE(s.connect());  // tried again (and failed again): the backoff doubles
    EXPECT_EQ(s.status().last_error.find("next attempt in"), std::string::npos);
}

TEST(UpstreamSession, AServerSpeakingAnotherVersionIsRefusedByName) {
    UpstreamOptions o = fixture();
    o.protocol_versions = {"2099-01-01"};  // the SDK answers with its own latest instead
    UpstreamSession s(o, nullptr, nullptr);
    EXPECT_FALSE(s.connect());
    EXPECT_NE(s.status().last_error.find("which is not one crank speaks (2099-01-01)"),
              std::string::npos)
        << s.status().last_error;
}

}  // namespace
}  // namespace crank::mcpc
