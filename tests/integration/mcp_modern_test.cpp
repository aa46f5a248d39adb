// MCP 2026-07-28 on the same endpoint as the 2025 era, over raw HTTP against crankd-test-tools:
// stateless requests with their _meta and routing headers, server/discover, the envelope errors
// with their HTTP statuses, the members every result carries, and the 2025 era untouched beside.

#include <signal.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "mcp_http_client.h"
#include "modern_fixture.h"
#include "proc_stats.h"

namespace {

using crank::testing::exchange;
using crank::testing::Headers;
using crank::testing::kAccept;
using crank::testing::kKey;
using crank::testing::kServerInfo;
using crank::testing::kVersion;
using crank::testing::meta;
using crank::testing::Reply;
using crank::testing::request;
using crank::testing::SseReader;
using namespace std::chrono_literals;

class McpModernTest : public crank::testing::ModernCrankdTest {};

TEST_F(McpModernTest, DiscoverNamesTheEraAndTheServer) {
    startCrankd();
    const Reply reply = post(request(1, "server/discover"), "server/discover");
    ASSERT_EQ(reply.status, 200) << reply.body;
    EXPECT_EQ(reply.header("content-type"), "application/json");
    EXPECT_EQ(reply.header("mcp-session-id"), "");
    const auto doc = reply.json();
    const auto& result = doc["result"];
    EXPECT_STREQ(result["resultType"].GetString(), "complete");
    ASSERT_EQ(result["supportedVersions"].Size(), 1U);
    EXPECT_STREQ(result["supportedVersions"][0].GetString(), kVersion);
    EXPECT_TRUE(result["capabilities"]["tools"]["listChanged"].GetBool());
    EXPECT_FALSE(result["capabilities"].HasMember("tasks"));
    EXPECT_EQ(result["ttlMs"].GetInt64(), 30000);
    EXPECT_STREQ(result["cacheScope"].GetString(), "public");
    EXPECT_STREQ(result["_meta"][kServerInfo]["name"].GetString(), "crank");
}

TEST_F(McpModernTest, ListsAndCallsAreStatelessAndComplete) {
    startCrankd(R"(, "mcp": {"list_ttl_ms": 1234})");
    const Reply list = post(request(2, "tools/list"), "tools/list");
    ASSERT_EQ(list.status, 200) << list.body;
    const auto listed = list.json();
    EXPECT_STREQ(listed["result"]["resultType"].GetString(), "complete");
    EXPECT_EQ(listed["result"]["ttlMs"].GetInt64(), 1234);
    EXPECT_STREQ(listed["result"]["cacheScope"].GetString(), "public");
    EXPECT_GE(listed["result"]["tools"].Size(), 3U);

    const Reply call = post(request(3, "tools/call", R"("name":"echo","arguments":{"text":"hi"})"),
                            "tools/call", {{"Mcp-Name", "echo"}});
    ASSERT_EQ(call.status, 200) << call.body;
    const auto called = call.json();
    EXPECT_EQ(called["id"].GetInt(), 3);
    EXPECT_STREQ(called["result"]["resultType"].GetString(), "complete");
    EXPECT_STREQ(called["result"]["content"][0]["text"].GetString(), "hi");
    EXPECT_STREQ(called["result"]["_meta"][kServerInfo]["name"].GetString(), "crank");
    EXPECT_FALSE(called["result"].HasMember("ttlMs"));  // a call is not cacheable

    // A notification is accepted with an empty body.
    const Reply note =
        post(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,)" +
                 meta() + "}}",
             "notifications/cancelled");
    EXPECT_EQ(note.status, 202);
    EXPECT_EQ(note.body, "");
}

