// The MCP Streamable HTTP endpoint over raw HTTP: every status code the transport defines,
// sessions, SSE streams with progress, resumption and cancellation. Runs crankd-test-tools (the
// real crankd plus fixture tools) on a free loopback port.

#include <signal.h>

#include <chrono>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/StreamSocket.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "mcp_http_client.h"
#include "temp_dir.h"

namespace {

using crank::testing::ChildProcess;
using crank::testing::exchange;
using crank::testing::kAccept;
using crank::testing::Reply;
using crank::testing::SseReader;
using crank::testing::TempDir;
using namespace std::chrono_literals;

class McpHttpTest : public ::testing::Test {
protected:
    void startCrankd(const std::string& extraConfig = "") {
        const std::string config =
            dir_.write("crank.json", R"({"store": {"path": ")" + dir_.file("crank.db") + R"("})" +
                                         extraConfig + "}");
        process_.emplace(std::vector<std::string>{CRANKD_TEST_TOOLS_PATH, "--config", config,
                                                  "--listen", "127.0.0.1:0"});
        const auto port = process_->waitForListeningPort(20s);
        ASSERT_TRUE(port) << process_->stderrText();
        port_ = *port;
    }

    void TearDown() override {
        if (process_) {
            process_->signal(SIGTERM);
            EXPECT_EQ(process_->waitForExit(20s), 0) << process_->stderrText();
        }
    }

    Reply post(const std::string& body, const std::string& session = "",
               std::vector<std::pair<std::string, std::string>> extra = {}) {
        std::vector<std::pair<std::string, std::string>> headers{
            {"Content-Type", "application/json"}, {"Accept", kAccept}};
        if (!session.empty()) {
            headers.emplace_back("Mcp-Session-Id", session);
        }
        headers.insert(headers.end(), extra.begin(), extra.end());
        return exchange(port_, "POST", "/mcp", headers, body);
    }

    /// initialize + notifications/initialized; returns the session id.
    std::string openSession(const std::string& version = "2025-11-25") {
        const Reply init =
            post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{)"
                 R"("protocolVersion":")" +
                 version + R"(","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
        EXPECT_EQ(init.status, 200) << init.body;
        const std::string session = init.header("mcp-session-id");
        EXPECT_EQ(post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", session).status,
                  202);
        return session;
    }

    std::vector<std::pair<std::string, std::string>> streamHeaders(const std::string& session) {
        return {
            {"Content-Type", "application/json"}, {"Accept", kAccept}, {"Mcp-Session-Id", session}};
    }

    TempDir dir_;
    std::optional<ChildProcess> process_;
    std::uint16_t port_ = 0;
};

TEST_F(McpHttpTest, InitializeNegotiatesAndIssuesASessionId) {
    startCrankd();
    const Reply init = post(R"({"jsonrpc":"2.0","id":"a","method":"initialize","params":{)"
                            R"("protocolVersion":"2025-06-18","capabilities":{},)"
                            R"("clientInfo":{"name":"t","version":"1"}}})");
    ASSERT_EQ(init.status, 200);
    EXPECT_EQ(init.header("content-type"), "application/json");
    const std::string session = init.header("mcp-session-id");
    EXPECT_TRUE(std::regex_match(session, std::regex("[0-9a-f]{48}"))) << session;
    const auto doc = init.json();
    EXPECT_STREQ(doc["id"].GetString(), "a");
    EXPECT_STREQ(doc["result"]["protocolVersion"].GetString(), "2025-06-18");
    EXPECT_TRUE(doc["result"]["capabilities"]["tools"]["listChanged"].GetBool());
    EXPECT_TRUE(doc["result"]["capabilities"].HasMember("logging"));
    EXPECT_STREQ(doc["result"]["serverInfo"]["name"].GetString(), "crank");

    // An unknown version is answered with the latest one.
    const Reply other = post(R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{)"
                             R"("protocolVersion":"1999-01-01","capabilities":{},)"
                             R"("clientInfo":{"name":"t","version":"1"}}})");
    EXPECT_STREQ(other.json()["result"]["protocolVersion"].GetString(), "2025-11-25");
    EXPECT_NE(other.header("mcp-session-id"), session);
}

