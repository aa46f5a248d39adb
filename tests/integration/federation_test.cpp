// Federated MCP upstreams through crankd (issue 7), the parts the SDK-client e2e tests do not
// reach: names that collide (between upstreams, and with an operation, which always wins) are
// published once and reported in the log; an upstream that cannot start leaves crankd and the
// others working; an upstream's tool as an operation; the upstream's errors passed on.
//
// One crankd, the real mcp plugin, three copies of the fixture server
// (tests/e2e/reference-server.mjs --stdio) and one upstream whose command does not exist.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "crankd_suite.h"
#include "mcp_http_client.h"
#include "store/open_store.h"
#include "test_json.h"

namespace crank::testing {
namespace {

/// An upstream entry running the fixture over stdio; `config` adds members to its config.
std::string fixtureUpstream(const std::string& name, const std::string& naming,
                            const std::string& config = "") {
    return R"({"name": ")" + name + R"(", )" + naming +
           R"(, "config": {"command": ")" CRANK_NODE_PATH R"(", "args": [")" CRANK_FIXTURE_SERVER
           R"(", "--stdio"], "close_wait_ms": 500, "term_wait_ms": 500)" +
           (config.empty() ? "" : ", " + config) + "}}";
}

/// True once crankd's /readyz turns 200: every upstream's lists were fetched (or failed to be);
/// false after 30 s.
bool becameReady(std::uint16_t port) {
    for (int i = 0; i < 300; ++i) {
        if (exchange(port, "GET", "/readyz", {}).status == 200) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

/// The JSON-RPC message answering request `id` in a reply (JSON, or the SSE stream's events).
rapidjson::Document answerOf(const Reply& reply, int id) {
    rapidjson::Document doc;
    const std::string wanted = R"("id":)" + std::to_string(id);
    std::size_t at = 0;
    while (at < reply.body.size()) {
        std::size_t end = reply.body.find('\n', at);
        if (end == std::string::npos) {
            end = reply.body.size();
        }
        std::string line = reply.body.substr(at, end - at);
        at = end + 1;
        if (line.rfind("data: ", 0) == 0) {
            line = line.substr(6);
        }
        if (line.find(wanted) != std::string::npos && line.front() == '{') {
            doc.Parse(line.data(), line.size());
            return doc;
        }
    }
    doc.SetObject();
    ADD_FAILURE() << "no answer to request " << id << " in: " << reply.body;
    return doc;
}

// A secret header of an HTTP upstream ({"env": ...} in its config), which the fixture echoes.
constexpr const char* kUpstreamKey = "fedKey-7rq9/x+Z";

class FederationSuite : public CrankdSuite<FederationSuite> {
protected:
    static void SetUpTestSuite() {
        // The fixture over Streamable HTTP, its stdout sent to stderr (where ChildProcess looks).
        httpFixture_ = new ChildProcess(std::vector<std::string>{
            "/bin/sh", "-c", "exec \"$0\" \"$1\" 0 1>&2", CRANK_NODE_PATH, CRANK_FIXTURE_SERVER});
        const auto line =
            httpFixture_->waitForStderrLine("listening http://", std::chrono::seconds(20));
        ASSERT_TRUE(line) << httpFixture_->stderrText();
        const std::string url = line->substr(line->find("http://"));
        startCrankd(R"("upstreams": [)" + fixtureUpstream("first", R"("naming": "keep")") + ", " +
                        R"({"name": "web", "prefix": "w", "config": {"url": ")" + url +
                        R"(", "headers": {"X-Api-Key": {"env": "CRANK_FED_TEST_KEY"}}}}, )" +
                        fixtureUpstream("second", R"("naming": "keep")") + ", " +
                        fixtureUpstream("third", R"("prefix": "t", "separator": ".")") +
                        R"(, {"name": "broken", "config": {"command": "/nonexistent/mcp-server"}}],
            "operations": [{"name": "echo", "description": "the third upstream's echo, as an operation",
              "protocol": "mcp", "config": {"upstream": "third", "tool": "echo",
                "arguments": {"text": "op:{{text}}"}},
              "input_schema": {"type": "object", "properties": {"text": {"type": "string"}},
                "required": ["text"]},
              "execution": {"mode": "unary"}},
              {"name": "web_header", "description": "the HTTP upstream's echo_header, as an operation",
              "protocol": "mcp", "config": {"upstream": "web", "tool": "echo_header",
                "arguments": {"name": "x-api-key"}}, "execution": {"mode": "unary"}}])",
                    {{"CRANK_FED_TEST_KEY", kUpstreamKey}});
        ASSERT_TRUE(becameReady(port_)) << process_->stderrText();
    }

    static void TearDownTestSuite() {
        CrankdSuite<FederationSuite>::TearDownTestSuite();
        if (httpFixture_ != nullptr) {
            httpFixture_->signal(SIGTERM);
            httpFixture_->waitForExit(std::chrono::seconds(10));
            delete httpFixture_;  // kills it by pid if it is still running
            httpFixture_ = nullptr;
        }
    }

    void SetUp() override {
        client_.emplace(port_);
        ASSERT_TRUE(client_->open());
    }

    Reply request(int id, const std::string& method, const std::string& params) const {
        return client_->post(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" +
                             method + R"(","params":)" + params + "}");
    }

    std::vector<std::string> toolNames() const {
        std::vector<std::string> names;
        const rapidjson::Document answer = answerOf(request(3, "tools/list", "{}"), 3);
        for (const auto& tool : answer["result"]["tools"].GetArray()) {
            names.emplace_back(tool["name"].GetString());
        }
        return names;
    }

    std::optional<McpClient> client_;
    static inline ChildProcess* httpFixture_ = nullptr;
};

