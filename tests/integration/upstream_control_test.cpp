// The operator's controls over federated upstreams while crankd runs (issue 29): stop, start and
// restart through the admin API. A stop ends the calls in flight after its grace with an error
// that names the upstream, leaves no process behind (checked in /proc), takes the upstream's
// tools out of the workspace (a listening client gets list_changed) and leaves the other
// upstreams serving; a start publishes them again; every control is audited.
//
// One crankd, the real mcp plugin, two copies of the fixture server
// (tests/e2e/reference-server.mjs --stdio), each with a marker argument that finds its process.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "crankd_suite.h"
#include "mcp_http_client.h"
#include "proc_stats.h"
#include "test_json.h"

namespace crank::testing {
namespace {

/// How long a process or a tool list is given to settle after a change.
constexpr std::chrono::seconds kSettle{10};

/// A marker that no other process on the machine carries: this test process's pid in it.
std::string marker(const std::string& name) {
    return "crank-control-" + name + "-" + std::to_string(::getpid());
}

/// An upstream entry running the fixture over stdio, marked.
std::string fixtureUpstream(const std::string& name) {
    return R"({"name": ")" + name +
           R"(", "config": {"command": ")" CRANK_NODE_PATH R"(", "args": [")" CRANK_FIXTURE_SERVER
           R"(", "--stdio", ")" +
           marker(name) + R"("], "close_wait_ms": 500, "term_wait_ms": 500}})";
}

class UpstreamControlSuite : public CrankdSuite<UpstreamControlSuite> {
protected:
    static constexpr const char* kAdminToken = "control-admin-token-8dQ2";

    static void SetUpTestSuite() {
        startCrankd(R"("admin": {"token": {"env": "CRANK_CONTROL_ADMIN_TOKEN"}}, "upstreams": [)" +
                        fixtureUpstream("alpha") + ", " + fixtureUpstream("beta") + "]",
                    {{"CRANK_CONTROL_ADMIN_TOKEN", kAdminToken}});
        bool ready = false;
        for (int i = 0; i < 300 && !ready; ++i) {
            ready = exchange(port_, "GET", "/readyz", {}).status == 200;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        ASSERT_TRUE(ready) << process_->stderrText();
    }

    static Reply admin(const std::string& method, const std::string& path) {
        return exchange(port_, method, "/admin/api/" + path,
                        {{"Authorization", std::string("Bearer ") + kAdminToken}});
    }

    static bool listed(const McpClient& client, const std::string& name) {
        return client.lists(name);
    }
};

TEST_F(UpstreamControlSuite, AStopEndsTheCallInFlightWithANamedErrorAndLeavesNoProcess) {
    ASSERT_TRUE(eventually([] { return processesWith(marker("alpha")) == 1; }, kSettle))
        << processesWith(marker("alpha"));
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    ASSERT_TRUE(listed(client, "alpha_echo"));
    // A client that listens on its GET stream for list changes.
    SseReader listener(port_, "GET",
                       {{"Accept", "text/event-stream"},
                        {"Mcp-Session-Id", client.session()},
                        {"MCP-Protocol-Version", "2025-11-25"}});
    ASSERT_NE(listener.head().find(" 200 "), std::string::npos) << listener.head();

    // A call of 10 s; the stop gives it 300 ms.
    auto slow = std::async(std::launch::async, [] {
        McpClient caller(port_);
        EXPECT_TRUE(caller.open());
        return caller.post(
            R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha_slow_progress",)"
            R"("arguments":{"steps":100,"delay_ms":100}}})");
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto started = std::chrono::steady_clock::now();
    const Reply stopped = admin("POST", "upstreams/alpha/stop?grace_ms=300");
    ASSERT_EQ(stopped.status, 200) << stopped.body;
    EXPECT_STREQ(stopped.json()["upstream"]["state"].GetString(), "stopped") << stopped.body;
    EXPECT_EQ(stopped.json()["upstream"]["tools"].GetInt(), 0) << stopped.body;
    const Reply call = slow.get();
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(8));
    EXPECT_NE(call.body.find("upstream alpha was stopped while the request ran"), std::string::npos)
        << call.body;

    // No process left; the tools gone, the listener told; the other upstream untouched.
    EXPECT_TRUE(eventually([] { return processesWith(marker("alpha")) == 0; }, kSettle));
    EXPECT_EQ(processesWith(marker("beta")), 1);
    EXPECT_FALSE(listed(client, "alpha_echo"));
    EXPECT_STREQ(
        client.callTool("beta_echo", R"({"text":"still"})")["content"][0]["text"].GetString(),
        "still");
    listener.setReceiveTimeout(std::chrono::milliseconds(5000));
    EXPECT_TRUE(listener.waitFor("notifications/tools/list_changed"))
        << "no notifications/tools/list_changed on the listening stream";
    const Reply unknown = client.post(
        R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"x"}}})");
    EXPECT_NE(unknown.body.find("alpha_echo"), std::string::npos) << unknown.body;
    EXPECT_EQ(unknown.body.find(R"("content")"), std::string::npos) << unknown.body;

    // An ad-hoc call of a stopped upstream is refused, naming why.
    const Reply stoppedCall = exchange(port_, "POST", "/admin/api/upstreams/alpha/call",
                                       {{"Authorization", std::string("Bearer ") + kAdminToken},
                                        {"Content-Type", "application/json"}},
                                       R"({"tool": "echo", "arguments": {"text": "x"}})");
    EXPECT_EQ(stoppedCall.status, 503) << stoppedCall.body;
    EXPECT_NE(stoppedCall.body.find("upstream alpha is stopped"), std::string::npos)
        << stoppedCall.body;

    // Stopping it again does nothing; starting it publishes its tools again.
    EXPECT_EQ(admin("POST", "upstreams/alpha/stop").status, 200);
    const Reply restarted = admin("POST", "upstreams/alpha/start");
    ASSERT_EQ(restarted.status, 200) << restarted.body;
    EXPECT_STREQ(restarted.json()["upstream"]["state"].GetString(), "open") << restarted.body;
    ASSERT_TRUE(eventually([&] { return listed(client, "alpha_echo"); }, kSettle));
    EXPECT_STREQ(
        client.callTool("alpha_echo", R"({"text":"back"})")["content"][0]["text"].GetString(),
        "back");
    EXPECT_EQ(processesWith(marker("alpha")), 1);

    // Every control is audited with its outcome.
    const Reply audit = admin("GET", "audit?action=upstream.stop");
    ASSERT_EQ(audit.status, 200) << audit.body;
    EXPECT_NE(audit.body.find(R"("operation_id":"alpha")"), std::string::npos) << audit.body;
    EXPECT_NE(admin("GET", "audit?action=upstream.start").body.find(R"("outcome":"ok")"),
              std::string::npos);
}