TEST_F(McpHttpTest, StatusCodesOfTheTransport) {
    startCrankd(R"(, "server": {"max_request_body_bytes": 2048})");
    const std::string session = openSession();
    const std::string ping = R"({"jsonrpc":"2.0","id":7,"method":"ping"})";

    // 406: Accept must list both types.
    EXPECT_EQ(exchange(port_, "POST", "/mcp",
                       {{"Content-Type", "application/json"},
                        {"Accept", "application/json"},
                        {"Mcp-Session-Id", session}},
                       ping)
                  .status,
              406);
    // 415: the body must be JSON.
    EXPECT_EQ(
        exchange(port_, "POST", "/mcp",
                 {{"Content-Type", "text/plain"}, {"Accept", kAccept}, {"Mcp-Session-Id", session}},
                 ping)
            .status,
        415);
    // 413 with a JSON-RPC error for a body over server.max_request_body_bytes.
    const Reply big = post(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":")" +
                               std::string(4096, 'x') + R"("}})",
                           session);
    EXPECT_EQ(big.status, 413);
    EXPECT_EQ(big.json()["error"]["code"].GetInt(), -32600);
    // 400 with -32700 for invalid JSON.
    const Reply bad = post("{not json", session);
    EXPECT_EQ(bad.status, 400);
    EXPECT_EQ(bad.json()["error"]["code"].GetInt(), -32700);
    EXPECT_TRUE(bad.json()["id"].IsNull());
    // 400 without a session id, 404 with an unknown one.
    EXPECT_EQ(post(ping).status, 400);
    EXPECT_EQ(post(ping, std::string(48, 'f')).status, 404);
    // 400 for an unsupported MCP-Protocol-Version; a supported one is fine.
    EXPECT_EQ(post(ping, session, {{"MCP-Protocol-Version", "2024-01-01"}}).status, 400);
    EXPECT_EQ(post(ping, session, {{"MCP-Protocol-Version", "2025-06-18"}}).status, 200);
    // 202 with an empty body for a notification.
    const Reply note = post(R"({"jsonrpc":"2.0","method":"notifications/whatever"})", session);
    EXPECT_EQ(note.status, 202);
    EXPECT_EQ(note.body, "");
    // -32601 for an unknown method.
    EXPECT_EQ(post(R"({"jsonrpc":"2.0","id":3,"method":"no/such"})", session)
                  .json()["error"]["code"]
                  .GetInt(),
              -32601);
    // 403 for a foreign Origin or Host (DNS rebinding); loopback origins on any port pass.
    EXPECT_EQ(post(ping, session, {{"Origin", "http://evil.example.com"}}).status, 403);
    EXPECT_EQ(post(ping, session, {{"Origin", "http://localhost:5173"}}).status, 200);
    EXPECT_EQ(exchange(port_, "POST", "/mcp",
                       {{"Host", "evil.example.com"},
                        {"Content-Type", "application/json"},
                        {"Accept", kAccept},
                        {"Mcp-Session-Id", session}},
                       ping)
                  .status,
              403);
    // 405 for other methods; GET needs text/event-stream.
    EXPECT_EQ(exchange(port_, "PUT", "/mcp", {{"Mcp-Session-Id", session}}).status, 405);
    EXPECT_EQ(exchange(port_, "GET", "/mcp",
                       {{"Accept", "application/json"}, {"Mcp-Session-Id", session}})
                  .status,
              406);
    // DELETE ends the session: 200, then 404 for it.
    EXPECT_EQ(exchange(port_, "DELETE", "/mcp", {{"Mcp-Session-Id", session}}).status, 200);
    EXPECT_EQ(post(ping, session).status, 404);
    EXPECT_EQ(exchange(port_, "DELETE", "/mcp", {{"Mcp-Session-Id", session}}).status, 404);
}

