// The 2026-07-28 era of the mcp plugin's client over Streamable HTTP (streamable_modern.cpp,
// handshake.cpp, modern_tools.cpp, input_rounds.cpp) against a raw server (raw_server.h) that
// records what arrives: `_meta` and the routing headers on every POST and no session, the
// version retry on -32022, SSE answers that are never resumed, cancellation by closing the
// stream, the era chosen by server/discover (or initialize when the server does not know it),
// tools with an invalid x-mcp-header left out, MRTR rounds bounded, and headers that disagree
// with the body refused.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "http_connection.h"
#include "input_rounds.h"
#include "param_headers.h"
#include "raw_server.h"
#include "upstream_session.h"

namespace crank::mcpc {
namespace {

using namespace std::chrono_literals;
using rawhttp::answer;
using rawhttp::RawReply;
using rawhttp::RawRequest;
using rawhttp::RawServer;
using rawhttp::reply;
using rawhttp::sse;

constexpr const char* kDiscover =
    R"({"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},)"
    R"("instructions":"modern","serverInfo":{"name":"raw","version":"9"},"ttlMs":0,)"
    R"("cacheScope":"public"})";

rapidjson::Document parsed(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    return doc;
}

std::string methodOf(const RawRequest& r) {
    const rapidjson::Document doc = parsed(r.body);
    return doc.IsObject() && doc.HasMember("method") && doc["method"].IsString()
               ? doc["method"].GetString()
               : "";
}

std::unique_ptr<HttpConnection> modernTo(const RawServer& server) {
    HttpOptions o;
    o.url = server.url();
    o.connect_timeout = 2s;
    std::string error;
    auto c = HttpConnection::create(o, nullptr, nullptr, error);
    EXPECT_NE(c, nullptr) << error;
    EXPECT_TRUE(c->setModernVersion("2026-07-28"));
    return c;
}

UpstreamOptions sessionTo(const RawServer& server) {
    HttpOptions http;
    http.url = server.url();
    http.connect_timeout = 2s;
    UpstreamOptions o;
    o.transport = httpTransport(http);
    o.request_timeout = 5s;
    o.initialize_timeout = 5s;
    o.client_capabilities_json = R"({"elicitation":{}})";
    return o;
}

TEST(ModernHttp, EveryPostCarriesMetaAndRoutingHeadersAndNoSession) {
    RawServer server([](const RawRequest& r) { return answer(r, R"({"content":[]})"); });
    auto c = modernTo(server);
    std::string why;
    const rapidjson::Document schema = parsed(
        R"({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}})");
    const auto mirrored = readMirroredParams(schema, why);
    ASSERT_TRUE(mirrored.has_value()) << why;
    RequestHooks hooks;
    hooks.mirrored = &*mirrored;
    hooks.client_capabilities_json = R"({"sampling":{}})";
    const RpcOutcome r =
        c->request("tools/call", R"({"name":"geo","arguments":{"region":"eu"}})", 5s, hooks);
    ASSERT_TRUE(r.ok) << r.error_message;
    const std::vector<RawRequest> seen = server.requests();
    ASSERT_EQ(seen.size(), 1U);
    EXPECT_EQ(seen[0].header("mcp-protocol-version"), "2026-07-28");
    EXPECT_EQ(seen[0].header("mcp-method"), "tools/call");
    EXPECT_EQ(seen[0].header("mcp-name"), "geo");
    EXPECT_EQ(seen[0].header("mcp-param-region"), "eu");
    EXPECT_EQ(seen[0].header("mcp-session-id"), "");
    const rapidjson::Document body = parsed(seen[0].body);
    const rapidjson::Value& meta = body["params"]["_meta"];
    EXPECT_STREQ(meta["io.modelcontextprotocol/protocolVersion"].GetString(), "2026-07-28");
    EXPECT_TRUE(meta["io.modelcontextprotocol/clientCapabilities"].HasMember("sampling"));
    // No notifications in this era: nothing is posted for them.
    EXPECT_FALSE(c->notify("notifications/roots/list_changed", ""));
    EXPECT_EQ(server.requests().size(), 1U);
}