TEST_F(McpModernTest, EnvelopeErrorsCarryTheirStatusAndTheId) {
    startCrankd();
    // A required _meta key missing: 400 + -32602.
    expectError(post(request(10, "tools/list", "",
                             R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"})"),
                     "tools/list"),
                400, -32602, 10);
    expectError(post(request(11, "tools/list", "", ""), "tools/list"), 400, -32602, 11);
    // Header and body disagree: 400 + -32020.
    expectError(post(request(12, "tools/list", "", meta("2099-01-01")), "tools/list"), 400, -32020,
                12);
    // An unsupported version in both: 400 + -32022 naming the supported ones.
    const Reply unsupported =
        post(request(13, "tools/list", "", meta("v999.0.0")), "tools/list", {}, "v999.0.0");
    expectError(unsupported, 400, -32022, 13);
    const auto data = unsupported.json();
    EXPECT_STREQ(data["error"]["data"]["supported"][0].GetString(), kVersion);
    EXPECT_STREQ(data["error"]["data"]["requested"].GetString(), "v999.0.0");
    // Removed and unknown methods: 404 + -32601.
    for (const char* method : {"initialize", "ping", "logging/setLevel", "resources/subscribe",
                               "resources/unsubscribe", "unknown/method", "tasks/result"}) {
        SCOPED_TRACE(method);
        expectError(post(request(14, method), method), 404, -32601, 14);
    }
    // Task methods need the extension declared on the request: 400 + -32021.
    const Reply task =
        post(request(15, "tasks/get", R"("taskId":"t")"), "tasks/get", {{"Mcp-Name", "t"}});
    expectError(task, 400, -32021, 15);
    EXPECT_TRUE(task.json()["error"]["data"]["requiredCapabilities"]["extensions"].HasMember(
        "io.modelcontextprotocol/tasks"));
    // A bad logLevel: -32602.
    const std::string badLevel = R"("_meta":{"io.modelcontextprotocol/protocolVersion":)"
                                 R"("2026-07-28","io.modelcontextprotocol/clientCapabilities":{},)"
                                 R"("io.modelcontextprotocol/logLevel":"loud"})";
    expectError(post(request(16, "tools/list", "", badLevel), "tools/list"), 200, -32602, 16);
}

TEST_F(McpModernTest, RoutingHeadersMustAgreeWithTheBody) {
    startCrankd();
    const std::string echo = request(20, "tools/call", R"("name":"echo","arguments":{"text":"x"})");
    expectError(post(request(20, "tools/list"), ""), 400, -32020, 20);            // no Mcp-Method
    expectError(post(request(20, "tools/list"), "TOOLS/LIST"), 400, -32020, 20);  // its case
    expectError(post(echo, "tools/call"), 400, -32020, 20);                       // no Mcp-Name
    expectError(post(echo, "tools/call", {{"Mcp-Name", "wrong_tool_name"}}), 400, -32020, 20);
    EXPECT_EQ(post(echo, "tools/call", {{"mcp-name", "  echo "}}).status, 200);
    EXPECT_EQ(post(echo, "tools/call", {{"Mcp-Name", "=?base64?ZWNobw==?="}}).status, 200);
    // Read as a proxy following the specification reads them (issue 45): the base64 prefix in
    // lower case only, Mcp-Method never encoded, MCP-Protocol-Version once.
    expectError(post(echo, "tools/call", {{"Mcp-Name", "=?BASE64?ZWNobw==?="}}), 400, -32020, 20);
    expectError(post(request(20, "tools/list"), "=?base64?dG9vbHMvbGlzdA==?="), 400, -32020, 20);
    const Reply twice =
        post(request(20, "tools/list"), "tools/list", {{"MCP-Protocol-Version", "2025-11-25"}});
    EXPECT_EQ(twice.status, 400) << twice.body;
    EXPECT_NE(twice.body.find("MCP-Protocol-Version is sent 2 times"), std::string::npos)
        << twice.body;

    // Mcp-Param-* of x-mcp-header properties carry their arguments.
    const std::string routed = request(
        21, "tools/call", R"("name":"route_echo","arguments":{"region":"eu","priority":7})");
    const Reply ok = post(routed, "tools/call",
                          {{"Mcp-Name", "route_echo"},
                           {"Mcp-Param-Region", "=?base64?ZXU=?="},
                           {"mcp-param-priority", "7"}});
    ASSERT_EQ(ok.status, 200) << ok.body;
    EXPECT_STREQ(ok.json()["result"]["content"][0]["text"].GetString(), "eu/7");
    for (const Headers& params : std::vector<Headers>{
             {{"Mcp-Param-Priority", "7"}},
             {{"Mcp-Param-Region", "us"}, {"Mcp-Param-Priority", "7"}},
             {{"Mcp-Param-Region", "eu"}, {"Mcp-Param-Priority", "8"}},
             {{"Mcp-Param-Region", "=?base64?ZXU?="}, {"Mcp-Param-Priority", "7"}}}) {
        Headers headers{{"Mcp-Name", "route_echo"}};
        headers.insert(headers.end(), params.begin(), params.end());
        expectError(post(routed, "tools/call", headers), 400, -32020, 21);
    }
}