TEST_F(McpHttpTest, SessionLimitAnswers503) {
    startCrankd(R"(, "mcp": {"max_sessions": 1})");
    openSession();
    const Reply second = post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{)"
                              R"("protocolVersion":"2025-11-25","capabilities":{},)"
                              R"("clientInfo":{"name":"t","version":"1"}}})");
    EXPECT_EQ(second.status, 503);
    EXPECT_NE(second.body.find("mcp.max_sessions"), std::string::npos) << second.body;
}

TEST_F(McpHttpTest, BatchesOnlyFor20250326) {
    startCrankd();
    const std::string batch =
        R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},)"
        R"({"jsonrpc":"2.0","method":"notifications/initialized"}])";
    EXPECT_EQ(post(batch, openSession("2025-06-18")).status, 400);
    const Reply reply = post(batch, openSession("2025-03-26"));
    ASSERT_EQ(reply.status, 200);
    const auto doc = reply.json();
    ASSERT_TRUE(doc.IsArray());
    ASSERT_EQ(doc.Size(), 2U);
    EXPECT_EQ(doc[0]["id"].GetInt(), 1);
    EXPECT_EQ(doc[1]["id"].GetInt(), 2);
}

TEST_F(McpHttpTest, ToolsListPagesWithAnOpaqueCursor) {
    startCrankd(R"(, "mcp": {"tools_page_size": 3})");
    const std::string session = openSession();
    std::vector<std::string> names;
    std::string cursor;
    for (int page = 0; page < 10; ++page) {
        const std::string params = cursor.empty() ? "{}" : R"({"cursor":")" + cursor + R"("})";
        const auto doc =
            post(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":)" + params + "}",
                 session)
                .json();
        for (const auto& tool : doc["result"]["tools"].GetArray()) {
            names.emplace_back(tool["name"].GetString());
            EXPECT_STREQ(tool["inputSchema"]["type"].GetString(), "object");
        }
        if (!doc["result"].HasMember("nextCursor")) {
            break;
        }
        cursor = doc["result"]["nextCursor"].GetString();
    }
    EXPECT_EQ(names, (std::vector<std::string>{"add_tool",
                                               "confirm_delete",
                                               "echo",
                                               "failing_job",
                                               "greet",
                                               "log_then_echo",
                                               "multi_input",
                                               "noop",
                                               "protocol_error_job",
                                               "route_echo",
                                               "slow_compute",
                                               "slow_progress",
                                               "test_input_required_result_capabilities",
                                               "test_input_required_result_elicitation",
                                               "test_input_required_result_list_roots",
                                               "test_input_required_result_multi_round",
                                               "test_input_required_result_multiple_inputs",
                                               "test_input_required_result_request_state",
                                               "test_input_required_result_sampling",
                                               "test_input_required_result_tampered_state",
                                               "test_logging_tool",
                                               "test_missing_capability",
                                               "test_streaming_elicitation",
                                               "test_tool_with_task",
                                               "test_trigger_tool_change"}));
    EXPECT_EQ(
        post(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"zz"}})", session)
            .json()["error"]["code"]
            .GetInt(),
        -32602);
}

TEST_F(McpHttpTest, ToolsCallAnswersJsonAndReportsUnknownTools) {
    startCrankd();
    const std::string session = openSession();
    const auto ok = post(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":)"
                         R"({"name":"echo","arguments":{"text":"hello"}}})",
                         session)
                        .json();
    EXPECT_STREQ(ok["result"]["content"][0]["text"].GetString(), "hello");
    EXPECT_FALSE(ok["result"]["isError"].GetBool());
    const auto unknown = post(R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":)"
                              R"({"name":"nope","arguments":{}}})",
                              session)
                             .json();
    EXPECT_EQ(unknown["error"]["code"].GetInt(), -32602);
}