// A hostile or broken server whose headers disagree with what it sends (issue 26): each answer
// is refused with an error that says what is wrong, and the connection goes on serving.
TEST(ModernHttp, HeadersThatDisagreeWithTheBodyAreRefusedWithAReasonAndNothingIsKept) {
    RawServer server([](const RawRequest& r) {
        const std::string rpc = R"({"jsonrpc":"2.0","id":)" + r.id() + R"(,"result":{"ok":1}})";
        const std::string name = r.header("mcp-name");
        if (name == "json-says-sse") {  // an SSE body under a JSON content type
            return reply(200, "application/json", "data: " + rpc + "\n\n");
        }
        if (name == "sse-says-json") {  // a JSON body under an SSE content type: no event
            return reply(200, "text/event-stream", rpc);
        }
        if (name == "other-id") {  // an answer to a request never made
            return answer(RawRequest{"POST", "/", {}, R"({"id":987654})"}, R"({"ok":2})");
        }
        if (name == "sessionful") {  // a session id the 2026 era has no use for
            return reply(200, "application/json", rpc,
                         "Mcp-Session-Id: s-1\r\nMCP-Protocol-Version: 2025-06-18\r\n");
        }
        if (name == "status-says-error") {  // a result under an error status
            return reply(500, "application/json", rpc);
        }
        return answer(r, R"({"ok":3})");
    });
    auto c = modernTo(server);
    const auto call = [&](const char* tool) {
        return c->request("tools/call", std::string(R"({"name":")") + tool + R"("})", 3s);
    };
    const std::vector<std::pair<const char*, const char*>> cases = {
        {"json-says-sse", "answered data that is not JSON"},
        {"sse-says-json", "ended the event stream before the answer"},
        {"other-id", "answered JSON without the answer"},
        {"status-says-error", "answered HTTP 500"},
    };
    for (const auto& [tool, why] : cases) {
        const RpcOutcome refused = call(tool);
        EXPECT_FALSE(refused.ok) << tool << ": " << refused.result_json;
        EXPECT_NE(refused.error_message.find(why), std::string::npos)
            << tool << ": " << refused.error_message;
    }
    // A session id and another version in the headers: the body is the answer, and nothing of
    // them is sent back.
    const RpcOutcome sessionful = call("sessionful");
    ASSERT_TRUE(sessionful.ok) << sessionful.error_message;
    EXPECT_EQ(sessionful.result_json, R"({"ok":1})");
    const RpcOutcome after = call("plain");
    ASSERT_TRUE(after.ok) << after.error_message;
    EXPECT_EQ(after.result_json, R"({"ok":3})");
    const std::vector<RawRequest> seen = server.requests();
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.back().header("mcp-session-id"), "");
    EXPECT_EQ(seen.back().header("mcp-protocol-version"), "2026-07-28");
}

TEST(ModernHttp, AnUnsupportedVersionIsTriedOnceMoreWithANewIdOnlyWhenCrankSpeaksOneListed) {
    int calls = 0;
    RawServer server([&calls](const RawRequest& r) {
        if (++calls == 1) {
            return reply(400, "application/json",
                         R"({"jsonrpc":"2.0","id":)" + r.id() +
                             R"(,"error":{"code":-32022,"message":"unsupported",)"
                             R"("data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}})");
        }
        return answer(r);
    });
    auto c = modernTo(server);
    const RpcOutcome r = c->request("tools/list", "{}", 5s);
    ASSERT_TRUE(r.ok) << r.error_message;
    const std::vector<RawRequest> seen = server.requests();
    ASSERT_EQ(seen.size(), 2U);
    EXPECT_NE(seen[0].id(), seen[1].id());

    RawServer other([](const RawRequest& request) {
        return reply(400, "application/json",
                     R"({"jsonrpc":"2.0","id":)" + request.id() +
                         R"(,"error":{"code":-32022,"message":"unsupported",)"
                         R"("data":{"supported":["2099-01-01"]}}})");
    });
    auto d = modernTo(other);
    const RpcOutcome refused = d->request("tools/list", "{}", 5s);
    EXPECT_FALSE(refused.ok);
    EXPECT_EQ(refused.error_code, -32022);
    EXPECT_EQ(other.requests().size(), 1U);
}

