// The REST plugin through the real crankd, against a hostile loopback upstream
// (tests/fixtures/upstreams/rest_fixture.cpp): unary calls, SSE windows and long-poll windows,
// timeouts, redirects, compression, auth profiles, keep-alive, and every error of
// plugins/rest/README.md as the tool result shows it ("upstream error: MESSAGE (code)").
// One fixture process and one crankd serve the whole suite (one ctest entry).

#include <signal.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "child_process.h"
#include "mcp_http_client.h"
#include "temp_dir.h"
#include "test_json.h"

namespace {

using crank::testing::ChildProcess;
using crank::testing::contains;
using crank::testing::eventually;
using crank::testing::exchange;
using crank::testing::kAccept;
using crank::testing::lacks;
using crank::testing::msBetween;
using crank::testing::Reply;
using crank::testing::TempDir;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Secrets reach crankd through its environment only ({"env": ...} in auth_profiles).
constexpr const char* kToken = "tok3nBearerQ7";
constexpr const char* kPassword = "pa55-W0rd-Z9";
constexpr const char* kHeaderKey = "hdrKey-4411";
constexpr const char* kQueryKey = "qryKey-8822";
// Bytes that a query component percent-encodes: on the wire it is "odd%2FKey%2B77%2033%3D%26z".
constexpr const char* kOddQueryKey = "odd/Key+77 33=&z";

std::string text(const rapidjson::Value& v) {
    return crank::testing::jsonText(v);
}

rapidjson::Document parse(const std::string& body) {
    return crank::testing::parseJsonOrFail(body);
}

// --- operations --------------------------------------------------------------------------------

std::string operation(const std::string& name, const std::string& config,
                      const std::string& execution = R"({"mode": "unary"})",
                      const std::string& authProfile = "") {
    std::string op = R"({"name": ")" + name +
                     R"(", "description": "REST integration test operation", "protocol": "rest", )"
                     R"("config": )" +
                     config + R"(, "execution": )" + execution;
    if (!authProfile.empty()) {
        op += R"(, "auth_profile": ")" + authProfile + R"(")";
    }
    return op + "}";
}

/// An SSE window collecting raw items.
std::string sseWindow(int maxItems = 1000, int durationMs = 20000, int upstreamTimeoutMs = 5000,
                      const std::string& extra = "") {
    return R"({"mode": "window", "transport_behavior": "server_stream", )"
           R"("aggregation_mode": "raw_items", "aggregation": {"max_items": 1000}, )"
           R"("max_items": )" +
           std::to_string(maxItems) + R"(, "window_duration_ms": )" + std::to_string(durationMs) +
           R"(, "upstream_timeout_ms": )" + std::to_string(upstreamTimeoutMs) + extra + "}";
}

class RestTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir();
        fixture_ = new ChildProcess(
            std::vector<std::string>{CRANK_REST_FIXTURE_PATH, "--listen", "127.0.0.1:0"});
        const auto fixturePort = fixture_->waitForListeningPort(20s);
        ASSERT_TRUE(fixturePort) << fixture_->stderrText();
        fixturePort_ = *fixturePort;
        {
            // A port that was bound and closed again: connecting to it is refused.
            Poco::Net::ServerSocket probe(Poco::Net::SocketAddress("127.0.0.1", 0));
            refusedPort_ = probe.address().port();
            probe.close();
        }
        const std::string base = "http://127.0.0.1:" + std::to_string(fixturePort_);
        // The fixture's second listener: another origin, so another connection pool.
        const std::int64_t altPort = stat("alt_port");
        ASSERT_GT(altPort, 0);
        const std::string alt = "http://127.0.0.1:" + std::to_string(altPort);
        const std::string unary = R"({"mode": "unary"})";
        std::vector<std::string> ops{
            // Unary: plain, templates, bodies.
            operation("json", R"({"url": ")" + base + R"(/json", "query": {"n": "{{n}}"}})"),
            // A tool with a rate of its own: 5 calls a second, 5 at once.
            R"({"name": "rated", "description": "REST integration test operation",
                "protocol": "rest", "config": {"url": ")" +
                base + R"(/json?n=1"}, "rate": {"calls_per_second": 5, "burst": 5}})",
            operation("alt_json", R"({"url": ")" + alt + R"(/json?n=1"})"),
            operation("json_no_reuse",
                      R"({"url": ")" + alt + R"(/json?n=1", "keep_alive": {"max_idle": 0}})"),
            operation("echo_templates",
                      R"({"url": ")" + base + R"(/echo/items/{{ id | url }}?fixed=1",
                "query": {"tag": "{{tags}}", "limit": "{{limit}}", "flag": true,
                          "missing": "{{nope}}", "q": "{{q}}"},
                "headers": {"X-Request-Id": "req-{{id}}"}})"),
            // The same echo as a job: its run carries the starting request's trace context.
            operation("echo_job", R"({"url": ")" + base + R"(/echo/items/{{ id | url }}?fixed=1"})",
                      R"({"mode": "async_job", "upstream_timeout_ms": 5000})"),
            operation("echo_unfiltered",
                      R"({"url": ")" + base + R"(/echo/items/{{ id }}?q={{ q }}&fixed=1"})"),
            operation("echo_body", R"({"url": ")" + base + R"(/echo", "method": "POST",
                "body": {"name": "{{name}}", "count": "{{count}}", "tags": "{{tags}}",
                         "nested": {"k": "{{name}}", "fixed": [1, "two", null]}}})"),
            // Timeouts.
            operation("slow_headers", R"({"url": ")" + base +
                                          R"(/slow-headers?ms=20000",
                "timeouts": {"headers_ms": 500}})"),
            operation("trickle_headers", R"({"url": ")" + base +
                                             R"(/trickle-headers?ms=100",
                "timeouts": {"headers_ms": 800}})"),
            operation("trickle_total", R"({"url": ")" + base +
                                           R"(/trickle-headers?ms=100",
                "timeouts": {"total_ms": 1000}})"),
            operation("slow_body", R"({"url": ")" + base +
                                       R"(/slow-body?ms=100&bytes=400",
                "timeouts": {"total_ms": 1000}})"),
            // Errors.
            operation("status", R"({"url": ")" + base +
                                    R"(/status/{{code}}", "query": {"bytes": "{{bytes}}"}})"),
            operation("refused", R"({"url": "http://127.0.0.1:)" + std::to_string(refusedPort_) +
                                     R"(/json", "timeouts": {"connect_ms": 2000}})"),
            operation("tls_to_plain", R"({"url": "https://127.0.0.1:)" +
                                          std::to_string(fixturePort_) +
                                          R"(/json", "timeouts": {"connect_ms": 3000}})"),
            operation("not_json", R"({"url": ")" + base + R"(/not-json"})"),
            operation("png", R"({"url": ")" + base + R"(/png"})"),
            operation("text", R"({"url": ")" + base + R"(/text"})"),
            // Redirects.
            operation("redirects", R"({"url": ")" + base + R"(/redirect",
                "query": {"n": "{{n}}", "to": "{{to}}", "rel": "{{rel}}"}})"),
            operation("redirect_loop",
                      R"({"url": ")" + base + R"(/redirect-loop", "follow_redirects": 3})"),
            operation("redirect_refused", R"({"url": ")" + base +
                                              R"(/redirect?n=1&to=/json",
                "follow_redirects": 0})"),
            operation("redirect_307", R"({"url": ")" + base + R"(/redirect-307", "method": "POST",
                "body": {"x": "{{x}}"}})"),
            operation("redirect_post", R"({"url": ")" + base + R"(/redirect-code", "method": "POST",
                "query": {"code": "{{code}}", "to": "/echo"}, "body": {"x": "{{x}}"}})"),
            operation("cross_origin",
                      R"({"url": ")" + base + R"(/redirect-other-origin", "redirect_origins": [")" +
                          alt + R"("]})",
                      unary, "bearer"),
            operation("cross_origin_unlisted",
                      R"({"url": ")" + base + R"(/redirect-other-origin"})", unary, "bearer"),
            operation("redirect_anywhere", R"({"url": ")" + base + R"(/redirect-other-origin",
                "query": {"port": "{{port}}", "to": "{{to}}"}})"),
            operation("same_origin", R"({"url": ")" + base + R"(/redirect?n=1&to=/auth-report"})",
                      unary, "bearer"),
            // Compression.
            operation("gzip", R"({"url": ")" + base + R"(/gzip"})"),
            operation("deflate", R"({"url": ")" + base + R"(/deflate"})"),
            operation("gzip_bomb",
                      R"({"url": ")" + base + R"(/gzip-bomb", "max_response_bytes": 100000})"),
            operation("bad_gzip", R"({"url": ")" + base + R"(/bad-gzip"})"),
            // Auth profiles.
            operation("auth_bearer",
                      R"({"url": ")" + base + "/auth/bearer?expect=" + kToken + R"(&tenant=acme"})",
                      unary, "bearer"),
            operation("auth_bearer_missing",
                      R"({"url": ")" + base + "/auth/bearer?expect=" + kToken + R"("})"),
            operation("auth_basic",
                      R"({"url": ")" + base + "/auth/basic?user=alice&pass=" + kPassword + R"("})",
                      unary, "basic"),
            operation("auth_key_header",
                      R"({"url": ")" + base +
                          "/auth/key-header?name=X-Api-Key&expect=" + kHeaderKey + R"("})",
                      unary, "key_header"),
            operation("auth_key_query",
                      R"({"url": ")" + base + "/auth/key-query?name=api_key&expect=" + kQueryKey +
                          R"("})",
                      unary, "key_query"),
            operation("auth_none_headers", R"({"url": ")" + base + R"(/headers"})", unary,
                      "tenant"),
            operation("echo_odd_key_query", R"({"url": ")" + base + R"(/echo"})", unary,
                      "odd_key_query"),
            // SSE windows.
            operation("sse", R"({"url": ")" + base + R"(/sse", "query": {"count": "{{count}}",
                "rate": "{{rate}}", "size": "{{size}}", "chunked": "{{chunked}}"}})",
                      sseWindow()),
            operation("sse_limited", R"({"url": ")" + base + R"(/sse?count=0&rate=50"})",
                      sseWindow(5)),
            operation(
                "sse_filtered",
                R"({"url": ")" + base + R"(/sse?count=10&mixed=1", "sse": {"events": ["b"]}})",
                sseWindow()),
            operation(
                "sse_envelope",
                R"({"url": ")" + base + R"(/sse?count=3&event=tick", "sse": {"envelope": true}})",
                sseWindow()),
            operation("sse_text",
                      R"({"url": ")" + base + R"(/sse?count=3", "sse": {"data": "text"}})",
                      sseWindow()),
            operation("sse_hang_timeout", R"({"url": ")" + base + R"(/sse-hang"})",
                      sseWindow(1000, 20000, 800)),
            operation("sse_hang_duration", R"({"url": ")" + base + R"(/sse-hang"})",
                      sseWindow(1000, 1000, 20000)),
            operation("sse_malformed", R"({"url": ")" + base + R"(/sse-malformed"})", sseWindow()),
            operation("sse_big",
                      R"({"url": ")" + base +
                          R"(/sse-big?bytes=20000", "sse": {"max_event_bytes": 10000}})",
                      sseWindow()),
            operation("sse_big_lines",
                      R"({"url": ")" + base +
                          R"(/sse-big?bytes=20000&lines=1", "sse": {"max_event_bytes": 10000}})",
                      sseWindow()),
            operation("sse_big_max_bytes", R"({"url": ")" + base + R"(/sse-big?bytes=20000"})",
                      sseWindow(1000, 20000, 5000, R"(, "max_bytes": 5000)")),
            operation("sse_close_mid", R"({"url": ")" + base + R"(/sse-close-mid"})", sseWindow()),
            operation("sse_truncated", R"({"url": ")" + base + R"(/sse-truncated-chunk"})",
                      sseWindow()),
            operation("sse_reset", R"({"url": ")" + base + R"(/sse-reset"})", sseWindow()),
            operation("sse_gzip", R"({"url": ")" + base + R"(/sse-gzip?count=5"})", sseWindow()),
            operation("sse_wrong_type", R"({"url": ")" + base + R"(/sse-wrong-type"})",
                      sseWindow()),
            // Long-poll windows.
            operation("long_poll",
                      R"({"url": ")" + base + R"(/long-poll", "cursor_param": "cursor"})",
                      R"({"mode": "window", "transport_behavior": "request_response",
                "items_path": "events", "cursor_path": "next_cursor", "done_path": "done",
                "poll_interval_ms": 20, "window_duration_ms": 20000, "upstream_timeout_ms": 5000,
                "max_items": 100, "aggregation_mode": "raw_items"})"),
            operation(
                "long_poll_hang",
                R"({"url": ")" + base + R"(/long-poll?wait_ms=20000", "cursor_param": "cursor"})",
                R"({"mode": "window", "transport_behavior": "request_response",
                "items_path": "events", "cursor_path": "next_cursor", "done_path": "done",
                "window_duration_ms": 20000, "upstream_timeout_ms": 800,
                "aggregation_mode": "raw_items"})"),
        };
        operationCount_ = ops.size() + 3;  // echo_job is four tools
        std::string operations;
        for (const std::string& op : ops) {
            operations += (operations.empty() ? "" : ",\n") + op;
        }
        const std::string config = dir_->write(
            // 32 threads: 24 call slots, all of them for one upstream, for the 20 concurrent
            // callers of the rate test.
            "crank.json",
            R"({"server": {"threads": 32, "max_calls_per_upstream": 24}, "store": {"path": ")" +
                dir_->file("crank.db") +
                R"("}, "plugins": {"directories": [")" CRANK_PLUGIN_DIR R"("]},
            "auth_profiles": {
                "bearer": {"type": "bearer", "token": {"env": "CRANK_REST_TEST_TOKEN"},
                           "headers": {"X-Tenant": "acme"}},
                "basic": {"type": "basic", "username": "alice",
                          "password": {"env": "CRANK_REST_TEST_PASSWORD"}},
                "key_header": {"type": "api_key", "in": "header", "name": "X-Api-Key",
                               "key": {"env": "CRANK_REST_TEST_HEADER_KEY"}},
                "key_query": {"type": "api_key", "in": "query", "name": "api_key",
                              "key": {"env": "CRANK_REST_TEST_QUERY_KEY"}},
                "odd_key_query": {"type": "api_key", "in": "query", "name": "api_key",
                                  "key": {"env": "CRANK_REST_TEST_ODD_QUERY_KEY"}},
                "tenant": {"type": "none", "headers": {"X-Tenant": "acme"}}},
            "operations": [)" +
                operations + "]}");
        crankd_ = new ChildProcess(
            std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"},
            {{"CRANK_REST_TEST_TOKEN", kToken},
             {"CRANK_REST_TEST_PASSWORD", kPassword},
             {"CRANK_REST_TEST_HEADER_KEY", kHeaderKey},
             {"CRANK_REST_TEST_QUERY_KEY", kQueryKey},
             {"CRANK_REST_TEST_ODD_QUERY_KEY", kOddQueryKey}});
        const auto port = crankd_->waitForListeningPort(20s);
        ASSERT_TRUE(port) << crankd_->stderrText();
        port_ = *port;
    }

    static void TearDownTestSuite() {
        if (crankd_ != nullptr) {
            crankd_->signal(SIGTERM);
            EXPECT_EQ(crankd_->waitForExit(20s), 0) << crankd_->stderrText();
            delete crankd_;
            crankd_ = nullptr;
        }
        if (fixture_ != nullptr) {
            fixture_->signal(SIGTERM);
            EXPECT_EQ(fixture_->waitForExit(10s), 0) << fixture_->stderrText();
            delete fixture_;
            fixture_ = nullptr;
        }
        delete dir_;
        dir_ = nullptr;
    }

    void SetUp() override {
        ASSERT_NE(port_, 0);
        ASSERT_NE(fixturePort_, 0);
        drain();
        client_.emplace(port_);
        ASSERT_TRUE(client_->open());
    }

    /// Reads what the children wrote so far, so that no pipe fills up.
    static void drain() {
        crankd_->waitForStderrLine("\x01 never printed", 20ms);
        fixture_->waitForStderrLine("\x01 never printed", 5ms);
    }

    /// tools/call; returns the `result` object (a copy in its own document) and sets elapsedMs_.
    rapidjson::Document call(const std::string& tool, const std::string& arguments = "{}") {
        const auto start = Clock::now();
        rapidjson::Document result = client_->callTool(tool, arguments);
        elapsedMs_ = msBetween(start, Clock::now());
        return result;
    }

    /// The structuredContent of a call that must succeed (not isError).
    rapidjson::Document ok(const std::string& tool, const std::string& arguments = "{}") {
        rapidjson::Document result = call(tool, arguments);
        EXPECT_FALSE(isError(result)) << tool << ": " << text(result);
        rapidjson::Document structured;
        if (result.HasMember("structuredContent")) {
            structured.CopyFrom(result["structuredContent"], structured.GetAllocator());
        } else {
            ADD_FAILURE() << tool << ": no structuredContent: " << text(result);
            structured.SetObject();
        }
        return structured;
    }

    /// The text of a call that must fail (isError).
    std::string failure(const std::string& tool, const std::string& arguments = "{}") {
        const rapidjson::Document result = call(tool, arguments);
        EXPECT_TRUE(isError(result)) << tool << ": " << text(result);
        return firstText(result);
    }

    static bool isError(const rapidjson::Value& result) {
        return result.IsObject() && result.HasMember("isError") && result["isError"].IsBool() &&
               result["isError"].GetBool();
    }

    static std::string firstText(const rapidjson::Value& result) {
        if (result.IsObject() && result.HasMember("content") && result["content"].IsArray() &&
            !result["content"].Empty() && result["content"][0].HasMember("text")) {
            return result["content"][0]["text"].GetString();
        }
        return text(result);
    }

    /// The fixture's /stats.
    static rapidjson::Document stats() {
        const Reply reply = exchange(fixturePort_, "GET", "/stats", {});
        EXPECT_EQ(reply.status, 200) << reply.body;
        return parse(reply.body);
    }

    static std::int64_t stat(const char* name) {
        const rapidjson::Document s = stats();
        return s.HasMember(name) ? s[name].GetInt64() : -1;
    }

    /// True once the fixture serves no event stream (the plugin closed every SSE connection).
    static bool streamsClosed(std::chrono::milliseconds timeout = 5s) {
        return eventually([] { return stat("streams_open") == 0; }, timeout);
    }

    static std::string origin() { return "http://127.0.0.1:" + std::to_string(fixturePort_); }

    static TempDir* dir_;
    static ChildProcess* fixture_;
    static ChildProcess* crankd_;
    static std::uint16_t port_;
    static std::uint16_t fixturePort_;
    static std::uint16_t refusedPort_;
    static std::size_t operationCount_;
    std::optional<crank::testing::McpClient> client_;
    std::int64_t elapsedMs_ = 0;
};