TEST_F(McpHttpTest, ProgressStreamsBeforeTheResult) {
    startCrankd();
    const std::string session = openSession();
    SseReader sse(port_, "POST", streamHeaders(session),
                  R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":)"
                  R"("slow_progress","arguments":{"steps":3,"delay_ms":10},)"
                  R"("_meta":{"progressToken":"tok"}}})");
    EXPECT_NE(sse.head().find("200 OK"), std::string::npos) << sse.head();
    EXPECT_NE(sse.head().find("Content-Type: text/event-stream"), std::string::npos);
    auto priming = sse.next();
    ASSERT_TRUE(priming);
    EXPECT_EQ(priming->data, "");
    EXPECT_FALSE(priming->id.empty());
    std::vector<std::string> ids{priming->id};
    for (int step = 1; step <= 3; ++step) {
        auto e = sse.next();
        ASSERT_TRUE(e);
        rapidjson::Document doc;
        doc.Parse(e->data.c_str());
        EXPECT_STREQ(doc["method"].GetString(), "notifications/progress");
        EXPECT_STREQ(doc["params"]["progressToken"].GetString(), "tok");
        EXPECT_EQ(doc["params"]["progress"].GetInt(), step);
        ids.push_back(e->id);
    }
    auto result = sse.next();
    ASSERT_TRUE(result);
    EXPECT_NE(result->data.find(R"("id":9)"), std::string::npos);
    EXPECT_NE(result->data.find("done 3"), std::string::npos);
    ids.push_back(result->id);
    EXPECT_FALSE(sse.next());  // the stream ends after the result
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end()) << "event ids must be unique";
}

TEST_F(McpHttpTest, ADroppedStreamDoesNotCancelAndResumesWithLastEventId) {
    startCrankd();
    const std::string session = openSession();
    std::string lastId;
    {
        SseReader sse(port_, "POST", streamHeaders(session),
                      R"({"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":)"
                      R"("slow_progress","arguments":{"steps":6,"delay_ms":60},)"
                      R"("_meta":{"progressToken":1}}})");
        sse.next();  // priming
        auto first = sse.next();
        ASSERT_TRUE(first);
        lastId = first->id;
        sse.close();  // the client drops the stream after the first progress notification
    }
    std::this_thread::sleep_for(500ms);  // the call goes on meanwhile
    SseReader resumed(
        port_, "GET",
        {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}, {"Last-Event-ID", lastId}});
    EXPECT_NE(resumed.head().find("200 OK"), std::string::npos) << resumed.head();
    std::vector<int> progress;
    std::string final;
    while (auto e = resumed.next()) {
        if (e->data.find("notifications/progress") != std::string::npos) {
            rapidjson::Document doc;
            doc.Parse(e->data.c_str());
            progress.push_back(doc["params"]["progress"].GetInt());
        } else if (!e->data.empty()) {
            final = e->data;
        }
    }
    EXPECT_EQ(progress, (std::vector<int>{2, 3, 4, 5, 6}));
    EXPECT_NE(final.find("done 6"), std::string::npos) << final;

    // A Last-Event-ID that names no stream of the session is refused.
    EXPECT_EQ(exchange(port_, "GET", "/mcp",
                       {{"Accept", "text/event-stream"},
                        {"Mcp-Session-Id", session},
                        {"Last-Event-ID", "999-1"}})
                  .status,
              400);
}

TEST_F(McpHttpTest, CancellationReachesTheRunningCall) {
    startCrankd();
    const std::string session = openSession();
    SseReader sse(port_, "POST", streamHeaders(session),
                  R"({"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":)"
                  R"("slow_progress","arguments":{"steps":200,"delay_ms":20},)"
                  R"("_meta":{"progressToken":"p"}}})");
    sse.next();               // priming
    ASSERT_TRUE(sse.next());  // the call runs
    EXPECT_EQ(post(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":)"
                   R"({"requestId":"c1","reason":"user"}})",
                   session)
                  .status,
              202);
    int progressAfter = 0;
    bool gotResult = false;
    while (auto e = sse.next()) {
        if (e->data.find("notifications/progress") != std::string::npos) {
            ++progressAfter;
        } else if (e->data.find(R"("id":"c1")") != std::string::npos) {
            gotResult = true;
        }
    }
    EXPECT_FALSE(gotResult) << "a cancelled request gets no response";
    EXPECT_LT(progressAfter, 150) << "the call stopped early";
}

