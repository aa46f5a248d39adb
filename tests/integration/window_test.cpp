// Windows and unary calls through the real crankd: the real plugin loader loads the aggregators
// plugin (build/lib/crank/plugins) and the synthetic-stream fixture plugin (test-plugins), and
// every aggregation mode and every stop_reason is reached over MCP Streamable HTTP.

#include <signal.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

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

// Every synthetic parameter comes from the tool input; a parameter left out of the input is
// removed from the rendered config (whole-string template), so the plugin's default applies.
constexpr const char* kSyntheticConfig = R"({
    "items": "{{items}}", "rate_per_sec": "{{rate}}", "item_bytes": "{{item_bytes}}",
    "malformed_every": "{{malformed_every}}", "fail_after_items": "{{fail_after}}",
    "fail_on_open": "{{fail_on_open}}", "hang_after_items": "{{hang_after}}",
    "hang_on_open": "{{hang_on_open}}", "cursor_every": "{{cursor_every}}",
    "with_secret": "{{with_secret}}", "ignore_cancel_ms": "{{ignore_cancel_ms}}",
    "keys": "{{keys}}", "batch": "{{batch}}", "oversize_every": "{{oversize_every}}",
    "oversize_bytes": "{{oversize_bytes}}", "echo_auth": "{{echo_auth}}",
    "fail_with_auth": "{{fail_with_auth}}"})";

constexpr const char* kInputSchema = R"({"type": "object", "additionalProperties": false,
    "properties": {
        "items": {"type": "integer", "minimum": -1, "maximum": 100000},
        "rate": {"type": "integer", "minimum": 0}, "item_bytes": {"type": "integer"},
        "malformed_every": {"type": "integer"}, "fail_after": {"type": "integer"},
        "fail_on_open": {"type": "boolean"}, "hang_after": {"type": "integer"},
        "hang_on_open": {"type": "boolean"}, "cursor_every": {"type": "integer"},
        "with_secret": {"type": "boolean"}, "ignore_cancel_ms": {"type": "integer"},
        "keys": {"type": "integer"}, "batch": {"type": "integer"},
        "oversize_every": {"type": "integer"}, "oversize_bytes": {"type": "integer"},
        "echo_auth": {"type": "boolean"}, "fail_with_auth": {"type": "boolean"}}})";

// Auth profiles whose secrets come from the environment of crankd. Every secret holds the marker
// kSecretMarker, which must never leave crankd: not in a result, an error, or its log. The bearer
// token has a quote and a backslash, which JSON escapes.
constexpr const char* kSecretMarker = "Zq9x";
constexpr const char* kBearerToken = R"(tok"en\Zq9x-bearer)";
constexpr const char* kPassword = "pa55-Zq9x-word";
constexpr const char* kApiKey = "k3y-Zq9x-value";
constexpr const char* kAuthProfiles = R"({
    "bearer_p": {"type": "bearer", "token": {"env": "CRANK_TEST_BEARER_TOKEN"},
                 "headers": {"X-Tenant": "acme"}},
    "basic_p": {"type": "basic", "username": "svc-user",
                "password": {"env": "CRANK_TEST_BASIC_PASSWORD"}},
    "key_p": {"type": "api_key", "in": "query", "name": "api_key",
              "key": {"env": "CRANK_TEST_API_KEY"}, "headers": {"X-Trace": "on"}}})";

std::string unaryOperation(const std::string& name, const std::string& auth_profile) {
    return R"({"name": ")" + name + R"(", "description": "unary", "protocol": "synthetic",
        "auth_profile": ")" +
           auth_profile + R"(", "input_schema": )" + kInputSchema + R"(, "config": )" +
           kSyntheticConfig + R"(, "execution": {"mode": "unary"}})";
}

std::string windowOperation(const std::string& name, const std::string& execution) {
    return R"({"name": ")" + name +
           R"(", "description": "synthetic window", "protocol": "synthetic",
        "input_schema": )" +
           kInputSchema + R"(, "config": )" + kSyntheticConfig +
           R"(, "execution": {"mode": "window", "transport_behavior": "server_stream", )" +
           execution + "}}";
}

class WindowTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir();
        std::vector<std::string> ops{
            windowOperation("raw", R"("aggregation_mode": "raw_items", "max_items": 50,
                "window_duration_ms": 10000, "upstream_timeout_ms": 400)"),
            windowOperation("summary", R"("aggregation_mode": "summary_only",
                "aggregation": {"key_paths": ["level"]})"),
            windowOperation("samples", R"("aggregation_mode": "summary_plus_samples",
                "aggregation": {"sample_size": 3, "seed": 7})"),
            windowOperation("stats", R"("aggregation_mode": "stats", "max_items": 100000,
                "max_bytes": 100000000,
                "aggregation": {"numeric_paths": ["latency_ms"], "key_paths": ["level"]})"),
            windowOperation("latest", R"("aggregation_mode": "latest_state",
                "aggregation": {"key_path": "key"})"),
            windowOperation("bytes", R"("aggregation_mode": "raw_items", "max_bytes": 2000)"),
            windowOperation("big", R"("aggregation_mode": "raw_items",
                "max_bytes": 100000000)"),
            windowOperation("short", R"("aggregation_mode": "raw_items",
                "window_duration_ms": 300, "max_items": 100000)"),
            windowOperation("safety", R"("aggregation_mode": "raw_items",
                "redacted_paths": ["secret"], "drop_duplicates": true)"),
            windowOperation("sampled", R"("aggregation_mode": "raw_items", "max_items": 1000,
                "sampling_rate": 0.5, "sampling_seed": 42,
                "aggregation": {"max_items": 1000})"),
            windowOperation("tiny_result", R"("aggregation_mode": "raw_items",
                "max_result_bytes": 1500, "aggregation": {"max_items": 1000})"),
            windowOperation("slow_stop", R"("aggregation_mode": "raw_items",
                "window_duration_ms": 200, "max_items": 100000)"),
            R"({"name": "unary_mapped", "description": "unary", "protocol": "synthetic",
                "input_schema": )" +
                std::string(kInputSchema) + R"(, "config": )" + kSyntheticConfig +
                R"(, "execution": {"mode": "unary", "items_path": "items",
                "cursor_path": "next_cursor", "status_path": "status", "done_path": "done",
                "summary_path": "summary", "redacted_paths": ["secret"]}})",
            R"({"name": "unary_raw", "description": "unary", "protocol": "synthetic",
                "input_schema": )" +
                std::string(kInputSchema) + R"(, "config": )" + kSyntheticConfig +
                R"(, "execution": {"mode": "unary"}})",
            R"({"name": "polled", "description": "a window over a request/response upstream",
                "protocol": "synthetic", "input_schema": )" +
                std::string(kInputSchema) + R"(, "config": )" + kSyntheticConfig +
                R"(, "execution": {"mode": "window",
                "transport_behavior": "request_response", "items_path": "items",
                "cursor_path": "next_cursor", "done_path": "done",
                "aggregation_mode": "stats", "aggregation": {"numeric_paths": ["seq"]}}})",
        };
        ops.push_back(unaryOperation("auth_key_unary", "key_p"));
        ops.push_back(unaryOperation("auth_bearer_unary", "bearer_p"));
        std::string basicWindow = windowOperation("auth_basic_window", R"("aggregation_mode":
            "raw_items")");
        basicWindow.insert(1, R"("auth_profile": "basic_p", )");
        ops.push_back(basicWindow);
        std::string operations;
        for (const std::string& op : ops) {
            operations += (operations.empty() ? "" : ",") + op;
        }
        const std::string config = dir_->write(
            "crank.json", R"({"store": {"path": ")" + dir_->file("crank.db") +
                              R"("}, "plugins": {"directories": [")" CRANK_PLUGIN_DIR
                              R"(", ")" CRANK_TEST_PLUGIN_DIR R"("]}, "auth_profiles": )" +
                              kAuthProfiles + R"(, "operations": [)" + operations + "]}");
        process_ = new ChildProcess(
            std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"},
            {{"CRANK_TEST_BEARER_TOKEN", kBearerToken},
             {"CRANK_TEST_BASIC_PASSWORD", kPassword},
             {"CRANK_TEST_API_KEY", kApiKey}});
        const auto port = process_->waitForListeningPort(20s);
        ASSERT_TRUE(port) << process_->stderrText();
        port_ = *port;
    }

    static void TearDownTestSuite() {
        if (process_ != nullptr) {
            process_->signal(SIGTERM);
            EXPECT_EQ(process_->waitForExit(20s), 0) << process_->stderrText();
            // Whatever the tests made plugins say, no secret reached crankd's log.
            EXPECT_EQ(process_->stderrText().find(kSecretMarker), std::string::npos);
            EXPECT_EQ(process_->stdoutText().find(kSecretMarker), std::string::npos);
            delete process_;
            process_ = nullptr;
        }
        delete dir_;
        dir_ = nullptr;
    }

    void SetUp() override {
        ASSERT_NE(port_, 0);
        client_.emplace(port_);
        ASSERT_TRUE(client_->open());
    }

    Reply post(const std::string& body) { return client_->post(body); }

    /// tools/call; returns the `result` object (a copy in its own document). The whole HTTP
    /// response body goes to `body` when given.
    rapidjson::Document call(const std::string& tool, const std::string& arguments,
                             std::string* body = nullptr) {
        return client_->callTool(tool, arguments, body);
    }

    /// The structured result of a successful call.
    rapidjson::Document window(const std::string& tool, const std::string& arguments,
                               std::string* body = nullptr) {
        rapidjson::Document result = call(tool, arguments, body);
        rapidjson::Document structured;
        EXPECT_TRUE(result.HasMember("structuredContent")) << text(result);
        if (result.HasMember("structuredContent")) {
            structured.CopyFrom(result["structuredContent"], structured.GetAllocator());
        } else {
            structured.SetObject();
        }
        return structured;
    }

    static std::string text(const rapidjson::Value& v) {
        rapidjson::StringBuffer out;
        rapidjson::Writer<rapidjson::StringBuffer> w(out);
        v.Accept(w);
        return out.GetString();
    }

    static TempDir* dir_;
    static ChildProcess* process_;
    static std::uint16_t port_;
    std::optional<crank::testing::McpClient> client_;
};