TEST_F(UpstreamControlSuite, ARestartReplacesTheProcessAndKeepsTheTools) {
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    ASSERT_TRUE(eventually([&] { return listed(client, "beta_echo"); }, kSettle));
    ASSERT_TRUE(eventually([] { return processesWith(marker("beta")) == 1; }, kSettle));
    const Reply restarted = admin("POST", "upstreams/beta/restart");
    ASSERT_EQ(restarted.status, 200) << restarted.body;
    EXPECT_STREQ(restarted.json()["upstream"]["state"].GetString(), "open") << restarted.body;
    ASSERT_TRUE(eventually([&] { return listed(client, "beta_echo"); }, kSettle));
    EXPECT_STREQ(
        client.callTool("beta_echo", R"({"text":"again"})")["content"][0]["text"].GetString(),
        "again");
    // The old process ended, one new one runs.
    EXPECT_TRUE(eventually([] { return processesWith(marker("beta")) == 1; }, kSettle));
}

TEST_F(UpstreamControlSuite, AnUpstreamsListsAreShownAsItListsThemPageByPage) {
    const Reply first = admin("GET", "upstreams/beta/tools?limit=2");
    ASSERT_EQ(first.status, 200) << first.body;
    const rapidjson::Document page = first.json();
    ASSERT_EQ(page["tools"].Size(), 2U) << first.body;
    EXPECT_GT(page["total"].GetInt(), 2);
    EXPECT_EQ(page["next_offset"].GetInt(), 2);
    EXPECT_TRUE(page["tools"][0]["definition"].IsObject()) << first.body;

    const Reply all = admin("GET", "upstreams/beta/tools?limit=1000");
    ASSERT_EQ(all.status, 200) << all.body;
    const rapidjson::Document tools = all.json();
    EXPECT_TRUE(tools["next_offset"].IsNull());
    bool echo = false;
    for (const auto& tool : tools["tools"].GetArray()) {
        if (std::string(tool["name"].GetString()) == "echo") {
            echo = true;
            EXPECT_STREQ(tool["published_as"].GetString(), "beta_echo") << all.body;
            EXPECT_STREQ(tool["definition"]["name"].GetString(), "echo");  // as it lists it
        }
    }
    EXPECT_TRUE(echo) << all.body;
    const Reply second = admin("GET", "upstreams/beta/tools?limit=2&offset=2");
    ASSERT_EQ(second.status, 200) << second.body;
    EXPECT_STREQ(second.json()["tools"][0]["name"].GetString(),
                 tools["tools"][2]["name"].GetString());

    const Reply resources = admin("GET", "upstreams/beta/resources");
    ASSERT_EQ(resources.status, 200) << resources.body;
    EXPECT_TRUE(resources.json()["resources"].IsArray()) << resources.body;
    EXPECT_EQ(admin("GET", "upstreams/beta/prompts").status, 200);
    EXPECT_EQ(admin("GET", "upstreams/beta/resource_templates").status, 200);
    EXPECT_EQ(admin("GET", "upstreams/nope/tools").status, 404);
    EXPECT_EQ(admin("GET", "upstreams/beta/tools?offset=-1").status, 400);
    EXPECT_EQ(admin("GET", "upstreams/beta/tools?limit=0").status, 400);
}