TEST_F(FederationSuite, ACollidingNameIsPublishedOnceAndTheCollisionIsLogged) {
    const std::vector<std::string> names = toolNames();
    const auto count = [&](const std::string& name) {
        return std::count(names.begin(), names.end(), name);
    };
    // The fixture's own tools come once, from "first"; "second" adds nothing of its own.
    EXPECT_EQ(count("test_simple_text"), 1);
    EXPECT_EQ(count("slow_progress"), 1);
    // "third" publishes under its prefix.
    EXPECT_EQ(count("t.test_simple_text"), 1);
    EXPECT_EQ(count("t.echo"), 1);
    // The operation "echo" wins over first's (and second's) echo.
    EXPECT_EQ(count("echo"), 1);
    const std::string log = process_->stderrSoFar(std::chrono::milliseconds(300));
    EXPECT_NE(log.find(R"(upstream second: tool "test_simple_text" is not published: the name )"
                       R"("test_simple_text" is taken)"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find(R"(upstream first: tool "echo" is not published: the name "echo" is taken)"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("upstream second: resource test://static-text is listed by an earlier "
                       "upstream"),
              std::string::npos)
        << log;
}

TEST_F(FederationSuite, TheOperationRunsTheUpstreamToolAndThePrefixedToolAnswersAsItsOwn) {
    const rapidjson::Document op =
        answerOf(request(4, "tools/call", R"({"name":"echo","arguments":{"text":"hi"}})"), 4);
    ASSERT_TRUE(op.HasMember("result")) << op.IsObject();
    ASSERT_TRUE(op["result"].HasMember("structuredContent"));
    EXPECT_STREQ(op["result"]["structuredContent"]["content"][0]["text"].GetString(), "op:hi");

    const rapidjson::Document direct =
        answerOf(request(5, "tools/call", R"({"name":"t.echo","arguments":{"text":"hi"}})"), 5);
    ASSERT_TRUE(direct.HasMember("result"));
    EXPECT_STREQ(direct["result"]["content"][0]["text"].GetString(), "hi");
}

TEST_F(FederationSuite, TheClientsTraceContextReachesTheUpstreamInMeta) {
    const std::string parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const rapidjson::Document traced =
        answerOf(request(40, "tools/call",
                         R"({"name":"t.echo_trace","arguments":{},"_meta":{"traceparent":")" +
                             parent + R"(","tracestate":"rojo=00f067aa0ba902b7"}})"),
                 40);
    ASSERT_TRUE(traced.HasMember("result"));
    EXPECT_EQ(std::string(traced["result"]["content"][0]["text"].GetString()),
              "traceparent: " + parent + "; tracestate: rojo=00f067aa0ba902b7");
    // None sent, none passed on; a malformed one neither.
    for (const std::string meta : {"", R"(,"_meta":{"traceparent":"00-bad"})"}) {
        const rapidjson::Document plain = answerOf(
            request(41, "tools/call", R"({"name":"t.echo_trace","arguments":{})" + meta + "}"), 41);
        ASSERT_TRUE(plain.HasMember("result"));
        EXPECT_STREQ(plain["result"]["content"][0]["text"].GetString(),
                     "traceparent: ; tracestate: ");
    }
}

TEST_F(FederationSuite, AnUpstreamThatEchoesASecretHeaderGetsItScrubbed) {
    // The header reaches the upstream (the key made the difference) ...
    const rapidjson::Document other = answerOf(
        request(30, "tools/call", R"({"name":"w_echo_header","arguments":{"name":"accept"}})"), 30);
    ASSERT_TRUE(other.HasMember("result"));
    EXPECT_NE(std::string(other["result"]["content"][0]["text"].GetString()), "accept: ");
    // ... and what the upstream says back carries "[redacted]" in its place, federated or as an
    // operation.
    const Reply direct =
        request(31, "tools/call", R"({"name":"w_echo_header","arguments":{"name":"x-api-key"}})");
    const rapidjson::Document answer = answerOf(direct, 31);
    ASSERT_TRUE(answer.HasMember("result")) << direct.body;
    EXPECT_STREQ(answer["result"]["content"][0]["text"].GetString(), "x-api-key: [redacted]")
        << direct.body;
    const Reply op = request(32, "tools/call", R"({"name":"web_header","arguments":{}})");
    EXPECT_EQ(op.body.find("fedKey"), std::string::npos) << op.body;
    EXPECT_NE(op.body.find("x-api-key: [redacted]"), std::string::npos) << op.body;
    EXPECT_EQ(process_->stderrSoFar(std::chrono::milliseconds(100)).find("fedKey"),
              std::string::npos);
}

TEST_F(FederationSuite, EveryCallThatReachesAnUpstreamIsAuditedWithItsAgent) {
    const rapidjson::Document ok = answerOf(
        request(20, "tools/call", R"({"name":"t.echo","arguments":{"text":"audit"}})"), 20);
    ASSERT_TRUE(ok.HasMember("result"));
    const rapidjson::Document failed = answerOf(
        request(21, "tools/call", R"({"name":"t.test_error_handling","arguments":{}})"), 21);
    ASSERT_TRUE(failed.HasMember("result"));
    crank::store::StoreOptions options;
    options.path = storePath();
    auto opened = crank::store::openStore(options);
    ASSERT_TRUE(static_cast<bool>(opened)) << opened.error().message;
    crank::store::AuditQuery q;
    q.action = "upstream.call";
    q.limit = 1000;
    // Written behind the call (runtime::AuditLog, as every call's): wait for the last one,
    // bounded.
    crank::Result<std::vector<crank::store::AuditEvent>> found = (*opened)->queryAudit(q);
    crank::testing::eventually(
        [&] {
            found = (*opened)->queryAudit(q);
            return found && std::any_of(found->begin(), found->end(), [](const auto& e) {
                       return e.detail_json.find(R"("name":"test_error_handling")") !=
                              std::string::npos;
                   });
        },
        std::chrono::seconds(10));
    ASSERT_TRUE(static_cast<bool>(found));
    int echo = 0;
    int toolError = 0;
    for (const auto& e : *found) {
        EXPECT_EQ(e.workspace_id, "default");
        EXPECT_EQ(e.agent_id, "anonymous");
        // The suite calls the tools of "third" and of "web" (the secret header test) only.
        EXPECT_TRUE(e.operation_id == "third" || e.operation_id == "web") << e.operation_id;
        if (e.detail_json.find(R"("name":"echo")") != std::string::npos && e.outcome == "ok") {
            ++echo;
        }
        if (e.detail_json.find(R"("name":"test_error_handling")") != std::string::npos &&
            e.outcome == "tool_error") {
            ++toolError;
        }
    }
    EXPECT_GE(echo, 1);
    EXPECT_EQ(toolError, 1);
}