// An integer the schema validator accepts, spelled 7.0 or 7e0 or beyond 64 bits, has its
// Mcp-Param header checked by exact value like any other: absent or disagreeing, refused.
TEST_F(McpModernTest, EverySpellingOfAnIntegerHasItsParamHeaderChecked) {
    startCrankd();
    const auto call = [&](const std::string& priority, const Headers& params) {
        const std::string body = request(
            22, "tools/call",
            R"("name":"route_echo","arguments":{"region":"eu","priority":)" + priority + "}");
        Headers headers{{"Mcp-Name", "route_echo"}, {"Mcp-Param-Region", "eu"}};
        headers.insert(headers.end(), params.begin(), params.end());
        return post(body, "tools/call", headers);
    };
    for (const std::string priority : {"7.0", "7e0", "70E-1"}) {
        expectError(call(priority, {}), 400, -32020, 22);
        expectError(call(priority, {{"Mcp-Param-Priority", "8"}}), 400, -32020, 22);
        const Reply agreed = call(priority, {{"Mcp-Param-Priority", "7"}});
        EXPECT_EQ(agreed.status, 200) << priority << ": " << agreed.body;
    }
    const std::string beyond = "18446744073709551617";
    expectError(call(beyond, {}), 400, -32020, 22);
    expectError(call(beyond, {{"Mcp-Param-Priority", "18446744073709551616"}}), 400, -32020, 22);
    EXPECT_EQ(call(beyond, {{"Mcp-Param-Priority", beyond}}).status, 200);
}

// Issue 45: a request's id is kept while it runs (a listen repeats it in every notification),
// so a string id beyond 256 bytes is refused, in both eras.
TEST_F(McpModernTest, LongStringIdsAreRefused) {
    startCrankd();
    const auto withId = [](const std::string& id) {
        std::string body = request(1, "tools/list");
        body.replace(body.find(R"("id":1)"), 6, R"("id":")" + id + "\"");
        return body;
    };
    const Reply ok = post(withId(std::string(256, 'k')), "tools/list");
    EXPECT_EQ(ok.status, 200) << ok.body;
    EXPECT_NE(ok.body.find("\"tools\""), std::string::npos) << ok.body;
    for (const std::size_t size : {std::size_t{257}, std::size_t{100'000}}) {
        const Reply refused = post(withId(std::string(size, 'k')), "tools/list");
        const auto doc = refused.json();
        ASSERT_TRUE(doc.IsObject() && doc.HasMember("error")) << refused.body.substr(0, 300);
        EXPECT_EQ(doc["error"]["code"].GetInt(), -32600);
        EXPECT_TRUE(doc["id"].IsNull());
        EXPECT_NE(std::string(doc["error"]["message"].GetString()).find("at most 256 bytes"),
                  std::string::npos)
            << refused.body;
    }
}

TEST_F(McpModernTest, GetAndDeleteHaveNoSessionToServe) {
    startCrankd();
    for (const char* verb : {"GET", "DELETE"}) {
        const Reply reply = exchange(port_, verb, "/mcp",
                                     {{"Accept", kAccept}, {"MCP-Protocol-Version", kVersion}});
        EXPECT_EQ(reply.status, 405) << verb;
        EXPECT_EQ(reply.header("allow"), "POST");
    }
}

TEST_F(McpModernTest, BothErasShareTheEndpoint) {
    startCrankd();
    const Reply init = post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{)"
                            R"("protocolVersion":"2025-11-25","capabilities":{},)"
                            R"("clientInfo":{"name":"t","version":"1"}}})",
                            "", {}, "");
    ASSERT_EQ(init.status, 200) << init.body;
    const std::string session = init.header("mcp-session-id");
    ASSERT_FALSE(session.empty());
    EXPECT_FALSE(init.json()["result"].HasMember("resultType"));

    // A 2026 request beside the session is answered statelessly, whatever session it names.
    const Reply modern =
        post(request(2, "tools/list"), "tools/list", {{"Mcp-Session-Id", session}});
    ASSERT_EQ(modern.status, 200) << modern.body;
    EXPECT_EQ(modern.header("mcp-session-id"), "");
    EXPECT_STREQ(modern.json()["result"]["resultType"].GetString(), "complete");

    const Reply legacy = post(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})", "",
                              {{"Mcp-Session-Id", session}}, "2025-11-25");
    ASSERT_EQ(legacy.status, 200) << legacy.body;
    EXPECT_FALSE(legacy.json()["result"].HasMember("resultType"));
    EXPECT_FALSE(legacy.json()["result"].HasMember("ttlMs"));
}