TEST(ModernHttp, AnSseAnswerBringsItsNotificationsFirstAndABrokenOneIsNotResumed) {
    RawServer server([](const RawRequest& r) {
        const std::string progress =
            R"(data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}})"
            "\n\n";
        if (r.body.find("\"broken\"") != std::string::npos) {
            return sse("id: e1\nretry: 10\n" + progress);  // ends without the answer
        }
        return sse(progress + "data: {\"jsonrpc\":\"2.0\",\"id\":" + r.id() +
                   ",\"result\":{\"ok\":true}}\n\n");
    });
    auto c = modernTo(server);
    std::vector<std::string> related;
    RequestHooks hooks;
    hooks.on_related = [&related](std::string_view m) { related.emplace_back(m); };
    const RpcOutcome ok = c->request("tools/call", R"({"name":"fine"})", 5s, hooks);
    ASSERT_TRUE(ok.ok) << ok.error_message;
    EXPECT_EQ(ok.result_json, R"({"ok":true})");
    ASSERT_EQ(related.size(), 1U);
    EXPECT_NE(related[0].find("notifications/progress"), std::string::npos);
    const RpcOutcome broken = c->request("tools/call", R"({"name":"broken"})", 5s, hooks);
    EXPECT_FALSE(broken.ok);
    EXPECT_NE(broken.error_message.find("not resumed"), std::string::npos) << broken.error_message;
    // No GET with Last-Event-ID: two POSTs in all.
    const std::vector<RawRequest> seen = server.requests();
    ASSERT_EQ(seen.size(), 2U);
    EXPECT_EQ(seen[1].method, "POST");
}

TEST(ModernHttp, ARequestOfTheServerOnA2026StreamIsDropped) {
    RawServer server([](const RawRequest& r) {
        std::string events;
        for (int i = 0; i < 3; ++i) {
            events += "data: {\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(900 + i) +
                      ",\"method\":\"ping\"}\n\n";
        }
        return sse(events + "data: {\"jsonrpc\":\"2.0\",\"id\":" + r.id() +
                   ",\"result\":{\"ok\":true}}\n\n");
    });
    auto c = modernTo(server);
    std::vector<std::string> related;
    RequestHooks hooks;
    hooks.on_related = [&related](std::string_view m) { related.emplace_back(m); };
    const RpcOutcome r = c->request("tools/call", R"({"name":"t"})", 5s, hooks);
    ASSERT_TRUE(r.ok) << r.error_message;
    EXPECT_TRUE(related.empty());  // nothing to answer: the revision has no such requests
    EXPECT_EQ(server.requests().size(), 1U);
}

TEST(ModernHttp, ACancelClosesTheStreamAndPostsNothing) {
    RawServer server([](const RawRequest&) { return sse(": waiting\n\n", true); });
    auto c = modernTo(server);
    const auto start = std::chrono::steady_clock::now();
    RequestHooks hooks;
    hooks.cancelled = [start] { return std::chrono::steady_clock::now() - start > 200ms; };
    const RpcOutcome r = c->request("tools/call", R"({"name":"slow"})", 10s, hooks);
    EXPECT_TRUE(r.cancelled) << r.error_message;
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(server.requests().size(), 1U);  // no notifications/cancelled
}

TEST(ModernHttp, DiscoverDecidesTheEraAndToolsWithAnInvalidHeaderAreLeftOut) {
    RawServer server([](const RawRequest& r) {
        const std::string method = methodOf(r);
        if (method == "server/discover") {
            return answer(r, kDiscover);
        }
        if (method == "tools/list") {
            return answer(
                r,
                R"({"resultType":"complete","tools":[)"
                R"({"name":"good","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}},)"
                R"({"name":"bad","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}}]})");
        }
        return answer(r, R"({"content":[]})");
    });
    UpstreamSession s(sessionTo(server), nullptr, nullptr);
    ASSERT_TRUE(s.connect()) << s.status().last_error;
    UpstreamStatus status = s.status();
    EXPECT_EQ(status.protocol_version, "2026-07-28");
    EXPECT_EQ(status.server_name, "raw");
    EXPECT_EQ(status.instructions, "modern");
    std::vector<std::string> tools;
    ASSERT_TRUE(s.listTools(tools).ok);
    ASSERT_EQ(tools.size(), 1U);
    EXPECT_NE(tools[0].find("\"good\""), std::string::npos);
    status = s.status();
    ASSERT_EQ(status.refused_tools.size(), 1U);
    EXPECT_EQ(status.refused_tools[0].name, "bad");
    EXPECT_NE(status.refused_tools[0].reason.find("not string, integer or boolean"),
              std::string::npos);
    ASSERT_TRUE(s.request("tools/call", R"({"name":"good","arguments":{"region":"ap"}})").ok);
    const std::vector<RawRequest> seen = server.requests();
    ASSERT_EQ(seen.size(), 3U);
    EXPECT_EQ(seen[2].header("mcp-param-region"), "ap");
    for (const RawRequest& r : seen) {
        EXPECT_NE(methodOf(r), "initialize");
    }
}