TempDir* RestTest::dir_ = nullptr;
ChildProcess* RestTest::fixture_ = nullptr;
ChildProcess* RestTest::crankd_ = nullptr;
std::uint16_t RestTest::port_ = 0;
std::uint16_t RestTest::fixturePort_ = 0;
std::uint16_t RestTest::refusedPort_ = 0;
std::size_t RestTest::operationCount_ = 0;

std::vector<int> seqs(const rapidjson::Value& window) {
    std::vector<int> out;
    if (!window.HasMember("items") || !window["items"].IsArray()) {
        return out;
    }
    for (const auto& item : window["items"].GetArray()) {
        if (item.IsObject() && item.HasMember("seq") && item["seq"].IsInt()) {
            out.push_back(item["seq"].GetInt());
        }
    }
    return out;
}

std::string stopReason(const rapidjson::Value& window) {
    return window.HasMember("stop_reason") && window["stop_reason"].IsString()
               ? window["stop_reason"].GetString()
               : "(none)";
}

// --- unary -------------------------------------------------------------------------------------

TEST_F(RestTest, AToolsRateLetsThroughItsBurstAndItsRateFromConcurrentCallers) {
    // 20 callers call as fast as they are answered for 3 s. What the rate lets through reaches the
    // fixture, nothing else does; the rest are tool errors naming the limit and when to retry.
    constexpr int kCallers = 20;
    const std::int64_t before = stat("requests");
    std::atomic<int> through{0};
    std::atomic<int> refused{0};
    std::atomic<int> other{0};
    std::mutex mutex;
    std::string refusal;
    std::string unexpected;
    const auto start = Clock::now();
    const auto deadline = start + 3s;
    std::vector<std::thread> callers;
    for (int i = 0; i < kCallers; ++i) {
        callers.emplace_back([&] {
            crank::testing::McpClient client(port_);
            if (!client.open()) {
                other.fetch_add(1);
                return;
            }
            for (int n = 0; n < 10'000 && Clock::now() < deadline; ++n) {  // bounded
                const rapidjson::Document result = client.callTool("rated", "{}");
                const std::string text = firstText(result);
                if (!isError(result)) {
                    through.fetch_add(1);
                } else if (text.find("tool rated's rate limit") != std::string::npos) {
                    refused.fetch_add(1);
                    const std::lock_guard lock(mutex);
                    refusal = text;
                } else {
                    other.fetch_add(1);
                    const std::lock_guard lock(mutex);
                    unexpected = text;
                }
            }
        });
    }
    for (std::thread& t : callers) {
        t.join();
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_EQ(other.load(), 0) << unexpected;
    // Counted at the fixture (which counts the /stats read of `before` too).
    EXPECT_EQ(stat("requests") - before - 1, through.load());
    // The bucket starts full (5) and refills 5 a second: at most 5 + 5 s over the run, and, with
    // callers waiting all the time, a call is let through as soon as one more is in the bucket
    // (the last 0.4 s are margin for a slow machine's last round trips).
    EXPECT_LE(through.load(), 5 + static_cast<int>(5 * seconds)) << seconds << " s";
    EXPECT_GE(through.load(), 5 + static_cast<int>(5 * (seconds - 0.4))) << seconds << " s";
    RecordProperty("let_through", through.load());
    RecordProperty("refused", refused.load());
    RecordProperty("milliseconds", static_cast<int>(seconds * 1000));
    EXPECT_GT(refused.load(), 0);
    EXPECT_NE(refusal.find("5 calls a second, 5 at once"), std::string::npos) << refusal;
    EXPECT_NE(refusal.find("retry in"), std::string::npos) << refusal;
}

TEST_F(RestTest, EveryOperationIsPublished) {
    const rapidjson::Document doc =
        parse(client_->post(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})").body);
    ASSERT_TRUE(doc.HasMember("result")) << text(doc);
    EXPECT_EQ(doc["result"]["tools"].Size(), operationCount_);
}

TEST_F(RestTest, AJsonResponseIsTheResult) {
    const auto r = ok("json", R"({"n": 3})");
    ASSERT_TRUE(r.HasMember("items")) << text(r);
    EXPECT_EQ(r["n"].GetInt(), 3);
    EXPECT_EQ(r["items"].Size(), 3U);
    EXPECT_STREQ(r["items"][2]["name"].GetString(), "item-2");
}

TEST_F(RestTest, PathQueryArrayAndHeaderTemplatesReachTheUpstream) {
    const auto r =
        ok("echo_templates", R"({"id": "a b/c", "tags": ["x", "y z"], "limit": 5, "q": "a&b=c"})");
    ASSERT_TRUE(r.HasMember("path")) << text(r);
    EXPECT_STREQ(r["method"].GetString(), "GET");
    EXPECT_STREQ(r["path"].GetString(), "/echo/items/a%20b%2Fc");
    std::multiset<std::pair<std::string, std::string>> params;
    for (const auto& p : r["params"].GetArray()) {
        params.emplace(p[0].GetString(), p[1].GetString());
    }
    const std::multiset<std::pair<std::string, std::string>> expected{
        {"fixed", "1"}, {"tag", "x"},     {"tag", "y z"},
        {"limit", "5"}, {"flag", "true"}, {"q", "a&b=c"}};
    EXPECT_EQ(params, expected) << text(r["params"]);
    EXPECT_TRUE(lacks(r["query"].GetString(), "missing"));
    ASSERT_TRUE(r["headers"].HasMember("x-request-id")) << text(r["headers"]);
    EXPECT_STREQ(r["headers"]["x-request-id"].GetString(), "req-a b/c");
}

TEST_F(RestTest, AJobsRunCarriesTheTraceContextOfTheRequestThatStartedIt) {
    constexpr const char* kParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const Reply started = client_->post(
        R"({"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo_job_start",)"
        R"("arguments":{"id":"j"},"_meta":{"traceparent":")" +
        std::string(kParent) + R"(","tracestate":"job=1"}}})");
    const rapidjson::Document startedDoc = parse(started.body);
    ASSERT_TRUE(startedDoc.HasMember("result")) << started.body;
    const std::string job = startedDoc["result"]["structuredContent"]["job_id"].GetString();
    // The result is read by later requests that carry no trace context of their own.
    rapidjson::Document result;
    for (int i = 0; i < 200; ++i) {
        const Reply reply = client_->post(
            R"({"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo_job_result",)"
            R"("arguments":{"job_id":")" +
            job + R"("}}})");
        result = parse(reply.body);
        ASSERT_TRUE(result.HasMember("result")) << reply.body;
        if (result["result"]["structuredContent"]["ready"].GetBool()) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    const rapidjson::Value& content = result["result"]["structuredContent"];
    ASSERT_TRUE(content["ready"].GetBool()) << text(content);
    const rapidjson::Value& headers = content["result"]["headers"];
    ASSERT_TRUE(headers.HasMember("traceparent")) << text(content);
    EXPECT_STREQ(headers["traceparent"].GetString(), kParent);
    EXPECT_STREQ(headers["tracestate"].GetString(), "job=1");
}