TEST_F(FederationSuite, TheUpstreamsErrorsReachTheClientAsTheyAre) {
    // An unknown argument type: the fixture's SDK refuses it as a tool error.
    const rapidjson::Document bad =
        answerOf(request(6, "tools/call", R"({"name":"t.echo","arguments":{"text":42}})"), 6);
    ASSERT_TRUE(bad.HasMember("result") || bad.HasMember("error"));
    if (bad.HasMember("result")) {
        EXPECT_TRUE(bad["result"]["isError"].GetBool());
    }
    // A resource nobody serves: the MCP "resource not found" error, with the URI.
    const rapidjson::Document missing =
        answerOf(request(7, "resources/read", R"({"uri":"test://no-such-resource"})"), 7);
    ASSERT_TRUE(missing.HasMember("error"));
    EXPECT_EQ(missing["error"]["code"].GetInt(), -32002);
    EXPECT_STREQ(missing["error"]["data"]["uri"].GetString(), "test://no-such-resource");
    // A prompt nobody publishes.
    const rapidjson::Document prompt =
        answerOf(request(8, "prompts/get", R"({"name":"no_such_prompt"})"), 8);
    ASSERT_TRUE(prompt.HasMember("error"));
    EXPECT_EQ(prompt["error"]["code"].GetInt(), -32602);
}

TEST_F(FederationSuite, AnUpstreamThatCannotStartLeavesTheOthersWorking) {
    const std::string log = process_->stderrSoFar(std::chrono::milliseconds(300));
    EXPECT_NE(log.find("upstream broken: tools/list: "), std::string::npos) << log;
    EXPECT_NE(log.find("/nonexistent/mcp-server"), std::string::npos) << log;
    // The others answer (a prompt of third's, by its published name).
    const rapidjson::Document prompt =
        answerOf(request(9, "prompts/get", R"({"name":"t.test_simple_prompt"})"), 9);
    ASSERT_TRUE(prompt.HasMember("result")) << prompt.HasMember("error");
    EXPECT_TRUE(prompt["result"]["messages"].IsArray());
}

TEST_F(FederationSuite, HostileCatalogRequestsGetErrorsThatNameTheProblem) {
    const rapidjson::Document cursor =
        answerOf(request(10, "resources/list", R"({"cursor":"zz"})"), 10);
    ASSERT_TRUE(cursor.HasMember("error"));
    EXPECT_EQ(cursor["error"]["code"].GetInt(), -32602);
    EXPECT_NE(std::string(cursor["error"]["message"].GetString()).find("invalid cursor"),
              std::string::npos);
    const rapidjson::Document noUri = answerOf(request(11, "resources/read", "{}"), 11);
    ASSERT_TRUE(noUri.HasMember("error"));
    EXPECT_NE(std::string(noUri["error"]["message"].GetString()).find("params.uri is required"),
              std::string::npos);
    const rapidjson::Document ref = answerOf(
        request(12, "completion/complete", R"({"ref":{"type":"ref/nothing"},"argument":{}})"), 12);
    ASSERT_TRUE(ref.HasMember("error"));
    EXPECT_NE(std::string(ref["error"]["message"].GetString()).find("unknown ref.type"),
              std::string::npos);
    const rapidjson::Document task =
        answerOf(request(13, "tasks/get", R"({"taskId":"up-0123456789abcdef"})"), 13);
    ASSERT_TRUE(task.HasMember("error"));
    EXPECT_EQ(task["error"]["code"].GetInt(), -32602);
}

// Issue 45: resultType, ttlMs and cacheScope are crankd's to set on a 2026-era answer. A 2025-era
// upstream whose result carries them (input_required asking for a capability the client never
// declared, public for a day) has them removed; crankd's own go in.
TEST_F(FederationSuite, AnUpstreamsResultCannotSetTheMembersCrankdSets) {
    const std::string meta = R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                             R"("io.modelcontextprotocol/clientCapabilities":{},)"
                             R"("io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}})";
    const Reply reply = exchange(
        port_, "POST", "/mcp",
        {{"Content-Type", "application/json"},
         {"Accept", kAccept},
         {"MCP-Protocol-Version", "2026-07-28"},
         {"Mcp-Method", "tools/call"},
         {"Mcp-Name", "leaky_result_members"}},
        R"({"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"leaky_result_members",)"
        R"("arguments":{},)" +
            meta + "}}");
    ASSERT_EQ(reply.status, 200) << reply.body;
    const rapidjson::Document answer = answerOf(reply, 40);
    ASSERT_TRUE(answer.HasMember("result")) << reply.body;
    const rapidjson::Value& result = answer["result"];
    EXPECT_STREQ(result["resultType"].GetString(), "complete") << reply.body;
    EXPECT_FALSE(result.HasMember("ttlMs")) << reply.body;
    EXPECT_FALSE(result.HasMember("cacheScope")) << reply.body;
    EXPECT_STREQ(result["content"][0]["text"].GetString(), "leaky");
}