TEST_F(McpModernTest, EveryRequestIsAuthenticatedAndPrivateListsSaySo) {
    startCrankd(R"(, "auth": {"mode": "api_key", "agents": [
                    {"id": "alice", "api_key": {"env": "KEY_ALICE"}}]})",
                {{"KEY_ALICE", kKey}});
    EXPECT_EQ(post(request(1, "tools/list"), "tools/list").status, 401);
    const Reply list = post(request(1, "tools/list"), "tools/list",
                            {{"Authorization", std::string("Bearer ") + kKey}});
    ASSERT_EQ(list.status, 200) << list.body;
    EXPECT_STREQ(list.json()["result"]["cacheScope"].GetString(), "private");
}

TEST_F(McpModernTest, ProgressGoesOnTheRequestsOwnStream) {
    startCrankd();
    const std::string withToken = R"("_meta":{"io.modelcontextprotocol/protocolVersion":)"
                                  R"("2026-07-28","io.modelcontextprotocol/clientCapabilities":{},)"
                                  R"("progressToken":"p1"})";
    SseReader sse(
        port_, "POST", modernHeaders("tools/call", "slow_progress"),
        request(30, "tools/call", R"("name":"slow_progress","arguments":{"steps":3,"delay_ms":5})",
                withToken));
    EXPECT_NE(sse.head().find("text/event-stream"), std::string::npos) << sse.head();
    EXPECT_EQ(sse.head().find("Mcp-Session-Id"), std::string::npos) << sse.head();
    std::vector<int> progress;
    std::string final;
    while (auto e = sse.next()) {
        EXPECT_TRUE(e->id.empty()) << "no resumption in this era: " << e->id;
        rapidjson::Document doc;
        doc.Parse(e->data.c_str());
        ASSERT_FALSE(doc.HasParseError()) << e->data;
        if (doc.HasMember("method")) {
            EXPECT_STREQ(doc["method"].GetString(), "notifications/progress");
            EXPECT_STREQ(doc["params"]["progressToken"].GetString(), "p1");
            progress.push_back(doc["params"]["progress"].GetInt());
        } else {
            final = e->data;
            EXPECT_EQ(doc["id"].GetInt(), 30);
            EXPECT_STREQ(doc["result"]["resultType"].GetString(), "complete");
        }
    }
    EXPECT_EQ(progress, (std::vector<int>{1, 2, 3}));
    EXPECT_NE(final.find("done 3"), std::string::npos) << final;
}