TEST_F(RestTest, TheClientsTraceContextReachesTheUpstream) {
    constexpr const char* kParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    constexpr const char* kOther = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
    const std::string arguments = R"({"id": "t", "tags": [], "limit": 1, "q": "x"})";
    // The upstream's echo of the headers it got, for a tools/call with `meta` and `headers`.
    const auto upstreamHeaders = [&](const std::string& meta,
                                     const std::vector<std::pair<std::string, std::string>>&
                                         headers) {
        const Reply reply = client_->post(
            R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo_templates",)"
            R"("arguments":)" +
                arguments + (meta.empty() ? "" : R"(,"_meta":)" + meta) + "}}",
            headers);
        rapidjson::Document doc = parse(reply.body);
        rapidjson::Document out;
        out.SetObject();
        if (doc.HasMember("result") && doc["result"].HasMember("structuredContent")) {
            out.CopyFrom(doc["result"]["structuredContent"]["headers"], out.GetAllocator());
        } else {
            ADD_FAILURE() << reply.body;
        }
        return out;
    };
    // From _meta, both members.
    auto got = upstreamHeaders(R"({"traceparent":")" + std::string(kParent) +
                                   R"(","tracestate":"congo=t61rcWkgMzE, rojo=00f067aa0ba902b7"})",
                               {});
    ASSERT_TRUE(got.HasMember("traceparent")) << text(got);
    EXPECT_STREQ(got["traceparent"].GetString(), kParent);
    EXPECT_STREQ(got["tracestate"].GetString(), "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
    // From the HTTP headers when _meta has none; _meta wins when it has one.
    got = upstreamHeaders("", {{"traceparent", kOther}});
    ASSERT_TRUE(got.HasMember("traceparent")) << text(got);
    EXPECT_STREQ(got["traceparent"].GetString(), kOther);
    EXPECT_FALSE(got.HasMember("tracestate")) << text(got);
    got = upstreamHeaders(R"({"traceparent":")" + std::string(kParent) + R"("})",
                          {{"traceparent", kOther}, {"tracestate", "a=1"}});
    EXPECT_STREQ(got["traceparent"].GetString(), kParent);
    EXPECT_FALSE(got.HasMember("tracestate")) << text(got);
    // A 2026-07-28 request, stateless: its headers' context.
    const Reply modern = crank::testing::exchange(
        port_, "POST", "/mcp",
        {{"Content-Type", "application/json"},
         {"Accept", kAccept},
         {"MCP-Protocol-Version", "2026-07-28"},
         {"Mcp-Method", "tools/call"},
         {"Mcp-Name", "echo_templates"},
         {"traceparent", kOther},
         {"tracestate", "m=1"}},
        R"({"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo_templates",)"
        R"("arguments":)" +
            arguments +
            R"(,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
            R"("io.modelcontextprotocol/clientCapabilities":{}}}})");
    const rapidjson::Document modernDoc = parse(modern.body);
    ASSERT_TRUE(modernDoc.HasMember("result")) << modern.body;
    const rapidjson::Value& seen = modernDoc["result"]["structuredContent"]["headers"];
    EXPECT_STREQ(seen["traceparent"].GetString(), kOther) << modern.body;
    EXPECT_STREQ(seen["tracestate"].GetString(), "m=1") << modern.body;
    // Nothing of a malformed one, nor of its tracestate.
    for (const std::string bad :
         {"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
          "00-00000000000000000000000000000000-b7ad6b7169203331-01",
          "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
          "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
          "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra", "garbage"}) {
        SCOPED_TRACE(bad);
        got = upstreamHeaders(R"({"traceparent":")" + bad + R"(","tracestate":"a=1"})", {});
        EXPECT_FALSE(got.HasMember("traceparent")) << text(got);
        EXPECT_FALSE(got.HasMember("tracestate")) << text(got);
    }
}