// Issue 45: resources/read, prompts/get and completion/complete routed to an upstream take the
// upstream's slots and the node's call slots as tools/call does. Reads of a slow resource beyond
// server.max_calls_per_upstream (9 of the default 12 call slots with 16 workers) are refused at
// once, naming the limit, and /healthz answers while the others still wait on the upstream.
// Before, every read held a worker until the upstream answered: /healthz waited behind them.
TEST_F(FederationSuite, ReadsOfASlowUpstreamTakeCallSlotsAndLeaveWorkersFree) {
    constexpr int kReads = 20;  // more than the 16 workers
    constexpr int kPerUpstream = 9;
    std::vector<Reply> replies(kReads);
    std::atomic<int> finished{0};
    std::atomic<int> read{0};  // the reads the upstream answered
    std::vector<std::thread> readers;
    readers.reserve(kReads);
    for (int i = 0; i < kReads; ++i) {
        readers.emplace_back([&, i] {
            replies[i] = request(100 + i, "resources/read", R"({"uri":"test://slow/6000"})");
            if (replies[i].body.find("read after 6000 ms") != std::string::npos) {
                ++read;
            }
            ++finished;
        });
    }
    // The refused reads come back at once; the others wait on the upstream for 6 s.
    for (int i = 0; i < 400 && finished.load() < kReads - kPerUpstream; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const Reply health = exchange(port_, "GET", "/healthz", {});
    const int readAtHealth = read.load();
    for (std::thread& t : readers) {
        t.join();
    }
    EXPECT_EQ(health.status, 200);
    EXPECT_EQ(readAtHealth, 0) << "/healthz waited for workers that slow reads held";
    int refused = 0;
    for (int i = 0; i < kReads; ++i) {
        const rapidjson::Document answer = answerOf(replies[i], 100 + i);
        if (answer.HasMember("error")) {
            ++refused;
            // Past the upstream's 9, or past the node's 12 call slots, whichever came first.
            const std::string message = answer["error"]["message"].GetString();
            EXPECT_EQ(message.rfind("resources/read: ", 0), 0U) << message;
            EXPECT_TRUE(message.find("(server.max_calls_per_upstream: 9)") != std::string::npos ||
                        message.find("(server.max_concurrent_calls: ") != std::string::npos)
                << message;
        }
    }
    EXPECT_EQ(read.load(), kPerUpstream);
    EXPECT_EQ(refused, kReads - kPerUpstream);
    // The slots came back: the next read goes through.
    const rapidjson::Document again =
        answerOf(request(130, "resources/read", R"({"uri":"test://slow/0"})"), 130);
    EXPECT_TRUE(again.HasMember("result"));
}

}  // namespace
}  // namespace crank::testing

namespace crank::testing {
namespace {

// Issue 45: SIGTERM with calls to a federated upstream in flight. At the end of
// server.shutdown_grace_ms, the calls still waiting on the upstream (a tools/call and a catalog
// request) are cancelled, their upstream is told (notifications/cancelled), they answer, and
// crankd exits; before, the worker pool was joined first and crankd stopped only when the
// upstream answered or the call timed out (40 s here).
/// An upstream whose `tools` policy publishes only some of its tools, one renamed (its prefix
/// is "kept_"), alone on its crankd (its calls are audited apart from the main suite's).
class FederationToolPolicySuite : public CrankdSuite<FederationToolPolicySuite> {
protected:
    static void SetUpTestSuite() {
        startCrankd(
            R"("admin": {"token": {"env": "CRANK_POLICY_ADMIN_TOKEN"}}, "upstreams": [)" +
                fixtureUpstream("kept", R"("tools": {"allow": ["test_*", "echo"],
                        "deny": ["test_simple_*"], "rename": {"echo": "kept_say"}},
                        "rate": {"calls_per_second": 0.001, "burst": 2})") +
                R"(, {"name": "broken", "config": {"command": "/nonexistent/mcp-server"}}])",
            {{"CRANK_POLICY_ADMIN_TOKEN", kAdminToken}});
        ASSERT_TRUE(becameReady(port_)) << process_->stderrText();
    }

    static constexpr const char* kAdminToken = "policy-admin-token-3x9Q";

    static Reply admin(const std::string& path) {
        return exchange(port_, "GET", "/admin/api/" + path,
                        {{"Authorization", std::string("Bearer ") + kAdminToken}});
    }
};

TEST_F(FederationToolPolicySuite, AnUpstreamsRateBoundsEachOfItsToolsOnItsOwn) {
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    // A burst of 2 and one call every 1000 s: each tool two calls, then a refusal.
    for (int i = 0; i < 3; ++i) {
        const rapidjson::Document result = client.callTool("kept_test_audio_content", "{}");
        const bool refused = result.HasMember("isError") && result["isError"].GetBool();
        EXPECT_EQ(refused, i == 2) << i << ": " << jsonText(result);
        if (refused) {
            const std::string text = result["content"][0]["text"].GetString();
            EXPECT_NE(text.find("tool kept_test_audio_content's rate limit"), std::string::npos)
                << text;
        }
    }
    const rapidjson::Document other = client.callTool("kept_test_image_content", "{}");
    EXPECT_FALSE(other.HasMember("isError") && other["isError"].GetBool()) << jsonText(other);
}

TEST_F(FederationToolPolicySuite, TheAdminApiShowsEachUpstreamsStatusAndWhatItsPolicyLeftOut) {
    const Reply all = admin("upstreams");
    ASSERT_EQ(all.status, 200) << all.body;
    const rapidjson::Document list = all.json();
    ASSERT_TRUE(list["upstreams"].IsArray()) << all.body;
    ASSERT_EQ(list["upstreams"].Size(), 2U) << all.body;  // kept, broken
    const rapidjson::Value& kept = list["upstreams"][0];
    EXPECT_STREQ(kept["name"].GetString(), "kept");
    EXPECT_STREQ(kept["source"].GetString(), "config");
    EXPECT_TRUE(kept["read_only"].GetBool());
    EXPECT_GT(kept["tools"].GetInt(), 5);  // as the upstream lists them
    EXPECT_STREQ(kept["last_error"].GetString(), "");
    EXPECT_TRUE(kept["connection"].IsObject());
    std::string filtered;
    for (const auto& why : kept["filtered"].GetArray()) {
        filtered += std::string(why.GetString()) + "\n";
    }
    EXPECT_NE(filtered.find(R"(tool "test_simple_text" is not published: )"
                            R"(upstreams[kept].tools.deny has "test_simple_*")"),
              std::string::npos)
        << filtered;
    EXPECT_EQ(filtered.find(R"(tool "echo")"), std::string::npos) << filtered;  // renamed only

    // Its tools as it lists them: what is published under which name, what is not and why.
    const Reply tools = admin("upstreams/kept/tools?limit=1000");
    ASSERT_EQ(tools.status, 200) << tools.body;
    std::map<std::string, std::string> shown;         // its name -> published_as, or why_not
    const rapidjson::Document listed = tools.json();  // alive for the whole loop
    for (const auto& tool : listed["tools"].GetArray()) {
        shown[tool["name"].GetString()] = tool["published_as"].IsString()
                                              ? tool["published_as"].GetString()
                                              : tool["why_not"].GetString();
    }
    EXPECT_EQ(shown["echo"], "kept_say");
    EXPECT_EQ(shown["test_image_content"], "kept_test_image_content");
    EXPECT_NE(shown["test_simple_text"].find(R"(tools.deny has "test_simple_*")"),
              std::string::npos)
        << shown["test_simple_text"];

    const Reply one = admin("upstreams/kept");
    ASSERT_EQ(one.status, 200) << one.body;
    EXPECT_STREQ(one.json()["upstream"]["name"].GetString(), "kept");
    const Reply none = admin("upstreams/nope");
    EXPECT_EQ(none.status, 404) << none.body;
    EXPECT_NE(none.body.find(R"(no upstream \"nope\")"), std::string::npos) << none.body;
    const Reply anonymous = exchange(port_, "GET", "/admin/api/upstreams", {});
    EXPECT_EQ(anonymous.status, 401) << anonymous.body;
}

TEST_F(FederationToolPolicySuite, ATestConnectionOpensPingsAndClosesAConnectionOfItsOwn) {
    const auto post = [](const std::string& path) {
        return exchange(port_, "POST", "/admin/api/" + path,
                        {{"Authorization", std::string("Bearer ") + kAdminToken}});
    };
    const Reply ok = post("upstreams/kept/test");
    ASSERT_EQ(ok.status, 200) << ok.body;
    const rapidjson::Document test = ok.json();
    EXPECT_STREQ(test["test"]["name"].GetString(), "kept");
    EXPECT_TRUE(test["test"]["ok"].GetBool()) << ok.body;
    EXPECT_GE(test["test"]["open_ms"].GetInt64(), 0);
    EXPECT_GE(test["test"]["ping_ms"].GetInt64(), 0);
    EXPECT_TRUE(test["test"]["connection"].IsObject()) << ok.body;
    // The live connection is not the one tested: the upstream's tools still run.
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    const rapidjson::Document image = client.callTool("kept_test_image_content", "{}");
    EXPECT_TRUE(image.HasMember("content")) << jsonText(image);

    // A broken upstream: a clear reason, not a hang.
    const Reply broken = post("upstreams/broken/test");
    ASSERT_EQ(broken.status, 200) << broken.body;
    const rapidjson::Document failed = broken.json();
    EXPECT_FALSE(failed["test"]["ok"].GetBool()) << broken.body;
    EXPECT_NE(std::string(failed["test"]["detail"].GetString()).find("/nonexistent/mcp-server"),
              std::string::npos)
        << broken.body;

    EXPECT_EQ(post("upstreams/nope/test").status, 404);
    EXPECT_EQ(admin("upstreams/kept/test").status, 405);  // GET
}

TEST_F(FederationToolPolicySuite, AnUpstreamsToolsPolicyPublishesOnlyWhatItAllowsUnderItsNames) {
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    std::vector<std::string> names;
    const rapidjson::Document list =
        answerOf(client.post(R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}})"), 3);
    for (const auto& tool : list["result"]["tools"].GetArray()) {
        names.emplace_back(tool["name"].GetString());
    }
    const auto listed = [&](const std::string& name) {
        return std::count(names.begin(), names.end(), name) == 1;
    };
    EXPECT_TRUE(listed("kept_test_image_content"));  // allowed by "test_*"
    EXPECT_TRUE(listed("kept_say"));                 // "echo", renamed
    EXPECT_FALSE(listed("kept_echo"));
    EXPECT_FALSE(listed("kept_test_simple_text"));  // denied
    EXPECT_FALSE(listed("kept_slow_progress"));     // not allowed
    // Not listed, and not callable either.
    const rapidjson::Document denied = answerOf(
        client.post(R"({"jsonrpc":"2.0","id":60,"method":"tools/call","params":)" +
                    std::string(R"({"name":"kept_test_simple_text","arguments":{}})") + "}"),
        60);
    EXPECT_FALSE(denied.HasMember("result") &&
                 !(denied["result"].HasMember("isError") && denied["result"]["isError"].GetBool()))
        << jsonText(denied);
    // The renamed tool runs the upstream's own.
    const rapidjson::Document said =
        answerOf(client.post(R"({"jsonrpc":"2.0","id":61,"method":"tools/call","params":)" +
                             std::string(R"({"name":"kept_say","arguments":{"text":"hi"}})") + "}"),
                 61);
    ASSERT_TRUE(said.HasMember("result")) << jsonText(said);
    EXPECT_STREQ(said["result"]["content"][0]["text"].GetString(), "hi");
    // What the policy kept out is told, with the reason.
    const std::string log = process_->stderrSoFar(std::chrono::milliseconds(300));
    EXPECT_NE(log.find(R"(upstream kept: tool "test_simple_text" is not published: )"
                       R"(upstreams[kept].tools.deny has "test_simple_*")"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find(R"(upstream kept: tool "slow_progress" is not published: )"
                       R"(upstreams[kept].tools.allow matches none of its names)"),
              std::string::npos)
        << log;
}

class FederationShutdownSuite : public CrankdSuite<FederationShutdownSuite> {};

TEST_F(FederationShutdownSuite, CallsInFlightAreCancelledWhenTheGracePeriodEnds) {
    startCrankd(R"("server": {"shutdown_grace_ms": 2000}, "upstreams": [{"name": "slow",
        "naming": "keep", "config": {"command": ")" CRANK_NODE_PATH
                R"(", "args": [")" CRANK_FIXTURE_SERVER
                R"(", "--stdio"], "request_timeout_ms": 120000,
        "close_wait_ms": 500, "term_wait_ms": 500}}])");
    ASSERT_TRUE(becameReady(port_)) << process_->stderrText();
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    Reply called;
    Reply read;
    std::thread caller([&] {
        called = client.post(
            R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow_progress",)"
            R"("arguments":{"steps":200,"delay_ms":200}}})");
    });
    std::thread reader([&] {
        read = client.post(
            R"({"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"test://slow/40000"}})");
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // both reach the upstream
    const auto signalled = std::chrono::steady_clock::now();
    process_->signal(SIGTERM);
    const std::optional<int> status = process_->waitForExit(std::chrono::seconds(30));
    const auto stopped = std::chrono::steady_clock::now() - signalled;
    caller.join();
    reader.join();
    const std::string log = process_->stderrText();
    EXPECT_EQ(status, 0) << log;
    // The grace period (2 s), the cancelled calls' answers and the upstream's close: well
    // within the 40 s the upstream would have taken.
    EXPECT_LT(stopped, std::chrono::seconds(15)) << log;
    EXPECT_NE(log.find("slow_progress: cancelled after"), std::string::npos)
        << "the upstream was not told of the cancellation:\n"
        << log;
    EXPECT_NE(called.body.find("cancelled"), std::string::npos) << called.body;
    EXPECT_NE(read.body.find("cancelled"), std::string::npos) << read.body;
    delete process_;
    process_ = nullptr;
}

}  // namespace
}  // namespace crank::testing