TEST_F(McpModernTest, LogsOnlyForARequestThatSetsALevel) {
    startCrankd();
    const std::string call =
        R"("name":"log_then_echo","arguments":{"text":"said","level":"warning"})";
    // No logLevel: a JSON answer, and no log anywhere.
    const Reply plain =
        post(request(40, "tools/call", call), "tools/call", {{"Mcp-Name", "log_then_echo"}});
    ASSERT_EQ(plain.status, 200);
    EXPECT_EQ(plain.header("content-type"), "application/json");
    EXPECT_EQ(plain.body.find("notifications/message"), std::string::npos) << plain.body;

    const auto withLevel = [](const std::string& level) {
        return R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
               R"("io.modelcontextprotocol/clientCapabilities":{},)"
               R"("io.modelcontextprotocol/logLevel":")" +
               level + R"("})";
    };
    const auto logsOf = [&](const std::string& level) {
        SseReader sse(port_, "POST", modernHeaders("tools/call", "log_then_echo"),
                      request(41, "tools/call", call, withLevel(level)));
        std::vector<std::string> logs;
        bool answered = false;
        while (auto e = sse.next()) {
            if (e->data.find("notifications/message") != std::string::npos) {
                logs.push_back(e->data);
            } else if (e->data.find("\"id\":41") != std::string::npos) {
                answered = true;
            }
        }
        EXPECT_TRUE(answered) << level;
        return logs;
    };
    const auto loud = logsOf("debug");
    ASSERT_EQ(loud.size(), 1U);
    EXPECT_NE(loud[0].find(R"("level":"warning")"), std::string::npos) << loud[0];
    EXPECT_TRUE(logsOf("error").empty());
}

TEST_F(McpModernTest, ClosingTheStreamCancelsTheCall) {
    startCrankd();
    const std::string withToken = R"("_meta":{"io.modelcontextprotocol/protocolVersion":)"
                                  R"("2026-07-28","io.modelcontextprotocol/clientCapabilities":{},)"
                                  R"("progressToken":1})";
    {
        // 1000 steps of 20 ms: 20 s unless the call is cancelled.
        SseReader sse(port_, "POST", modernHeaders("tools/call", "slow_progress"),
                      request(50, "tools/call",
                              R"("name":"slow_progress","arguments":{"steps":1000,"delay_ms":20})",
                              withToken));
        ASSERT_TRUE(sse.next());  // the call runs
        sse.close();
    }
    const std::string series =
        R"(crank_mcp_requests_total{method="tools/call",outcome="cancelled"})";
    bool cancelled = false;
    for (int i = 0; i < 100 && !cancelled; ++i) {  // at most 10 s
        const Reply metrics = exchange(port_, "GET", "/metrics", {});
        cancelled = metrics.body.find(series + " 1") != std::string::npos;
        if (!cancelled) {
            std::this_thread::sleep_for(100ms);
        }
    }
    EXPECT_TRUE(cancelled) << "the call went on after its stream closed";
}