TEST(ModernHttp, AServerThatDoesNotKnowDiscoverIsInitializedIn2025) {
    RawServer server([](const RawRequest& r) {
        const std::string method = methodOf(r);
        if (method == "server/discover") {
            return reply(400, "application/json",
                         R"({"jsonrpc":"2.0","id":null,"error":{"code":-32000,)"
                         R"("message":"Bad Request: No valid session ID provided"}})");
        }
        if (method == "initialize") {
            return answer(r, R"({"protocolVersion":"2025-11-25","capabilities":{},)"
                             R"("serverInfo":{"name":"old","version":"1"}})");
        }
        if (r.method == "GET") {
            return reply(405, "text/plain", "no");
        }
        return reply(202, "application/json", "");
    });
    UpstreamSession s(sessionTo(server), nullptr, nullptr);
    ASSERT_TRUE(s.connect()) << s.status().last_error;
    EXPECT_EQ(s.status().protocol_version, "2025-11-25");
    EXPECT_EQ(s.status().server_name, "old");
}

TEST(ModernHttp, InputRequiredRoundsEchoTheStateWithNewIdsAndAreBounded) {
    RawServer server([](const RawRequest& r) {
        const std::string method = methodOf(r);
        if (method == "server/discover") {
            return answer(r, kDiscover);
        }
        const rapidjson::Document body = parsed(r.body);
        const std::string name = body["params"]["name"].GetString();
        if (name == "once" && body["params"].HasMember("inputResponses")) {
            return answer(r, R"({"resultType":"complete","content":[]})");
        }
        return answer(r, R"({"resultType":"input_required","requestState":"s\"1",)"
                         R"("inputRequests":{"a":{"method":"roots/list","params":{}}}})");
    });
    UpstreamSession s(sessionTo(server), nullptr, nullptr);
    ASSERT_TRUE(s.connect()) << s.status().last_error;
    RequestHooks hooks;
    std::vector<std::string> asked;
    hooks.answer_inputs = [&asked](const std::string& requests) -> std::optional<std::string> {
        asked.push_back(requests);
        return std::string(R"({"a":{"roots":[]}})");
    };
    const RpcOutcome done = s.request("tools/call", R"({"name":"once","arguments":{}})", hooks);
    ASSERT_TRUE(done.ok) << done.error_message;
    EXPECT_EQ(done.result_json, R"({"resultType":"complete","content":[]})");
    ASSERT_EQ(asked.size(), 1U);
    std::vector<RawRequest> seen = server.requests();
    ASSERT_EQ(seen.size(), 3U);  // discover, the call, its second round
    EXPECT_NE(seen[1].id(), seen[2].id());
    const rapidjson::Document retry = parsed(seen[2].body);
    EXPECT_STREQ(retry["params"]["requestState"].GetString(), "s\"1");
    EXPECT_TRUE(retry["params"]["inputResponses"]["a"]["roots"].IsArray());
    // A server that always asks again gets kMaxInputRounds requests, then its last answer.
    const RpcOutcome endless = s.request("tools/call", R"({"name":"endless"})", hooks);
    ASSERT_TRUE(endless.ok);
    EXPECT_TRUE(inputRequired(endless.result_json).has_value());
    EXPECT_EQ(server.requests().size(), 3U + kMaxInputRounds);
    // Without an answerer, the input_required result comes back as it is.
    EXPECT_TRUE(inputRequired(s.request("tools/call", R"({"name":"x"})").result_json));
}

TEST(InputRounds, AResultWithoutResultTypeIsCompleteAndEarlierAnswersAreReplaced) {
    EXPECT_FALSE(inputRequired(R"({"content":[]})").has_value());
    EXPECT_FALSE(inputRequired(R"({"resultType":"complete"})").has_value());
    EXPECT_FALSE(inputRequired("not json").has_value());
    const auto noState = inputRequired(R"({"resultType":"input_required"})");
    ASSERT_TRUE(noState.has_value());
    EXPECT_EQ(noState->requests_json, "{}");
    EXPECT_FALSE(noState->state.has_value());
    const std::string next =
        nextRoundParams(R"({"name":"t","inputResponses":{"old":1},"requestState":"x"})",
                        R"({"new":2})", std::nullopt);
    const rapidjson::Document doc = parsed(next);
    EXPECT_FALSE(doc.HasMember("requestState"));
    EXPECT_FALSE(doc["inputResponses"].HasMember("old"));
    EXPECT_EQ(doc["inputResponses"]["new"].GetInt(), 2);
}

}  // namespace
}  // namespace crank::mcpc