namespace crank::testing {
namespace {

// Issue 45: a stdio upstream's wire ties none of its requests to clients to a call. Before, with
// two calls in flight its request was refused at once, so one client leaving a question
// unanswered (a held call of MCP 2026-07-28 waits up to mcp.request_state_ttl_ms) made every
// other call's questions fail for that whole time. Now a request waits until one call is left to
// be its own, and an unanswered question of another call keeps it waiting at most
// blocking_question_ms.
class FederationQuestionsSuite : public CrankdSuite<FederationQuestionsSuite> {
protected:
    static void SetUpTestSuite() {
        startCrankd(
            R"("upstreams": [)" +
            fixtureUpstream("asker", R"("naming": "keep")",
                            R"("blocking_question_ms": 300, "unrouted_request_wait_ms": 20000)") +
            "]");
        ASSERT_TRUE(becameReady(port_)) << process_->stderrText();
    }

    /// A 2026-07-28 tools/call of test_elicitation (`message`) declaring elicitation, with
    /// `more` members (without braces) besides its arguments.
    static Reply elicit(int id, const std::string& message, const std::string& more = "") {
        const std::string body =
            R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
            R"(,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":")" +
            message + "\"}" + (more.empty() ? "" : ",") + more +
            R"(,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
            R"("io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},)"
            R"("io.modelcontextprotocol/clientInfo":{"name":"questions-test","version":"1"}}}})";
        return exchange(port_, "POST", "/mcp",
                        {{"Content-Type", "application/json"},
                         {"Accept", "application/json, text/event-stream"},
                         {"MCP-Protocol-Version", "2026-07-28"},
                         {"Mcp-Method", "tools/call"},
                         {"Mcp-Name", "test_elicitation"}},
                        body);
    }
};