TEST_F(McpModernTest, AListenIsAcknowledgedThenToldOfToolChanges) {
    // No heartbeats: a notification that never comes ends the read at the reader's 20 s timeout
    // instead of being waited for between heartbeat comments.
    startCrankd(R"(, "mcp": {"heartbeat_interval_ms": 3600000})");
    SseReader listen(port_, "POST",
                     {{"Content-Type", "application/json"},
                      {"Accept", kAccept},
                      {"MCP-Protocol-Version", kVersion},
                      {"Mcp-Method", "subscriptions/listen"}},
                     request(60, "subscriptions/listen",
                             R"("notifications":{"toolsListChanged":true,)"
                             R"("promptsListChanged":true})"));
    EXPECT_NE(listen.head().find("text/event-stream"), std::string::npos) << listen.head();
    const auto ack = listen.next();
    ASSERT_TRUE(ack);
    rapidjson::Document doc;
    doc.Parse(ack->data.c_str());
    ASSERT_FALSE(doc.HasParseError()) << ack->data;
    EXPECT_STREQ(doc["method"].GetString(), "notifications/subscriptions/acknowledged");
    // Honoured: tools only (this workspace has no prompts). taskIds: modern_tasks_test.cpp.
    const auto& honoured = doc["params"]["notifications"];
    EXPECT_TRUE(honoured["toolsListChanged"].GetBool());
    EXPECT_FALSE(honoured.HasMember("promptsListChanged"));
    EXPECT_EQ(doc["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].GetInt(), 60);

    // A change of the tools reaches the open listen, tagged with its id.
    const Reply added =
        post(request(61, "tools/call", R"("name":"add_tool","arguments":{"name":"fresh"})"),
             "tools/call", {{"Mcp-Name", "add_tool"}});
    ASSERT_EQ(added.status, 200) << added.body;
    const auto changed = listen.next();
    ASSERT_TRUE(changed);
    rapidjson::Document note;
    note.Parse(changed->data.c_str());
    ASSERT_FALSE(note.HasParseError()) << changed->data;
    EXPECT_STREQ(note["method"].GetString(), "notifications/tools/list_changed");
    EXPECT_EQ(note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].GetInt(), 60);
    EXPECT_FALSE(note.HasMember("id"));
}

TEST_F(McpModernTest, ADroppedListenGivesItsStreamBack) {
    startCrankd(R"(, "auth": {"mode": "api_key", "agents": [
                    {"id": "alice", "api_key": {"env": "KEY_ALICE"},
                     "limits": {"max_streams": 1}}]})",
                {{"KEY_ALICE", kKey}});
    const Headers headers{{"Content-Type", "application/json"},
                          {"Accept", kAccept},
                          {"MCP-Protocol-Version", kVersion},
                          {"Mcp-Method", "subscriptions/listen"},
                          {"Authorization", std::string("Bearer ") + kKey}};
    const std::string body =
        request(70, "subscriptions/listen", R"("notifications":{"toolsListChanged":true})");
    for (int round = 0; round < 3; ++round) {
        SCOPED_TRACE(round);
        // The place of the listen dropped before is given back once crankd sees it closed.
        bool opened = false;
        for (int attempt = 0; attempt < 50 && !opened; ++attempt) {  // at most 5 s
            SseReader listen(port_, "POST", headers, body);
            if (listen.head().find("200 OK") != std::string::npos) {
                opened = true;
                ASSERT_TRUE(listen.next());  // the acknowledgement
                // While it is open, a second stream of the agent is refused.
                const Reply second = exchange(port_, "POST", "/mcp", headers, body);
                EXPECT_EQ(second.status, 429) << second.body;
                listen.close();
            } else {
                EXPECT_NE(listen.head().find("429"), std::string::npos) << listen.head();
                std::this_thread::sleep_for(100ms);
            }
        }
        EXPECT_TRUE(opened);
    }
}

TEST_F(McpModernTest, AListenWithABadFilterIsRefused) {
    startCrankd();
    for (const char* filter :
         {R"("notifications":[])", R"("notifications":{"toolsListChanged":1})"}) {
        SCOPED_TRACE(filter);
        const Reply reply =
            post(request(80, "subscriptions/listen", filter), "subscriptions/listen");
        expectError(reply, 200, -32602, 80);
        EXPECT_NE(reply.body.find("notifications"), std::string::npos) << reply.body;
    }
}

TEST_F(McpModernTest, ACallNeedingAnUndeclaredCapabilityIsRefused) {
    startCrankd();
    const std::string call = R"("name":"test_missing_capability","arguments":{})";
    const Reply refused = post(request(90, "tools/call", call), "tools/call",
                               {{"Mcp-Name", "test_missing_capability"}});
    expectError(refused, 400, -32021, 90);
    EXPECT_TRUE(refused.json()["error"]["data"]["requiredCapabilities"].HasMember("sampling"))
        << refused.body;
    // Declared, the question goes to the client in an input_required round (the held call).
    const Reply declared =
        post(request(91, "tools/call", call, meta(kVersion, R"({"sampling":{}})")), "tools/call",
             {{"Mcp-Name", "test_missing_capability"}});
    ASSERT_EQ(declared.status, 200) << declared.body;
    EXPECT_STREQ(declared.json()["result"]["resultType"].GetString(), "input_required")
        << declared.body;
}