TEST_F(McpHttpTest, LogMessagesFollowTheSessionLevelOnTheStandaloneStream) {
    startCrankd();
    const std::string session = openSession();
    SseReader standalone(port_, "GET",
                         {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}});
    ASSERT_NE(standalone.head().find("200 OK"), std::string::npos) << standalone.head();
    ASSERT_TRUE(standalone.next());  // priming
    EXPECT_EQ(post(R"({"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":)"
                   R"({"level":"error"}})",
                   session)
                  .status,
              200);
    post(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"log_then_echo",)"
         R"("arguments":{"text":"quiet","level":"warning"}}})",
         session);
    post(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"log_then_echo",)"
         R"("arguments":{"text":"loud","level":"critical"}}})",
         session);
    auto e = standalone.next();
    ASSERT_TRUE(e);
    rapidjson::Document doc;
    doc.Parse(e->data.c_str());
    EXPECT_STREQ(doc["method"].GetString(), "notifications/message");
    EXPECT_STREQ(doc["params"]["level"].GetString(), "critical");
    EXPECT_STREQ(doc["params"]["data"].GetString(), "loud");
    EXPECT_EQ(post(R"({"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":)"
                   R"({"level":"loud"}})",
                   session)
                  .json()["error"]["code"]
                  .GetInt(),
              -32602);
}

}  // namespace

namespace {

TEST_F(McpHttpTest, ARefusedRequestDoesNotPoisonItsKeepAliveConnection) {
    startCrankd();
    const std::string session = openSession();
    Poco::Net::StreamSocket socket(Poco::Net::SocketAddress("127.0.0.1", port_));
    socket.setReceiveTimeout(Poco::Timespan(20, 0));
    const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
    const auto request = [&](const std::string& origin) {
        return "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: " + origin +
               "\r\nContent-Type: application/json\r\nAccept: " + kAccept +
               "\r\nMcp-Session-Id: " + session +
               "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    };
    // Refused before its body is read, then a good request on the same connection.
    const std::string both = request("http://evil.example.com") + request("http://localhost");
    socket.sendBytes(both.data(), static_cast<int>(both.size()));
    std::string data;
    char buffer[4096];
    int n = 0;
    while (data.find(R"("result":{})") == std::string::npos &&
           (n = socket.receiveBytes(buffer, sizeof buffer)) > 0) {
        data.append(buffer, static_cast<std::size_t>(n));
    }
    EXPECT_NE(data.find("HTTP/1.1 403"), std::string::npos) << data;
    EXPECT_NE(data.find(R"("id":1,"result":{})"), std::string::npos) << data;
    EXPECT_EQ(data.find("400 Bad Request"), std::string::npos) << data;
}

}  // namespace

namespace {

TEST_F(McpHttpTest, ToolListChangesAreAnnouncedOnStandaloneStreams) {
    startCrankd();
    const std::string session = openSession();
    SseReader standalone(port_, "GET",
                         {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}});
    ASSERT_TRUE(standalone.next());  // priming
    const auto added = post(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":)"
                            R"({"name":"add_tool","arguments":{"name":"fresh"}}})",
                            session)
                           .json();
    EXPECT_STREQ(added["result"]["content"][0]["text"].GetString(), "added fresh");
    auto e = standalone.next();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->data, R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
    const auto list = post(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", session).json();
    bool found = false;
    for (const auto& tool : list["result"]["tools"].GetArray()) {
        found = found || std::string(tool["name"].GetString()) == "fresh";
    }
    EXPECT_TRUE(found);
}

TEST_F(McpHttpTest, StreamsBeyondTheLimitAnswer503) {
    startCrankd(R"(, "mcp": {"max_streams": 1})");
    const std::string session = openSession();
    SseReader first(port_, "GET", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}});
    ASSERT_TRUE(first.next());
    const Reply second = exchange(port_, "GET", "/mcp",
                                  {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}});
    EXPECT_EQ(second.status, 503);
    EXPECT_EQ(second.header("retry-after"), "1");
    EXPECT_NE(second.body.find("mcp.max_streams"), std::string::npos) << second.body;
}

}  // namespace