// A question that waits while two calls are in flight, whose own call is then cancelled, is
// refused: it never reaches the other call's client (which might be another agent's), even
// though that call is the only one left.
TEST_F(FederationQuestionsSuite, AQuestionOfACancelledCallNeverReachesAnotherClient) {
    // Another client's call keeps running for 3 s, declaring elicitation.
    Reply bystander;
    std::thread other([&] {
        bystander = exchange(
            port_, "POST", "/mcp",
            {{"Content-Type", "application/json"},
             {"Accept", "application/json, text/event-stream"},
             {"MCP-Protocol-Version", "2026-07-28"},
             {"Mcp-Method", "tools/call"},
             {"Mcp-Name", "slow_progress"}},
            R"({"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"slow_progress",)"
            R"("arguments":{"steps":1,"delay_ms":3000},)"
            R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
            R"("io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}})");
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    {
        // This call's question waits (two calls in flight); then its client goes away.
        SseReader asking(
            port_, "POST",
            {{"Content-Type", "application/json"},
             {"Accept", "application/json, text/event-stream"},
             {"MCP-Protocol-Version", "2026-07-28"},
             {"Mcp-Method", "tools/call"},
             {"Mcp-Name", "test_elicitation"}},
            R"({"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"test_elicitation",)"
            R"("arguments":{"message":"SECRET of the cancelled call"},)"
            R"("_meta":{"progressToken":"p21","io.modelcontextprotocol/protocolVersion":)"
            R"("2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}})");
        ASSERT_NE(asking.head().find("200 OK"), std::string::npos) << asking.head();
        std::this_thread::sleep_for(std::chrono::milliseconds(700));
    }
    other.join();
    const rapidjson::Document done = bystander.json();
    ASSERT_TRUE(done.IsObject() && done.HasMember("result")) << bystander.body;
    EXPECT_STREQ(done["result"]["resultType"].GetString(), "complete") << bystander.body;
    EXPECT_EQ(bystander.body.find("SECRET"), std::string::npos) << bystander.body;
    EXPECT_NE(bystander.body.find("completed 1 steps"), std::string::npos) << bystander.body;
}