TEST_F(McpModernTest, ListensAreBoundedAndDroppedOnesLeaveNothingBehind) {
    // Four workers: the pool (its threads and their descriptors) is at its full size within the
    // first round, so what the second round leaves behind is the listens' own.
    startCrankd(R"(, "server": {"threads": 4}, "mcp": {"heartbeat_interval_ms": 3600000},
                   "auth": {"workspaces": [{"id": "default", "limits": {"max_streams": 40}}]})");
    const pid_t pid = process_->pid();
    const Headers headers = {{"Content-Type", "application/json"},
                             {"Accept", kAccept},
                             {"MCP-Protocol-Version", kVersion},
                             {"Mcp-Method", "subscriptions/listen"}};
    const std::string body =
        request(100, "subscriptions/listen", R"("notifications":{"toolsListChanged":true})");
    // Fifty listens at once (forty fit), all told of a change, then all dropped mid-stream;
    // `threads` is what crankd must not exceed while they are open.
    const auto round = [&](int n, std::int64_t threads) {
        std::vector<std::unique_ptr<SseReader>> listens;
        int opened = 0;
        int refused = 0;
        for (int i = 0; i < 50; ++i) {
            listens.push_back(std::make_unique<SseReader>(port_, "POST", headers, body));
            const std::string& head = listens.back()->head();
            if (head.find("200 OK") != std::string::npos) {
                ++opened;
                ASSERT_TRUE(listens.back()->next());  // its acknowledgement
            } else {
                EXPECT_NE(head.find("429"), std::string::npos) << head;
                ++refused;
            }
        }
        EXPECT_EQ(opened, 40);  // the workspace's max_streams
        EXPECT_EQ(refused, 10);
        if (threads > 0) {
            EXPECT_LE(crank::testing::threadCount(pid), threads) << "a listen holds no thread";
        }
        ASSERT_EQ(post(request(2, "tools/call",
                               R"("name":"add_tool","arguments":{"name":"n)" + std::to_string(n) +
                                   R"("})"),
                       "tools/call", {{"Mcp-Name", "add_tool"}})
                      .status,
                  200);
        int told = 0;
        for (auto& listen : listens) {
            if (listen->head().find("200 OK") != std::string::npos) {
                const auto e = listen->next();
                told += e && e->data.find("tools/list_changed") != std::string::npos ? 1 : 0;
            }
        }
        EXPECT_EQ(told, 40);
    };  // every listen is dropped at the end of a round
    // The descriptors of crankd once it has seen the dropped listens closed (bounded: 10 s).
    const auto settledFds = [&](std::int64_t target) {
        std::int64_t fds = crank::testing::openFds(pid);
        for (int i = 0; i < 100 && fds > target; ++i) {
            std::this_thread::sleep_for(100ms);
            fds = crank::testing::openFds(pid);
        }
        return fds;
    };
    // The second round must leave crankd exactly as the first did.
    round(1, 0);
    std::this_thread::sleep_for(500ms);
    const std::int64_t fdsBefore = crank::testing::openFds(pid);
    const std::int64_t threadsBefore = crank::testing::threadCount(pid);
    ASSERT_GT(fdsBefore, 0);
    round(2, threadsBefore);
    EXPECT_LE(settledFds(fdsBefore), fdsBefore) << "descriptors of dropped listens were kept";
    EXPECT_LE(crank::testing::threadCount(pid), threadsBefore);
    // Their places are back: a new listen opens.
    SseReader again(port_, "POST", headers, body);
    EXPECT_NE(again.head().find("200 OK"), std::string::npos) << again.head();
}

TEST_F(McpModernTest, OversizedAndMalformedParamHeadersAreRefused) {
    startCrankd();
    const std::string routed = request(
        110, "tools/call", R"("name":"route_echo","arguments":{"region":"eu","priority":7})");
    const Headers base{{"Mcp-Name", "route_echo"}, {"Mcp-Param-Priority", "7"}};
    const auto with = [&](const std::string& region) {
        Headers h = base;
        h.emplace_back("Mcp-Param-Region", region);
        return post(routed, "tools/call", h);
    };
    // A value past Poco's header bound is a 400 before any MCP reading; crankd goes on.
    EXPECT_EQ(with(std::string(10'000, 'e')).status, 400);
    for (const std::string& bad :
         {std::string(4'000, 'e'), std::string("=?base64?!!!!?="), std::string("=?base64?ZXU?="),
          std::string("e\x01u"), std::string("\xc3\xa9u")}) {
        expectError(with(bad), 400, -32020, 110);
    }
    EXPECT_EQ(with("eu").status, 200);
}

}  // namespace