namespace {

TEST_F(McpHttpTest, ApiKeysAuthenticateAgentsAndSessionsBelongToTheirAgent) {
    // sha256("abc") and sha256("def"): the config holds digests, never the keys.
    startCrankd(R"(, "auth": {"mode": "api_key", "agents": [
        {"id": "alpha", "api_key": {"sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}},
        {"id": "beta", "api_key": {"sha256": "cb8379ac2098aa165029e3938a51da0bcecfc008fd6795f401178647f96c5b34"}}]})");
    const std::string init =
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
        R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
    const Reply anonymous = post(init);
    EXPECT_EQ(anonymous.status, 401);
    EXPECT_EQ(anonymous.header("www-authenticate"), R"(Bearer realm="crank")");
    EXPECT_EQ(post(init, "", {{"Authorization", "Bearer wrong"}}).status, 401);

    const Reply alpha = post(init, "", {{"Authorization", "Bearer abc"}});
    ASSERT_EQ(alpha.status, 200) << alpha.body;
    const std::string session = alpha.header("mcp-session-id");
    const std::string ping = R"({"jsonrpc":"2.0","id":2,"method":"ping"})";
    EXPECT_EQ(post(ping, session, {{"Authorization", "Bearer abc"}}).status, 200);
    // Another agent cannot use, or even confirm, alpha's session.
    EXPECT_EQ(post(ping, session, {{"Authorization", "Bearer def"}}).status, 404);
    EXPECT_EQ(exchange(port_, "DELETE", "/mcp",
                       {{"Mcp-Session-Id", session}, {"Authorization", "Bearer def"}})
                  .status,
              404);
    EXPECT_EQ(post(ping, session).status, 401);
    EXPECT_EQ(post(ping, session, {{"Authorization", "Bearer abc"}}).status, 200);
}

}  // namespace

TEST_F(McpHttpTest, CallsBeyondTheConcurrencyLimitAreRefusedAsToolErrors) {
    startCrankd(R"(, "auth": {"workspaces": [{"id": "default",
                    "limits": {"max_concurrent_calls": 1}}]})");
    const std::string session = openSession();
    // One long call holds the workspace's only slot...
    SseReader sse(port_, "POST", streamHeaders(session),
                  R"({"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":)"
                  R"("slow_progress","arguments":{"steps":40,"delay_ms":50},)"
                  R"("_meta":{"progressToken":"p"}}})");
    sse.next();               // priming
    ASSERT_TRUE(sse.next());  // the call runs (its first progress)
    // ... so a second one is refused, as a tool error that names the limit.
    const Reply refused =
        post(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":)"
             R"({"text":"x"}}})",
             session);
    EXPECT_EQ(refused.status, 200);
    EXPECT_NE(refused.body.find(R"("isError":true)"), std::string::npos) << refused.body;
    EXPECT_NE(refused.body.find("limits.max_concurrent_calls"), std::string::npos) << refused.body;
    // Once the long call ended, the slot is free again.
    bool ended = false;
    while (auto e = sse.next()) {
        ended = ended || e->data.find(R"("id":"long")") != std::string::npos;
    }
    ASSERT_TRUE(ended);
    const Reply again =
        post(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":)"
             R"({"text":"x"}}})",
             session);
    EXPECT_NE(again.body.find(R"("isError":false)"), std::string::npos) << again.body;
}