TempDir* WindowTest::dir_ = nullptr;
ChildProcess* WindowTest::process_ = nullptr;
std::uint16_t WindowTest::port_ = 0;

void expectContract(const rapidjson::Value& r) {
    for (const char* member :
         {"item_count", "dropped_count", "bytes", "truncated", "window_complete", "has_more",
          "cursor", "stop_reason", "elapsed_ms"}) {
        EXPECT_TRUE(r.HasMember(member)) << "missing " << member;
    }
}

TEST_F(WindowTest, ToolsListPublishesEveryOperationWithItsOutputSchema) {
    const Reply reply = post(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
    rapidjson::Document doc = reply.json();
    std::set<std::string> names;
    for (const auto& tool : doc["result"]["tools"].GetArray()) {
        const std::string name = tool["name"].GetString();
        names.insert(name);
        if (name == "stats") {
            ASSERT_TRUE(tool.HasMember("outputSchema"));
            const auto& properties = tool["outputSchema"]["properties"];
            EXPECT_TRUE(properties.HasMember("stop_reason"));
            EXPECT_TRUE(properties.HasMember("stats")) << text(tool["outputSchema"]);
        }
        if (name == "unary_raw") {
            EXPECT_FALSE(tool.HasMember("outputSchema"));
        }
    }
    EXPECT_EQ(names.count("raw"), 1U);
    EXPECT_EQ(names.count("polled"), 1U);
    EXPECT_EQ(names.size(), 18U);
}

TEST_F(WindowTest, UpstreamEndReturnsEveryItemAndACompleteWindow) {
    const auto r = window("raw", R"({"items": 5, "cursor_every": 1})");
    expectContract(r);
    EXPECT_STREQ(r["stop_reason"].GetString(), "upstream_end");
    EXPECT_EQ(r["item_count"].GetInt(), 5);
    EXPECT_EQ(r["items"].Size(), 5U);
    EXPECT_EQ(r["items"][0]["seq"].GetInt(), r["items"][0]["seq"].GetInt());
    EXPECT_TRUE(r["window_complete"].GetBool());
    EXPECT_FALSE(r["has_more"].GetBool());
    EXPECT_FALSE(r["truncated"].GetBool());
    ASSERT_TRUE(r["cursor"].IsString());
    EXPECT_GT(r["bytes"].GetInt(), 0);
}

TEST_F(WindowTest, MaxItemsCutsTheWindowAndStopsTheUpstream) {
    const auto r = window("raw", R"({"items": -1})");
    EXPECT_STREQ(r["stop_reason"].GetString(), "max_items");
    EXPECT_EQ(r["item_count"].GetInt(), 50);
    EXPECT_TRUE(r["truncated"].GetBool());
    EXPECT_TRUE(r["has_more"].GetBool());
    EXPECT_FALSE(r["window_complete"].GetBool());
}

TEST_F(WindowTest, MaxBytesCutsBeforeTheItemThatWouldPassIt) {
    const auto r = window("bytes", R"({"items": -1, "item_bytes": 300})");
    EXPECT_STREQ(r["stop_reason"].GetString(), "max_bytes");
    EXPECT_LE(r["bytes"].GetInt(), 2000);
    EXPECT_GT(r["item_count"].GetInt(), 0);
    EXPECT_TRUE(r["truncated"].GetBool());
}

TEST_F(WindowTest, DurationEndsAnEndlessStream) {
    const auto r = window("short", R"({"items": -1, "rate": 100})");
    EXPECT_STREQ(r["stop_reason"].GetString(), "duration");
    EXPECT_TRUE(r["window_complete"].GetBool());
    EXPECT_TRUE(r["has_more"].GetBool());
    EXPECT_GE(r["elapsed_ms"].GetInt(), 300);
    EXPECT_LT(r["item_count"].GetInt(), 1000);
}

TEST_F(WindowTest, ASilentUpstreamTimesOut) {
    const auto r = window("raw", R"({"items": -1, "hang_after": 3})");
    EXPECT_STREQ(r["stop_reason"].GetString(), "upstream_timeout");
    EXPECT_EQ(r["item_count"].GetInt(), 3);
    EXPECT_FALSE(r["window_complete"].GetBool());

    const auto none = window("raw", R"({"hang_on_open": true})");
    EXPECT_STREQ(none["stop_reason"].GetString(), "upstream_timeout");
    EXPECT_EQ(none["item_count"].GetInt(), 0);
}

TEST_F(WindowTest, AnUpstreamErrorKeepsWhatWasCollected) {
    const auto r = window("raw", R"({"items": -1, "fail_after": 4})");
    EXPECT_STREQ(r["stop_reason"].GetString(), "upstream_error");
    EXPECT_EQ(r["item_count"].GetInt(), 4);
    ASSERT_TRUE(r.HasMember("error"));
    EXPECT_NE(std::string(r["error"]["message"].GetString()).find("after 4"), std::string::npos);

    // Nothing collected: the call failed (isError), with the same contract object.
    const auto failed = call("raw", R"({"fail_on_open": true})");
    EXPECT_TRUE(failed["isError"].GetBool()) << text(failed);
    EXPECT_STREQ(failed["structuredContent"]["stop_reason"].GetString(), "upstream_error");
}

TEST_F(WindowTest, MalformedItemsAreDroppedAndCounted) {
    const auto r = window("raw", R"({"items": 20, "malformed_every": 5})");
    EXPECT_STREQ(r["stop_reason"].GetString(), "upstream_end");
    EXPECT_EQ(r["dropped_count"].GetInt(), 4);
    EXPECT_EQ(r["item_count"].GetInt(), 16);
}

TEST_F(WindowTest, OversizedItemsAreDroppedNotPassedOn) {
    // Items over the safety stage's 1 MiB bound are dropped and counted; the window goes on.
    const auto r =
        window("big", R"({"items": 10, "oversize_every": 5, "oversize_bytes": 2000000})");
    EXPECT_STREQ(r["stop_reason"].GetString(), "upstream_end");
    EXPECT_EQ(r["item_count"].GetInt(), 8);
    EXPECT_EQ(r["dropped_count"].GetInt(), 2);
    EXPECT_GT(r["bytes"].GetInt(), 4000000);
    EXPECT_LT(text(r).size(), 100000U);
}

TEST_F(WindowTest, CancellationStopsTheWindowAndTheUpstreamRead) {
    SseReader sse(port_, "POST",
                  {{"Content-Type", "application/json"},
                   {"Accept", kAccept},
                   {"Mcp-Session-Id", client_->session()}},
                  // "raw" runs 10 s (an item every 200 ms, under its 400 ms upstream timeout):
                  // the cancel arrives long before it could end on its own, even on a loaded
                  // machine ("short", 300 ms, could end first and answer).
                  R"({"jsonrpc":"2.0","id":"w1","method":"tools/call","params":{"name":"raw",)"
                  R"("arguments":{"items":-1,"rate":5},"_meta":{"progressToken":"p"}}})");
    sse.next();  // priming
    EXPECT_EQ(post(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":)"
                   R"({"requestId":"w1","reason":"user"}})")
                  .status,
              202);
    while (auto e = sse.next()) {
        EXPECT_EQ(e->data.find(R"("id":"w1")"), std::string::npos)
            << "a cancelled request gets no response";
    }
    EXPECT_TRUE(process_->waitForStderrLine(R"(window "raw" stopped: stop_reason=cancelled)", 10s))
        << process_->stderrText();
}

TEST_F(WindowTest, ProgressIsReportedWhileCollecting) {
    SseReader sse(port_, "POST",
                  {{"Content-Type", "application/json"},
                   {"Accept", kAccept},
                   {"Mcp-Session-Id", client_->session()}},
                  R"({"jsonrpc":"2.0","id":"p1","method":"tools/call","params":{"name":"raw",)"
                  R"("arguments":{"items":40,"rate":50},"_meta":{"progressToken":"tok"}}})");
    int progress = 0;
    bool result = false;
    while (auto e = sse.next()) {
        if (e->data.find("notifications/progress") != std::string::npos) {
            ++progress;
        } else if (e->data.find(R"("id":"p1")") != std::string::npos) {
            result = true;
        }
    }
    EXPECT_TRUE(result);
    EXPECT_GE(progress, 1);
}

TEST_F(WindowTest, SummaryCountsByKey) {
    const auto r = window("summary", R"({"items": 30})");
    ASSERT_TRUE(r.HasMember("summary")) << text(r);
    EXPECT_EQ(r["summary"]["count"].GetInt(), 30);
    EXPECT_FALSE(r.HasMember("items"));
    EXPECT_NE(text(r["summary"]).find("warn"), std::string::npos);
}

TEST_F(WindowTest, SummaryPlusSamplesKeepsASample) {
    const auto r = window("samples", R"({"items": 50})");
    ASSERT_TRUE(r.HasMember("summary"));
    ASSERT_TRUE(r.HasMember("items"));
    EXPECT_EQ(r["items"].Size(), 3U);
    EXPECT_EQ(r["summary"]["count"].GetInt(), 50);
}

TEST_F(WindowTest, StatsOverManyItemsStayBounded) {
    const auto r = window("stats", R"({"items": 20000, "batch": 64})");
    EXPECT_STREQ(r["stop_reason"].GetString(), "upstream_end");
    ASSERT_TRUE(r.HasMember("stats")) << text(r);
    EXPECT_EQ(r["stats"]["count"].GetInt(), 20000);
    const auto& latency = r["stats"]["numeric"]["latency_ms"];
    EXPECT_LE(latency["min"].GetDouble(), latency["p50"].GetDouble());
    EXPECT_LE(latency["p50"].GetDouble(), latency["p99"].GetDouble());
    EXPECT_LE(latency["p99"].GetDouble(), latency["max"].GetDouble());
    EXPECT_LT(text(r).size(), 8192U);
}

TEST_F(WindowTest, LatestStateKeepsTheNewestItemPerKey) {
    const auto r = window("latest", R"({"items": 20, "keys": 4})");
    ASSERT_TRUE(r.HasMember("state")) << text(r);
    EXPECT_EQ(r["state"].MemberCount(), 4U);
    // Items k0..k3 cycle; the newest of k3 is seq 19 when seq starts at 0, 20 at 1.
    const int newest = r["state"]["k3"]["seq"].GetInt();
    EXPECT_GE(newest, 19);
}

TEST_F(WindowTest, RedactedValuesNeverReachTheResultAndDuplicatesAreDropped) {
    const auto r = window("safety", R"({"items": 10, "with_secret": true})");
    const std::string body = text(r);
    EXPECT_EQ(body.find("s3cr3t"), std::string::npos) << body;
    EXPECT_NE(body.find("[redacted]"), std::string::npos);
    EXPECT_EQ(r["item_count"].GetInt(), 10);
    EXPECT_EQ(process_->stderrText().find("s3cr3t"), std::string::npos);
}

TEST_F(WindowTest, SamplingIsSeededAndRepeatable) {
    const auto a = window("sampled", R"({"items": 400})");
    const auto b = window("sampled", R"({"items": 400})");
    EXPECT_EQ(text(a["items"]), text(b["items"]));
    EXPECT_GT(a["dropped_count"].GetInt(), 100);
    EXPECT_LT(a["dropped_count"].GetInt(), 300);
    EXPECT_EQ(a["item_count"].GetInt() + a["dropped_count"].GetInt(), 400);
}

TEST_F(WindowTest, TheResultIsCutToMaxResultBytes) {
    const auto r = window("tiny_result", R"({"items": 100})");
    EXPECT_LE(text(r).size(), 1500U);
    EXPECT_TRUE(r["truncated"].GetBool());
    EXPECT_EQ(r["item_count"].GetInt(), 100);
    EXPECT_LT(r["items"].Size(), 100U);
}

TEST_F(WindowTest, APluginSlowToStopDoesNotHoldTheCall) {
    const auto r = window("slow_stop", R"({"items": -1, "rate": 100, "ignore_cancel_ms": 4000})");
    EXPECT_STREQ(r["stop_reason"].GetString(), "duration");
    // The gateway answered after its cancel grace (2 s), not after the plugin's 4 s.
    EXPECT_LT(r["elapsed_ms"].GetInt(), 3000);
    // And it still answers others.
    EXPECT_STREQ(window("raw", R"({"items": 2})")["stop_reason"].GetString(), "upstream_end");
}

TEST_F(WindowTest, InvalidInputIsAToolErrorNamingThePath) {
    const auto r = call("raw", R"({"items": "many"})");
    EXPECT_TRUE(r["isError"].GetBool());
    EXPECT_NE(text(r).find("input.items"), std::string::npos) << text(r);
    const auto extra = call("raw", R"({"bogus": 1})");
    EXPECT_TRUE(extra["isError"].GetBool());
    EXPECT_NE(text(extra).find("bogus"), std::string::npos) << text(extra);
}

TEST_F(WindowTest, UnaryMapsTheResponse) {
    const auto r = window("unary_mapped", R"({"items": 3, "with_secret": true})");
    EXPECT_EQ(r["items"].Size(), 3U);
    EXPECT_EQ(r["item_count"].GetInt(), 3);
    EXPECT_TRUE(r["cursor"].IsString());
    EXPECT_STREQ(r["status"].GetString(), "done");
    EXPECT_TRUE(r["done"].GetBool());
    EXPECT_TRUE(r.HasMember("summary"));
    EXPECT_EQ(text(r).find("s3cr3t"), std::string::npos);

    const auto raw = window("unary_raw", R"({"items": 2})");
    EXPECT_EQ(raw["items"].Size(), 2U);
    EXPECT_TRUE(raw.HasMember("next_cursor"));

    const auto failed = call("unary_raw", R"({"fail_on_open": true})");
    EXPECT_TRUE(failed["isError"].GetBool());
    EXPECT_NE(text(failed).find("upstream error"), std::string::npos) << text(failed);
}

TEST_F(WindowTest, AWindowPollsARequestResponseUpstreamUntilDone) {
    const auto r = window("polled", R"({"items": 5})");
    EXPECT_STREQ(r["stop_reason"].GetString(), "upstream_end") << text(r);
    EXPECT_EQ(r["item_count"].GetInt(), 5);
    EXPECT_TRUE(r["cursor"].IsString());
}

// The auth profile reaches the plugin (auth_json); its secrets never come back. Every tools/call
// response body is checked whole for the marker that every secret holds.

TEST_F(WindowTest, AUnaryCallGetsItsAuthProfileAndItsSecretsAreRedacted) {
    std::string body;
    const auto key = window("auth_key_unary", R"({"items": 1, "echo_auth": true})", &body);
    EXPECT_EQ(body.find(kSecretMarker), std::string::npos) << body;
    ASSERT_TRUE(key.HasMember("auth") && key["auth"].IsObject()) << text(key);
    const auto& auth = key["auth"];
    EXPECT_STREQ(auth["type"].GetString(), "api_key");
    EXPECT_STREQ(auth["in"].GetString(), "query");
    EXPECT_STREQ(auth["name"].GetString(), "api_key");
    EXPECT_STREQ(auth["key"].GetString(), "[redacted]");
    EXPECT_STREQ(auth["headers"]["X-Trace"].GetString(), "on");
    EXPECT_STREQ(key["items"][0]["auth"]["key"].GetString(), "[redacted]");
    EXPECT_EQ(key["items"][0]["seq"].GetInt(), 1);

    // A token with a quote and a backslash: escaped in the JSON, redacted all the same.
    const auto bearer = window("auth_bearer_unary", R"({"items": 1, "echo_auth": true})", &body);
    EXPECT_EQ(body.find(kSecretMarker), std::string::npos) << body;
    ASSERT_TRUE(bearer.HasMember("auth") && bearer["auth"].IsObject()) << text(bearer);
    EXPECT_STREQ(bearer["auth"]["type"].GetString(), "bearer");
    EXPECT_STREQ(bearer["auth"]["token"].GetString(), "[redacted]");
    EXPECT_STREQ(bearer["auth"]["headers"]["X-Tenant"].GetString(), "acme");
}

TEST_F(WindowTest, WindowItemsCarryTheAuthProfileRedacted) {
    std::string body;
    const auto r = window("auth_basic_window", R"({"items": 3, "echo_auth": true})", &body);
    EXPECT_EQ(body.find(kSecretMarker), std::string::npos) << body;
    EXPECT_STREQ(r["stop_reason"].GetString(), "upstream_end") << text(r);
    ASSERT_EQ(r["items"].Size(), 3U) << text(r);
    for (const auto& item : r["items"].GetArray()) {
        ASSERT_TRUE(item.HasMember("auth") && item["auth"].IsObject()) << text(item);
        EXPECT_STREQ(item["auth"]["type"].GetString(), "basic");
        EXPECT_STREQ(item["auth"]["username"].GetString(), "svc-user");
        EXPECT_STREQ(item["auth"]["password"].GetString(), "[redacted]");
        EXPECT_TRUE(item["auth"]["headers"].IsObject());
    }
}

TEST_F(WindowTest, AnOperationWithoutAuthProfileGetsNoAuth) {
    const auto r = window("unary_raw", R"({"items": 1, "echo_auth": true})");
    ASSERT_TRUE(r.HasMember("auth")) << text(r);
    EXPECT_TRUE(r["auth"].IsNull()) << text(r);
    const auto w = window("raw", R"({"items": 1, "echo_auth": true})");
    ASSERT_EQ(w["items"].Size(), 1U) << text(w);
    EXPECT_TRUE(w["items"][0]["auth"].IsNull()) << text(w);
}

TEST_F(WindowTest, APluginErrorQuotingTheSecretsIsRedacted) {
    std::string body;
    const auto unary = call("auth_bearer_unary", R"({"fail_with_auth": true})", &body);
    EXPECT_TRUE(unary["isError"].GetBool()) << text(unary);
    EXPECT_EQ(body.find(kSecretMarker), std::string::npos) << body;
    EXPECT_NE(text(unary).find("refused the credentials"), std::string::npos) << text(unary);
    EXPECT_NE(text(unary).find("[redacted]"), std::string::npos) << text(unary);

    const auto keyed = call("auth_key_unary", R"({"fail_with_auth": true})", &body);
    EXPECT_TRUE(keyed["isError"].GetBool()) << text(keyed);
    EXPECT_EQ(body.find(kSecretMarker), std::string::npos) << body;
    EXPECT_NE(text(keyed).find("[redacted]"), std::string::npos) << text(keyed);

    const auto windowed = call("auth_basic_window", R"({"fail_with_auth": true})", &body);
    EXPECT_TRUE(windowed["isError"].GetBool()) << text(windowed);
    EXPECT_EQ(body.find(kSecretMarker), std::string::npos) << body;
    EXPECT_NE(text(windowed).find("upstream_error"), std::string::npos) << text(windowed);
    EXPECT_NE(text(windowed).find("[redacted]"), std::string::npos) << text(windowed);

    // The plugin also logged the auth JSON for the call: the line reached the log scrubbed.
    const auto line = process_->waitForStderrLine("refused the credentials", 10s);
    ASSERT_TRUE(line) << process_->stderrText();
    EXPECT_EQ(line->find(kSecretMarker), std::string::npos) << *line;
    EXPECT_NE(line->find("[redacted]"), std::string::npos) << *line;
}

}  // namespace