TEST_F(UpstreamControlSuite, AnAdHocCallRunsAToolOfTheUpstreamAndIsAudited) {
    const auto call = [](const std::string& upstream, const std::string& body) {
        return exchange(port_, "POST", "/admin/api/upstreams/" + upstream + "/call",
                        {{"Authorization", std::string("Bearer ") + kAdminToken},
                         {"Content-Type", "application/json"}},
                        body);
    };
    const Reply ran = call("beta", R"({"tool": "echo", "arguments": {"text": "adhoc"}})");
    ASSERT_EQ(ran.status, 200) << ran.body;
    const rapidjson::Document doc = ran.json();
    EXPECT_TRUE(doc["call"]["ok"].GetBool()) << ran.body;
    EXPECT_GE(doc["call"]["elapsed_ms"].GetInt64(), 0);
    EXPECT_STREQ(doc["call"]["result"]["content"][0]["text"].GetString(), "adhoc");
    // The upstream's error, as it is.
    const Reply failed = call("beta", R"({"tool": "echo", "arguments": {"text": 5}})");
    ASSERT_EQ(failed.status, 200) << failed.body;
    EXPECT_NE(failed.body.find("text"), std::string::npos) << failed.body;

    EXPECT_EQ(call("beta", R"({"tool": "no_such_tool"})").status, 404);
    EXPECT_EQ(call("nope", R"({"tool": "echo"})").status, 404);
    const Reply nameless = call("beta", R"({"arguments": {}})");
    EXPECT_EQ(nameless.status, 422) << nameless.body;
    EXPECT_EQ(call("beta", R"({"tool": "echo", "arguments": [1]})").status, 422);
    EXPECT_EQ(call("beta", "not json").status, 400);
    const Reply audit = admin("GET", "audit?action=upstream.call");
    EXPECT_NE(
        audit.body.find(
            R"("action":"upstream.call","outcome":"ok","detail":{"upstream":"beta","tool":"echo"})"),
        std::string::npos)
        << audit.body;
}

TEST_F(UpstreamControlSuite, TheStatusShowsTheConnectionsEraServerAndInstructions) {
    ASSERT_TRUE(eventually(
        [] {
            const Reply r = admin("GET", "upstreams/beta");
            return r.status == 200 && r.body.find(R"("connected":true)") != std::string::npos;
        },
        kSettle));
    const Reply beta = admin("GET", "upstreams/beta");
    const rapidjson::Document doc = beta.json();
    const auto& connection = doc["upstream"]["connection"];
    EXPECT_STREQ(connection["era"].GetString(), "2025") << beta.body;
    EXPECT_STREQ(connection["protocol_version"].GetString(), "2025-11-25") << beta.body;
    EXPECT_TRUE(connection["instructions"].IsString()) << beta.body;
    ASSERT_TRUE(connection["capabilities"].IsObject()) << beta.body;
    EXPECT_TRUE(connection["capabilities"].HasMember("tools")) << beta.body;
}

TEST_F(UpstreamControlSuite, BadControlsGetErrorsThatNameTheProblem) {
    const Reply none = admin("POST", "upstreams/nope/stop");
    EXPECT_EQ(none.status, 404) << none.body;
    EXPECT_NE(none.body.find(R"(no upstream \"nope\")"), std::string::npos) << none.body;
    const Reply negative = admin("POST", "upstreams/beta/stop?grace_ms=-1");
    EXPECT_EQ(negative.status, 400) << negative.body;
    EXPECT_NE(negative.body.find("grace_ms"), std::string::npos) << negative.body;
    const Reply word = admin("POST", "upstreams/beta/stop?grace_ms=soon");
    EXPECT_EQ(word.status, 400) << word.body;
    EXPECT_EQ(admin("GET", "upstreams/beta/stop").status, 405);
    const Reply anonymous = exchange(port_, "POST", "/admin/api/upstreams/beta/stop", {});
    EXPECT_EQ(anonymous.status, 401) << anonymous.body;
    // Nothing of that stopped beta.
    const Reply beta = admin("GET", "upstreams/beta");
    ASSERT_EQ(beta.status, 200) << beta.body;
    EXPECT_STREQ(beta.json()["upstream"]["state"].GetString(), "open") << beta.body;
}

}  // namespace
}  // namespace crank::testing