TEST_F(FederationQuestionsSuite, AnUnansweredQuestionHoldsUpOtherCallsQuestionsOnlyBriefly) {
    // The first call's question goes to its client, which never answers.
    const rapidjson::Document first = elicit(1, "first?").json();
    ASSERT_TRUE(first.IsObject() && first.HasMember("result")) << process_->stderrText();
    EXPECT_STREQ(first["result"]["resultType"].GetString(), "input_required");

    // The second call's question reaches its own client: the first question was given up
    // (its server told) after 300 ms, its call ended, and the second call was the one left.
    const Reply asked = elicit(2, "second?");
    const rapidjson::Document second = asked.json();
    ASSERT_TRUE(second.IsObject() && second.HasMember("result")) << asked.body;
    ASSERT_STREQ(second["result"]["resultType"].GetString(), "input_required") << asked.body;
    const rapidjson::Value& questions = second["result"]["inputRequests"];
    ASSERT_TRUE(questions.IsObject() && questions.MemberCount() == 1) << asked.body;
    const std::string key = questions.MemberBegin()->name.GetString();
    EXPECT_STREQ(questions[key.c_str()]["method"].GetString(), "elicitation/create");
    EXPECT_STREQ(questions[key.c_str()]["params"]["message"].GetString(), "second?") << asked.body;

    const Reply done =
        elicit(3, "second?",
               R"("inputResponses":{")" + key +
                   R"(":{"action":"accept","content":{"username":"bob","email":"b@x"}}},)"
                   R"("requestState":")" +
                   second["result"]["requestState"].GetString() + "\"");
    const rapidjson::Document result = done.json();
    ASSERT_TRUE(result.IsObject() && result.HasMember("result")) << done.body;
    EXPECT_NE(std::string(result["result"]["content"][0]["text"].GetString()).find("action=accept"),
              std::string::npos)
        << done.body;
    EXPECT_NE(done.body.find("bob"), std::string::npos) << done.body;
}

}  // namespace
}  // namespace crank::testing

namespace crank::testing {
namespace {

// Issue 25: notifications.resourceSubscriptions of a 2026-07-28 listen. The listen subscribes on
// the workspace's catalog (the upstream is told once), acknowledges the resources it could,
// gets their resources/updated tagged with its id, and its subscriptions end with its stream;
// a 2025 session's end with the session (before, an upstream stayed subscribed for ever).
class FederationListenSuite : public CrankdSuite<FederationListenSuite> {
protected:
    static void SetUpTestSuite() {
        startCrankd(R"("upstreams": [)" + fixtureUpstream("watched", R"("naming": "keep")") + "]");
        ASSERT_TRUE(becameReady(port_)) << process_->stderrText();
    }

    /// The text a 2025 session's call of the fixture tool `tool` returns.
    static std::string toolText(const std::string& tool, const std::string& arguments = "{}") {
        McpClient client(port_);
        if (!client.open()) {
            return "";
        }
        const rapidjson::Document result = client.callTool(tool, arguments);
        return result.HasMember("content") ? result["content"][0]["text"].GetString() : "";
    }