namespace {

// SIGTERM while a long window runs: the window stops at once (stop_reason cancelled), its client
// gets the result, and crankd exits within its grace period instead of waiting for the window.
TEST(WindowShutdown, SigtermStopsRunningWindowsAndAnswersThem) {
    TempDir dir;
    const std::string config = dir.write(
        "crank.json",
        R"({"store": {"path": ")" + dir.file("crank.db") +
            R"("}, "server": {"shutdown_grace_ms": 5000}, "plugins": {"directories": [")" CRANK_PLUGIN_DIR
            R"(", ")" CRANK_TEST_PLUGIN_DIR R"("]}, "operations": [)" +
            windowOperation("long", R"("aggregation_mode": "raw_items", "max_items": 100000,
                "window_duration_ms": 600000)") +
            "]}");
    ChildProcess crankd(
        std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"});
    const auto listening = crankd.waitForListeningPort(20s);
    ASSERT_TRUE(listening) << crankd.stderrText();
    const std::uint16_t port = *listening;
    const std::vector<std::pair<std::string, std::string>> json{
        {"Content-Type", "application/json"}, {"Accept", kAccept}};
    const Reply init =
        exchange(port, "POST", "/mcp", json,
                 R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
                 R"("2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
    const std::string session = init.header("mcp-session-id");
    auto headers = json;
    headers.emplace_back("Mcp-Session-Id", session);
    exchange(port, "POST", "/mcp", headers,
             R"({"jsonrpc":"2.0","method":"notifications/initialized"})");

    SseReader sse(port, "POST", headers,
                  R"({"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"long",)"
                  R"("arguments":{"items":-1,"rate":50},"_meta":{"progressToken":"t"}}})");
    sse.next();               // priming
    ASSERT_TRUE(sse.next());  // progress: the window is collecting
    const auto start = std::chrono::steady_clock::now();
    crankd.signal(SIGTERM);
    std::string result;
    while (auto e = sse.next()) {
        if (e->data.find(R"("id":"long")") != std::string::npos) {
            result = e->data;
        }
    }
    EXPECT_EQ(crankd.waitForExit(20s), 0) << crankd.stderrText();
    EXPECT_NE(result.find(R"("stop_reason":"cancelled")"), std::string::npos)
        << result << "\n"
        << crankd.stderrText();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

}  // namespace