TEST_F(RestTest, UnfilteredUrlTemplatesAreEncodedWhereTheyLand) {
    // Without `| url`, a value can still neither climb the path, nor add a segment or a query
    // parameter, nor smuggle an encoded slash or a fragment.
    const auto params = [](const rapidjson::Value& r) {
        std::multiset<std::pair<std::string, std::string>> out;
        for (const auto& p : r["params"].GetArray()) {
            out.emplace(p[0].GetString(), p[1].GetString());
        }
        return out;
    };
    const auto r = ok("echo_unfiltered", R"({"id": "../x%2Fy", "q": "a&admin=1"})");
    ASSERT_TRUE(r.HasMember("path")) << text(r);
    EXPECT_STREQ(r["path"].GetString(), "/echo/items/..%2Fx%252Fy");
    const std::multiset<std::pair<std::string, std::string>> expected{{"q", "a&admin=1"},
                                                                      {"fixed", "1"}};
    EXPECT_EQ(params(r), expected) << text(r["params"]);
    const auto hash = ok("echo_unfiltered", R"({"id": "x", "q": "a#b"})");
    ASSERT_TRUE(hash.HasMember("params")) << text(hash);
    EXPECT_EQ(params(hash),
              (std::multiset<std::pair<std::string, std::string>>{{"q", "a#b"}, {"fixed", "1"}}))
        << text(hash["params"]);
}

TEST_F(RestTest, ADotSegmentFromATemplateIsRefused) {
    for (const char* id : {"..", "."}) {
        const std::string message =
            failure("echo_templates", std::string(R"({"id": ")") + id + R"("})");
        EXPECT_TRUE(contains(message, "cannot build the upstream request: ")) << message;
        EXPECT_TRUE(contains(message, "config.url: the value of {{ id | url }} is \"" +
                                          std::string(id) + "\", a dot segment"))
            << message;
    }
    // Dots inside a segment are no dot segment.
    const auto r = ok("echo_templates", R"({"id": "..."})");
    EXPECT_STREQ(r["path"].GetString(), "/echo/items/...");
}

TEST_F(RestTest, AJsonBodyTemplateIsSentAsApplicationJson) {
    const auto r = ok("echo_body", R"({"name": "widget", "count": 7, "tags": ["a", "b"]})");
    ASSERT_TRUE(r.HasMember("body")) << text(r);
    EXPECT_STREQ(r["method"].GetString(), "POST");
    EXPECT_TRUE(contains(r["content_type"].GetString(), "application/json"));
    const rapidjson::Document body = parse(r["body"].GetString());
    ASSERT_TRUE(body.IsObject()) << r["body"].GetString();
    EXPECT_STREQ(body["name"].GetString(), "widget");
    EXPECT_EQ(body["count"].GetInt(), 7);
    EXPECT_EQ(text(body["tags"]), R"(["a","b"])");
    EXPECT_EQ(text(body["nested"]), R"({"k":"widget","fixed":[1,"two",null]})");
}

// --- timeouts ----------------------------------------------------------------------------------

TEST_F(RestTest, SlowHeadersTimeOutNamingTimeoutsHeadersMs) {
    const std::string message = failure("slow_headers");
    EXPECT_TRUE(contains(message, "GET " + origin() + "/slow-headers"));
    EXPECT_TRUE(contains(message, "no response headers within 500 ms (timeouts.headers_ms)"));
    EXPECT_TRUE(contains(message, "(timeout)"));
    EXPECT_TRUE(lacks(message, "ms=20000")) << "a URL in a message has no query";
    // The upstream would answer after 20 s; the call ends soon after 500 ms.
    EXPECT_LT(elapsedMs_, 6000);
}

TEST_F(RestTest, TricklingHeadersAreBoundedByTheHeadersTimeout) {
    // One byte every 100 ms keeps the socket busy: only a deadline on the whole head stops it.
    const std::string message = failure("trickle_headers");
    EXPECT_TRUE(contains(message, "no response headers within 800 ms (timeouts.headers_ms)"));
    EXPECT_TRUE(contains(message, "(timeout)"));
    EXPECT_LT(elapsedMs_, 8000);
}

TEST_F(RestTest, TricklingHeadersAreBoundedByTheTotalTimeout) {
    const std::string message = failure("trickle_total");
    // Still waiting for the head when the whole exchange's deadline passes: the message names
    // timeouts.total_ms (its wording is the head's: "no response headers within").
    EXPECT_TRUE(contains(message, "within 1000 ms (timeouts.total_ms)"));
    EXPECT_TRUE(contains(message, "(timeout)"));
    EXPECT_LT(elapsedMs_, 8000);
}

TEST_F(RestTest, ASlowBodyIsBoundedByTheTotalTimeout) {
    // 400 bytes, one every 100 ms: 40 s if nothing stopped it.
    const std::string message = failure("slow_body");
    EXPECT_TRUE(contains(message, "GET " + origin() + "/slow-body"));
    EXPECT_TRUE(contains(message, "not complete within 1000 ms (timeouts.total_ms)"));
    EXPECT_TRUE(contains(message, "(timeout)"));
    EXPECT_LT(elapsedMs_, 8000);
}

// --- errors ------------------------------------------------------------------------------------

TEST_F(RestTest, AServerErrorIsAToolErrorWithABoundedExcerpt) {
    const std::string message = failure("status", R"({"code": 500, "bytes": 2048})");
    EXPECT_TRUE(contains(message, "GET " + origin() + "/status/500"));
    EXPECT_TRUE(contains(message, "answered 500 Internal Server Error: BODY-START"));
    EXPECT_TRUE(contains(message, "(upstream)"));
    EXPECT_TRUE(contains(message, "BODY-START"));
    EXPECT_TRUE(lacks(message, "BODY-END")) << "the excerpt is the first 512 bytes only";
    EXPECT_TRUE(lacks(message, "bytes=2048"));
    // The excerpt: from the body's start to the code, at most 512 bytes of body (and an ellipsis).
    const auto excerptStart = message.find("BODY-START");
    const auto excerptEnd = message.rfind(" (upstream)");
    ASSERT_NE(excerptStart, std::string::npos);
    ASSERT_NE(excerptEnd, std::string::npos);
    EXPECT_LE(excerptEnd - excerptStart, 512U + 3U) << message;
    EXPECT_GE(excerptEnd - excerptStart, 256U) << "the excerpt is cut far too short: " << message;

    const std::string notFound = failure("status", R"({"code": 404})");
    EXPECT_TRUE(contains(notFound, "answered 404"));
    EXPECT_TRUE(contains(notFound, R"("status":404)")) << "a short body is quoted whole";

    const std::string unavailable = failure("status", R"({"code": 503})");
    EXPECT_TRUE(contains(unavailable, "answered 503 Service Unavailable"));
}

TEST_F(RestTest, ARefusedConnectionIsUnavailable) {
    const std::string port = std::to_string(refusedPort_);
    const std::string message = failure("refused");
    EXPECT_TRUE(contains(message, "GET http://127.0.0.1:" + port + "/json"));
    EXPECT_TRUE(contains(message, "connection refused by 127.0.0.1:" + port));
    EXPECT_TRUE(contains(message, "(unavailable)"));
    EXPECT_LT(elapsedMs_, 8000);
}

TEST_F(RestTest, TlsToAPlainHttpPortFailsTheHandshake) {
    const std::string port = std::to_string(fixturePort_);
    const std::string message = failure("tls_to_plain");
    EXPECT_TRUE(contains(message, "GET https://127.0.0.1:" + port + "/json"));
    EXPECT_TRUE(contains(message, "TLS handshake with 127.0.0.1:" + port + " failed"));
    EXPECT_TRUE(contains(message, "(unavailable)"));
    EXPECT_LT(elapsedMs_, 10000);
}

TEST_F(RestTest, MalformedJsonIsAProtocolError) {
    const std::string message = failure("not_json");
    EXPECT_TRUE(contains(message, "GET " + origin() + "/not-json"));
    EXPECT_TRUE(contains(message, "the response is not valid JSON"));
    EXPECT_TRUE(contains(message, "at byte"));
    EXPECT_TRUE(contains(message, "(protocol)"));
}

TEST_F(RestTest, AResponseTypeOutsideAcceptIsAProtocolError) {
    const std::string message = failure("png");
    EXPECT_TRUE(contains(message, R"(the response type "image/png" is not in accept)"));
    EXPECT_TRUE(contains(message, "(protocol)"));
}

TEST_F(RestTest, AcceptedTextBecomesAJsonString) {
    const auto r = ok("text");
    ASSERT_TRUE(r.HasMember("result")) << text(r);
    EXPECT_STREQ(r["result"].GetString(), "hello from the fixture\n");
}

// --- redirects ---------------------------------------------------------------------------------

TEST_F(RestTest, RedirectsAreFollowed) {
    const auto absolute = ok("redirects", R"({"n": 3, "to": "/json?n=2"})");
    EXPECT_EQ(absolute["n"].GetInt(), 2) << text(absolute);
    const auto relative = ok("redirects", R"({"n": 2, "to": "/json?n=4", "rel": "1"})");
    EXPECT_EQ(relative["n"].GetInt(), 4) << text(relative);
}

TEST_F(RestTest, ARedirectLoopEndsAfterFollowRedirects) {
    const std::int64_t before = stat("redirect_loop_hits");
    const std::string message = failure("redirect_loop");
    EXPECT_TRUE(contains(message, "more than 3 redirects (follow_redirects)"));
    EXPECT_TRUE(contains(message, "(upstream)"));
    // The first request and the three redirects followed.
    EXPECT_EQ(stat("redirect_loop_hits") - before, 4);
}

TEST_F(RestTest, NoRedirectIsFollowedWithFollowRedirectsZero) {
    const std::string message = failure("redirect_refused");
    EXPECT_TRUE(contains(message, origin() + "/redirect"));
}

TEST_F(RestTest, A307Or308KeepsThePostAndItsBody) {
    const auto r307 = ok("redirect_307", R"({"x": "keep me"})");
    EXPECT_STREQ(r307["path"].GetString(), "/echo");
    EXPECT_STREQ(r307["method"].GetString(), "POST");
    EXPECT_EQ(text(parse(r307["body"].GetString())), R"({"x":"keep me"})");
    const auto r308 = ok("redirect_post", R"({"code": 308, "x": "again"})");
    EXPECT_STREQ(r308["method"].GetString(), "POST");
    EXPECT_EQ(text(parse(r308["body"].GetString())), R"({"x":"again"})");
}

TEST_F(RestTest, A303Or302AfterAPostTurnsIntoAGetWithoutBody) {
    for (const char* code : {"303", "302", "301"}) {
        const auto r = ok("redirect_post", std::string(R"({"code": )") + code + R"(, "x": "y"})");
        EXPECT_STREQ(r["method"].GetString(), "GET") << code;
        EXPECT_STREQ(r["body"].GetString(), "") << code;
    }
}

TEST_F(RestTest, ARedirectToAListedOriginDropsTheCredentials) {
    const auto same = ok("same_origin");
    EXPECT_TRUE(same["authorization"].GetBool()) << "same origin keeps them: " << text(same);
    const auto other = ok("cross_origin");
    EXPECT_FALSE(other["authorization"].GetBool()) << text(other);
}

TEST_F(RestTest, ARedirectToAnUnlistedOriginIsRefused) {
    const std::int64_t alt = stat("alt_port");
    const std::string message = failure("cross_origin_unlisted");
    EXPECT_TRUE(contains(message, "GET " + origin() +
                                      "/redirect-other-origin: answered 302 with "
                                      "a redirect to http://127.0.0.1:" +
                                      std::to_string(alt) +
                                      "/auth-report, which the REST plugin refuses: it leads to "
                                      "another origin, http://127.0.0.1:" +
                                      std::to_string(alt) +
                                      ", which is not listed in redirect_origins"))
        << message;
}

TEST_F(RestTest, AnUpstreamCannotRedirectCrankdToItself) {
    // crankd's own endpoint on loopback: another origin, so refused before any request to it.
    const std::string message = failure(
        "redirect_anywhere", R"({"port": )" + std::to_string(port_) + R"(, "to": "/healthz"})");
    EXPECT_TRUE(contains(message,
                         "which the REST plugin refuses: it leads to another origin, "
                         "http://127.0.0.1:" +
                             std::to_string(port_)))
        << message;
    EXPECT_TRUE(contains(message, "(upstream)")) << message;
}

// --- compression -------------------------------------------------------------------------------

TEST_F(RestTest, GzipAndDeflateBodiesAreDecoded) {
    const auto gzip = ok("gzip");
    ASSERT_TRUE(gzip.HasMember("items")) << text(gzip);
    EXPECT_TRUE(gzip["compressed"].GetBool());
    EXPECT_EQ(gzip["items"].Size(), 200U);
    EXPECT_TRUE(contains(gzip["accept_encoding"].GetString(), "gzip"));
    const auto deflate = ok("deflate");
    ASSERT_TRUE(deflate.HasMember("items")) << text(deflate);
    EXPECT_STREQ(deflate["encoding"].GetString(), "deflate");
    EXPECT_EQ(deflate["items"].Size(), 200U);
}

TEST_F(RestTest, AGzipBombStopsAtMaxResponseBytes) {
    const std::string message = failure("gzip_bomb");
    EXPECT_TRUE(contains(message, "the response body is larger than max_response_bytes (100000)"));
    EXPECT_TRUE(contains(message, "(resource_exhausted)"));
    EXPECT_LT(elapsedMs_, 10000);
    EXPECT_EQ(exchange(port_, "GET", "/healthz", {}).status, 200);
    EXPECT_EQ(ok("json", R"({"n": 1})")["n"].GetInt(), 1);
}

TEST_F(RestTest, ACorruptGzipBodyIsAnError) {
    const std::string message = failure("bad_gzip");
    EXPECT_TRUE(contains(message, "GET " + origin() + "/bad-gzip"));
}

// --- auth --------------------------------------------------------------------------------------

TEST_F(RestTest, EveryAuthProfileTypeReachesTheUpstream) {
    for (const char* tool : {"auth_bearer", "auth_basic", "auth_key_header", "auth_key_query"}) {
        const auto r = ok(tool);
        EXPECT_TRUE(r.HasMember("ok") && r["ok"].GetBool()) << tool << ": " << text(r);
    }
    const auto tenant = ok("auth_none_headers");
    ASSERT_TRUE(tenant.HasMember("headers")) << text(tenant);
    EXPECT_TRUE(tenant["headers"].HasMember("x-tenant")) << text(tenant);
    EXPECT_FALSE(tenant["headers"].HasMember("authorization")) << text(tenant);
    // Without the profile the fixture refuses: the credential made the difference.
    const std::string refused = failure("auth_bearer_missing");
    EXPECT_TRUE(contains(refused, "answered 401"));
    EXPECT_TRUE(lacks(refused, kToken));
    drain();
    const std::string log = crankd_->stderrText();
    for (const char* secret : {kToken, kPassword, kHeaderKey, kQueryKey}) {
        EXPECT_TRUE(lacks(log, secret)) << "a secret in crankd's log";
    }
}

TEST_F(RestTest, AQueryKeyEchoedInItsPercentEncodedFormIsScrubbed) {
    // The fixture echoes the query as it arrived: the key percent-encoded, as the SDK sent it.
    const rapidjson::Document result = call("echo_odd_key_query");
    ASSERT_FALSE(isError(result)) << text(result);
    const std::string all = text(result);
    EXPECT_TRUE(lacks(all, "odd%2FKey")) << all;
    EXPECT_TRUE(lacks(all, "odd/Key")) << all;
    ASSERT_TRUE(result.HasMember("structuredContent")) << all;
    EXPECT_STREQ(result["structuredContent"]["query"].GetString(), "api_key=[redacted]") << all;
}

// --- keep-alive --------------------------------------------------------------------------------

TEST_F(RestTest, SequentialCallsReuseKeepAliveConnections) {
    const std::int64_t before = stat("accepted");
    for (int i = 0; i < 20; ++i) {
        const auto r = ok("json", R"({"n": 1})");
        ASSERT_TRUE(r.HasMember("n")) << text(r);
    }
    const std::int64_t reused = stat("accepted") - before;
    EXPECT_LE(reused, 4) << "20 sequential calls opened " << reused << " connections";

    // keep_alive.max_idle 0 ("0 disables reuse"): a connection per call, even when another
    // operation (default keep_alive) left an idle connection to the same upstream in the pool.
    ok("alt_json");
    const std::int64_t fresh = stat("accepted");
    for (int i = 0; i < 10; ++i) {
        ok("json_no_reuse");
    }
    EXPECT_EQ(stat("accepted") - fresh, 10)
        << "an operation with keep_alive.max_idle 0 reused a pooled connection";
}

// --- SSE windows -------------------------------------------------------------------------------

TEST_F(RestTest, AnSseWindowCollectsEveryEventUntilTheStreamEnds) {
    const auto r = ok("sse", R"({"count": 10})");
    EXPECT_EQ(stopReason(r), "upstream_end") << text(r);
    EXPECT_EQ(r["item_count"].GetInt(), 10);
    EXPECT_EQ(seqs(r), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
    EXPECT_TRUE(r["window_complete"].GetBool());
    EXPECT_FALSE(r["has_more"].GetBool());
    ASSERT_TRUE(r["cursor"].IsString()) << text(r);
    EXPECT_STREQ(r["cursor"].GetString(), "10");

    // The same stream delimited by the connection's close instead of chunked encoding.
    const auto closed = ok("sse", R"({"count": 4, "chunked": "0", "size": 300})");
    EXPECT_EQ(stopReason(closed), "upstream_end") << text(closed);
    EXPECT_EQ(seqs(closed), (std::vector<int>{1, 2, 3, 4}));
}

TEST_F(RestTest, SseEventTypesEnvelopeAndTextData) {
    const auto filtered = ok("sse_filtered");
    EXPECT_EQ(seqs(filtered), (std::vector<int>{2, 4, 6, 8, 10})) << text(filtered);

    const auto envelope = ok("sse_envelope");
    ASSERT_EQ(envelope["items"].Size(), 3U) << text(envelope);
    const auto& first = envelope["items"][0];
    EXPECT_STREQ(first["event"].GetString(), "tick") << text(first);
    EXPECT_STREQ(first["id"].GetString(), "1");
    EXPECT_EQ(first["data"]["seq"].GetInt(), 1);

    const auto textData = ok("sse_text");
    ASSERT_EQ(textData["items"].Size(), 3U) << text(textData);
    ASSERT_TRUE(textData["items"][0].IsString()) << text(textData);
    EXPECT_TRUE(contains(textData["items"][0].GetString(), R"("seq":1)"));
}

TEST_F(RestTest, MaxItemsClosesTheUpstreamStreamAtOnce) {
    ASSERT_TRUE(streamsClosed()) << "a stream of an earlier test is still open";
    // An endless stream, 50 events a second.
    const auto r = ok("sse_limited");
    EXPECT_EQ(stopReason(r), "max_items") << text(r);
    EXPECT_EQ(r["item_count"].GetInt(), 5);
    EXPECT_TRUE(r["has_more"].GetBool());
    EXPECT_LT(elapsedMs_, 5000);
    EXPECT_TRUE(streamsClosed()) << "the SSE connection stayed open after max_items";
}

TEST_F(RestTest, AHangingStreamEndsByUpstreamTimeoutWithTheEventsItGot) {
    const auto r = ok("sse_hang_timeout");
    EXPECT_EQ(stopReason(r), "upstream_timeout") << text(r);
    EXPECT_EQ(seqs(r), (std::vector<int>{1, 2}));
    EXPECT_FALSE(r["window_complete"].GetBool());
    EXPECT_LT(elapsedMs_, 8000);
    EXPECT_TRUE(streamsClosed());
}

TEST_F(RestTest, AHangingStreamEndsByDurationWithTheEventsItGot) {
    const auto r = ok("sse_hang_duration");
    EXPECT_EQ(stopReason(r), "duration") << text(r);
    EXPECT_EQ(seqs(r), (std::vector<int>{1, 2}));
    EXPECT_TRUE(r["window_complete"].GetBool());
    EXPECT_GE(r["elapsed_ms"].GetInt(), 1000);
    EXPECT_LT(elapsedMs_, 8000);
    EXPECT_TRUE(streamsClosed());
}

TEST_F(RestTest, MalformedEventsDoNotHideTheValidOnes) {
    const auto r = ok("sse_malformed");
    EXPECT_EQ(stopReason(r), "upstream_end") << text(r);
    const std::vector<int> got = seqs(r);
    EXPECT_EQ(std::set<int>(got.begin(), got.end()), (std::set<int>{1, 2, 3, 4, 5, 6})) << text(r);
    // Eight events carry data: six valid, one not JSON (dropped), one with invalid UTF-8.
    EXPECT_GE(r["dropped_count"].GetInt(), 1);
    EXPECT_EQ(r["item_count"].GetInt() + r["dropped_count"].GetInt(), 8) << text(r);
}

TEST_F(RestTest, AnEventLargerThanMaxEventBytesFailsTheStream) {
    const auto r = ok("sse_big");
    EXPECT_EQ(stopReason(r), "upstream_error") << text(r);
    EXPECT_EQ(seqs(r), (std::vector<int>{1}));
    ASSERT_TRUE(r.HasMember("error")) << text(r);
    EXPECT_STREQ(r["error"]["code"].GetString(), "resource_exhausted");
    EXPECT_TRUE(contains(r["error"]["message"].GetString(),
                         "an event is larger than sse.max_event_bytes (10000)"));
    EXPECT_TRUE(streamsClosed()) << "the connection is closed";

    // Without sse.max_event_bytes the call's max_item_bytes (here max_bytes) bounds an event.
    const auto small = ok("sse_big_max_bytes");
    EXPECT_EQ(stopReason(small), "upstream_error") << text(small);
    ASSERT_TRUE(small.HasMember("error")) << text(small);
    EXPECT_STREQ(small["error"]["code"].GetString(), "resource_exhausted");
    EXPECT_TRUE(contains(small["error"]["message"].GetString(), "sse.max_event_bytes"));
    EXPECT_TRUE(contains(small["error"]["message"].GetString(), "5000"));
    EXPECT_TRUE(streamsClosed());

    // The same event as many short data lines: no line is long, the event is.
    const auto lines = ok("sse_big_lines");
    EXPECT_EQ(stopReason(lines), "upstream_error") << text(lines);
    EXPECT_EQ(seqs(lines), (std::vector<int>{1}));
    ASSERT_TRUE(lines.HasMember("error")) << text(lines);
    EXPECT_STREQ(lines["error"]["code"].GetString(), "resource_exhausted");
    EXPECT_TRUE(contains(lines["error"]["message"].GetString(),
                         "an event is larger than sse.max_event_bytes (10000)"));
    EXPECT_TRUE(streamsClosed());
}

TEST_F(RestTest, AStreamClosedMidEventKeepsTheCompleteEvents) {
    // A close-delimited body: the close is its end, the half event is dropped.
    const auto mid = ok("sse_close_mid");
    EXPECT_EQ(stopReason(mid), "upstream_end") << text(mid);
    EXPECT_EQ(seqs(mid), (std::vector<int>{1, 2, 3}));

    // A chunked body cut inside a chunk is incomplete: an upstream error, after three events.
    const auto cut = ok("sse_truncated");
    EXPECT_EQ(stopReason(cut), "upstream_error") << text(cut);
    EXPECT_EQ(seqs(cut), (std::vector<int>{1, 2, 3}));
    EXPECT_TRUE(cut.HasMember("error")) << text(cut);

    // A reset: an upstream error; whatever arrived before it is kept (the reset may discard
    // bytes the kernel had not handed over yet, so only an upper bound holds).
    const rapidjson::Document reset = call("sse_reset");
    ASSERT_TRUE(reset.HasMember("structuredContent")) << text(reset);
    const auto& content = reset["structuredContent"];
    EXPECT_EQ(stopReason(content), "upstream_error") << text(content);
    EXPECT_LE(content["item_count"].GetInt(), 3);
    EXPECT_EQ(isError(reset), content["item_count"].GetInt() == 0);
}

TEST_F(RestTest, AGzipEventStreamIsDecoded) {
    const auto r = ok("sse_gzip");
    EXPECT_EQ(stopReason(r), "upstream_end") << text(r);
    EXPECT_EQ(seqs(r), (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST_F(RestTest, AStreamThatIsNotAnEventStreamFails) {
    const rapidjson::Document r = call("sse_wrong_type");
    EXPECT_TRUE(isError(r)) << text(r);
    ASSERT_TRUE(r.HasMember("structuredContent")) << text(r);
    const auto& content = r["structuredContent"];
    EXPECT_EQ(stopReason(content), "upstream_error");
    EXPECT_EQ(content["item_count"].GetInt(), 0);
    ASSERT_TRUE(content.HasMember("error")) << text(content);
    EXPECT_TRUE(contains(content["error"]["message"].GetString(), "text/plain"));
}

// --- long-poll ---------------------------------------------------------------------------------

TEST_F(RestTest, ALongPollWindowFollowsTheCursorUntilDone) {
    const auto r = ok("long_poll");
    EXPECT_EQ(stopReason(r), "upstream_end") << text(r);
    EXPECT_EQ(r["item_count"].GetInt(), 8);
    std::vector<int> ns;
    for (const auto& item : r["items"].GetArray()) {
        ns.push_back(item["n"].GetInt());
    }
    EXPECT_EQ(ns, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
    ASSERT_TRUE(r["cursor"].IsString()) << text(r);
    EXPECT_STREQ(r["cursor"].GetString(), "4");
    // The first request without a cursor, then each response's next_cursor in cursor_param.
    const rapidjson::Document s = stats();
    std::vector<std::string> cursors;
    for (const auto& c : s["long_poll_cursors"].GetArray()) {
        cursors.emplace_back(c.GetString());
    }
    ASSERT_GE(cursors.size(), 4U);
    EXPECT_EQ(std::vector<std::string>(cursors.end() - 4, cursors.end()),
              (std::vector<std::string>{"-", "1", "2", "3"}));
}

TEST_F(RestTest, ALongPollThatHangsEndsByUpstreamTimeout) {
    const auto r = ok("long_poll_hang");
    EXPECT_EQ(stopReason(r), "upstream_timeout") << text(r);
    EXPECT_EQ(r["item_count"].GetInt(), 0);
    EXPECT_LT(elapsedMs_, 8000);
}

// --- and after all that ------------------------------------------------------------------------

TEST_F(RestTest, ZzCrankdStillServesAfterTheHostileCases) {
    EXPECT_FALSE(crankd_->waitForExit(0ms).has_value()) << crankd_->stderrText();
    EXPECT_EQ(exchange(port_, "GET", "/healthz", {}).status, 200);
    const auto r = ok("json", R"({"n": 2})");
    EXPECT_EQ(r["n"].GetInt(), 2) << text(r);
    EXPECT_EQ(seqs(ok("sse", R"({"count": 3})")), (std::vector<int>{1, 2, 3}));
    EXPECT_TRUE(streamsClosed());
}

}  // namespace