    /// `client`'s session subscribes to test://watched-resource; false (and a failure) if not.
    static bool subscribeToWatched(const McpClient& client) {
        const Reply reply = client.post(R"({"jsonrpc":"2.0","id":3,"method":"resources/subscribe",)"
                                        R"("params":{"uri":"test://watched-resource"}})");
        EXPECT_EQ(reply.status, 200) << reply.body;
        return reply.status == 200;
    }

    /// True once the fixture's subscriptions are `expected` (JSON text), within 10 s.
    static bool subscribedBecomes(const std::string& expected) {
        for (int i = 0; i < 100; ++i) {
            if (toolText("subscribed_resources") == expected) {
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return false;
    }
};

TEST_F(FederationListenSuite, AListenFollowsItsResourcesUntilItCloses) {
    ASSERT_TRUE(subscribedBecomes("[]"));
    {
        SseReader listen(
            port_, "POST",
            {{"Content-Type", "application/json"},
             {"Accept", "application/json, text/event-stream"},
             {"MCP-Protocol-Version", "2026-07-28"},
             {"Mcp-Method", "subscriptions/listen"}},
            R"({"jsonrpc":"2.0","id":"watch-1","method":"subscriptions/listen","params":{)"
            R"("notifications":{"resourceSubscriptions":["test://watched-resource",)"
            R"("test://other-resource","test://watched-resource"]},)"
            R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
            R"("io.modelcontextprotocol/clientCapabilities":{}}}})");
        ASSERT_NE(listen.head().find("200 OK"), std::string::npos) << listen.head();
        const auto ack = listen.next();
        ASSERT_TRUE(ack);
        // Each once (the workspace's only upstream serves every URI, and takes both).
        EXPECT_NE(ack->data.find(R"("resourceSubscriptions":["test://watched-resource",)"
                                 R"("test://other-resource"])"),
                  std::string::npos)
            << ack->data;
        EXPECT_EQ(toolText("subscribed_resources"),
                  R"(["test://other-resource","test://watched-resource"])");

        EXPECT_EQ(toolText("touch_resource", R"({"uri":"test://watched-resource"})"), "touched");
        const auto updated = listen.next();
        ASSERT_TRUE(updated);
        rapidjson::Document doc;
        doc.Parse(updated->data.c_str());
        ASSERT_TRUE(doc.IsObject()) << updated->data;
        EXPECT_STREQ(doc["method"].GetString(), "notifications/resources/updated");
        EXPECT_STREQ(doc["params"]["uri"].GetString(), "test://watched-resource");
        EXPECT_STREQ(doc["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].GetString(),
                     "watch-1");
    }
    // The stream closed: the last subscriber is gone, and the upstream is told.
    EXPECT_TRUE(subscribedBecomes("[]")) << toolText("subscribed_resources");
}

/// The pid of a child of `parent` whose command name is `name`; 0 when there is none.
pid_t childNamed(pid_t parent, const std::string& name) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string pid = entry.path().filename().string();
        if (pid.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        std::ifstream in(entry.path() / "stat");
        std::string stat;
        std::getline(in, stat);
        const std::size_t open = stat.find('(');
        const std::size_t close = stat.rfind(')');
        if (open == std::string::npos || close == std::string::npos) {
            continue;
        }
        std::istringstream rest(stat.substr(close + 2));
        char state = 0;
        pid_t ppid = 0;
        rest >> state >> ppid;
        if (ppid == parent && stat.substr(open + 1, close - open - 1) == name) {
            return static_cast<pid_t>(std::stol(pid));
        }
    }
    return 0;
}

TEST_F(FederationListenSuite, SubscriptionsSurviveARestartOfTheUpstream) {
    ASSERT_TRUE(subscribedBecomes("[]"));
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    ASSERT_TRUE(subscribeToWatched(client));
    ASSERT_EQ(toolText("subscribed_resources"), R"(["test://watched-resource"])");
    // The server dies (a crash); a later request starts it again, and crank subscribes anew.
    // The request that finds it dead fails (it may have had effects, so it is not sent again).
    const pid_t server = childNamed(process_->pid(), "node");
    ASSERT_GT(server, 0);
    ASSERT_EQ(::kill(server, SIGKILL), 0);
    McpClient observer(port_);
    ASSERT_TRUE(observer.open());
    std::string seen;
    for (int i = 0; i < 100 && seen != R"(["test://watched-resource"])"; ++i) {
        const Reply reply =
            observer.post(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":)"
                          R"("subscribed_resources","arguments":{}}})");
        const rapidjson::Document doc = reply.json();
        seen = doc.IsObject() && doc.HasMember("result") && doc["result"].HasMember("content")
                   ? doc["result"]["content"][0]["text"].GetString()
                   : reply.body;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(seen, R"(["test://watched-resource"])");
    ASSERT_EQ(
        exchange(port_, "DELETE", "/mcp",
                 {{"Mcp-Session-Id", client.session()}, {"MCP-Protocol-Version", "2025-11-25"}})
            .status,
        200);
    EXPECT_TRUE(subscribedBecomes("[]"));
}

// A session that only receives resources/updated is idle: it expires, and its subscription with
// it (before, every delivery marked it used, so it never did).
class FederationIdleSessionSuite : public FederationListenSuite {
protected:
    static void SetUpTestSuite() {
        startCrankd(R"("mcp": {"session_idle_timeout_ms": 1500}, "upstreams": [)" +
                    fixtureUpstream("watched", R"("naming": "keep")") + "]");
        ASSERT_TRUE(becameReady(port_)) << process_->stderrText();
    }
};

TEST_F(FederationIdleSessionSuite, NotificationsDoNotKeepASessionAlive) {
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    ASSERT_TRUE(subscribeToWatched(client));
    // Updates keep coming, every 300 ms (each from a new session of another client), while the
    // session must expire after 1.5 s: its subscription then goes upstream.
    // The session may expire between a check and the next touch: the upstream then answers "not
    // subscribed", which is the expiry seen first.
    bool expired = false;
    int touched = 0;
    for (int i = 0; i < 40 && !expired; ++i) {
        const std::string touch =
            toolText("touch_resource", R"({"uri":"test://watched-resource"})");
        if (touch == "not subscribed") {
            expired = true;
            break;
        }
        EXPECT_EQ(touch, "touched");
        ++touched;
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        expired = toolText("subscribed_resources") == "[]";
    }
    EXPECT_TRUE(expired) << "resources/updated kept the idle session alive";
    EXPECT_GE(touched, 2) << "the session expired before updates reached it";
    EXPECT_EQ(toolText("subscribed_resources"), "[]");
    EXPECT_EQ(client.post(R"({"jsonrpc":"2.0","id":4,"method":"ping"})").status, 404);
}

TEST_F(FederationListenSuite, ASessionsSubscriptionsEndWithTheSession) {
    ASSERT_TRUE(subscribedBecomes("[]"));
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    ASSERT_TRUE(subscribeToWatched(client));
    EXPECT_EQ(toolText("subscribed_resources"), R"(["test://watched-resource"])");
    const Reply deleted =
        exchange(port_, "DELETE", "/mcp",
                 {{"Mcp-Session-Id", client.session()}, {"MCP-Protocol-Version", "2025-11-25"}});
    ASSERT_EQ(deleted.status, 200) << deleted.body;
    EXPECT_TRUE(subscribedBecomes("[]")) << toolText("subscribed_resources");
}

}  // namespace
}  // namespace crank::testing
