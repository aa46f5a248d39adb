// The WebSocket plugin through the real crankd, against the loopback WebSocket upstream
// crank-ws-fixture (tests/fixtures/upstreams/ws_fixture.cpp): windows, sessions and async jobs
// over subscriptions and a progress channel; subscribe and unsubscribe messages; non-JSON text,
// binary frames, fragments and oversized messages; heartbeats both ways and a dead peer;
// reconnects; refused, mismatched, slow and impossible handshakes; handshake headers and an auth
// profile; connections closed when a session expires and when crankd stops; TLS; and the
// configurations crankd --check refuses.
// Two fixture processes (plain and TLS) and one crankd serve the whole suite (one ctest entry);
// the fixture's GET /stats shows what the upstream saw: connections, open ones, clean closes,
// subscribes, pings and pongs.

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "mcp_http_client.h"
#include "temp_dir.h"
#include "test_json.h"

namespace {

using crank::testing::ChildProcess;
using crank::testing::contains;
using crank::testing::eventually;
using crank::testing::exchange;
using crank::testing::lacks;
using crank::testing::McpClient;
using crank::testing::msBetween;
using crank::testing::TempDir;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// The bearer token of the auth profile: it reaches crankd through its environment only.
constexpr const char* kToken = "tok3nWsBearer77";

std::string text(const rapidjson::Value& v) {
    return crank::testing::jsonText(v);
}

rapidjson::Document parse(const std::string& body) {
    return crank::testing::parseJsonOrFail(body);
}

/// A unique key for the fixture's drop_after bookkeeping (per connection key).
std::string uniqueKey(const std::string& what) {
    static std::atomic<int> counter{0};
    return what + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

/// A websocket operation; `extra` is more members of the operation (", ...").
std::string operation(const std::string& name, const std::string& config,
                      const std::string& execution, const std::string& extra = "") {
    return R"({"name": ")" + name +
           R"(", "protocol": "websocket", "description": "WebSocket integration test operation",
              "config": )" +
           config + R"(, "execution": )" + execution + extra + "}";
}

/// A window collecting raw items.
std::string window(int durationMs, int maxItems = 1000) {
    return R"({"mode": "window", "window_duration_ms": )" + std::to_string(durationMs) +
           R"(, "upstream_timeout_ms": 10000, "max_items": )" + std::to_string(maxItems) +
           R"(, "aggregation_mode": "raw_items", "aggregation": {"max_items": 1000}})";
}

/// The "listening on" port of a child, or 0 (after ADD_FAILURE).
std::uint16_t portOf(ChildProcess& child) {
    const auto port = child.waitForListeningPort(20s);
    if (!port) {
        ADD_FAILURE() << "no listening line: " << child.stderrText();
        return 0;
    }
    return *port;
}

/// seq of each item (-1 for an item without an integer seq).
std::vector<std::int64_t> seqs(const rapidjson::Value& page) {
    std::vector<std::int64_t> out;
    if (!page.IsObject() || !page.HasMember("items") || !page["items"].IsArray()) {
        return out;
    }
    for (const auto& item : page["items"].GetArray()) {
        if (item.IsObject() && item.HasMember("seq") && item["seq"].IsInt64()) {
            out.push_back(item["seq"].GetInt64());
        } else {
            out.push_back(-1);
        }
    }
    return out;
}

std::vector<std::int64_t> range(std::int64_t from, std::int64_t to) {
    std::vector<std::int64_t> out;
    for (std::int64_t i = from; i <= to; ++i) {
        out.push_back(i);
    }
    return out;
}

std::string member(const rapidjson::Value& object, const char* name) {
    if (!object.IsObject() || !object.HasMember(name)) {
        return "(absent)";
    }
    return object[name].IsString() ? object[name].GetString() : text(object[name]);
}

std::string stopReason(const rapidjson::Value& window) {
    return member(window, "stop_reason");
}

/// error.code and error.message of a window or a session poll ("(absent)" without one).
std::string errorCode(const rapidjson::Value& v) {
    return v.IsObject() && v.HasMember("error") ? member(v["error"], "code") : "(absent)";
}
std::string errorMessage(const rapidjson::Value& v) {
    return v.IsObject() && v.HasMember("error") ? member(v["error"], "message") : "(absent)";
}

class WebSocketTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir();
        {
            // A self-signed certificate for localhost and 127.0.0.1, made for this run.
            ChildProcess openssl(std::vector<std::string>{
                "/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=localhost", "-addext",
                "subjectAltName=DNS:localhost,IP:127.0.0.1", "-days", "1", "-keyout",
                dir_->file("k.pem"), "-out", dir_->file("c.pem")});
            ASSERT_EQ(openssl.waitForExit(20s), 0) << openssl.stderrText();
        }
        fixture_ = new ChildProcess(
            std::vector<std::string>{CRANK_WS_FIXTURE_PATH, "--listen", "127.0.0.1:0"});
        tls_ = new ChildProcess(
            std::vector<std::string>{CRANK_WS_FIXTURE_PATH, "--listen", "127.0.0.1:0", "--tls-cert",
                                     dir_->file("c.pem"), "--tls-key", dir_->file("k.pem")});
        fixturePort_ = portOf(*fixture_);
        tlsPort_ = portOf(*tls_);
        ASSERT_NE(fixturePort_, 0);
        ASSERT_NE(tlsPort_, 0);
        {
            // A port that was bound and closed again: connecting to it is refused.
            Poco::Net::ServerSocket probe(Poco::Net::SocketAddress("127.0.0.1", 0));
            refusedPort_ = probe.address().port();
            probe.close();
        }
        const std::string base = "ws://127.0.0.1:" + std::to_string(fixturePort_);
        const std::string wss = "wss://127.0.0.1:" + std::to_string(tlsPort_);
        const std::string sub = R"(, "subscribe_message_template": {"op": "subscribe",
                "channel": "{{channel}}"}, "unsubscribe_message_template": {"op": "unsubscribe",
                "channel": "{{channel}}"})";
        // Most operations take the fixture's query from the input: {"query": "count=5&..."},
        // percent-encoded into one parameter (`q`) that the fixture reads as a query itself.
        const std::string ticks = R"({"url": ")" + base + R"(/ticks?q={{query}}")";
        std::vector<std::string> ops{
            operation("ticks", ticks + "}", window(10000, 50)),
            operation("ticks_all", ticks + "}", window(10000)),
            operation("ticks_sub",
                      R"({"url": ")" + base + R"(/ticks?subscribe=1&q={{query}}")" + sub + "}",
                      window(10000, 10)),
            operation("ticks_small", ticks + R"(, "max_message_bytes": 1000})", window(10000)),
            operation("ticks_heartbeat", ticks + R"(, "heartbeat_interval_ms": 100})",
                      window(1500)),
            operation("ticks_dead",
                      ticks + R"(, "heartbeat_interval_ms": 100, "heartbeat_timeout_ms": 300})",
                      window(5000)),
            operation("ticks_dead_sparse_pings",
                      ticks + R"(, "heartbeat_interval_ms": 400, "heartbeat_timeout_ms": 300})",
                      window(5000)),
            operation("ticks_session",
                      R"({"url": ")" + base + R"(/ticks?subscribe=1&q={{query}}")" + sub +
                          R"(, "reconnect": {"attempts": 3, "initial_backoff_ms": 50}})",
                      R"({"mode": "session", "upstream_timeout_ms": 20000})"),
            operation("ticks_retry", ticks + R"(, "reconnect": {"attempts": 1,
                          "initial_backoff_ms": 50}})",
                      window(10000, 10)),
            operation("closed_port_retry",
                      R"({"url": "ws://127.0.0.1:)" + std::to_string(refusedPort_) +
                          R"(/ticks", "reconnect": {"attempts": 3, "initial_backoff_ms": 100,
                          "max_backoff_ms": 150}})",
                      window(5000)),
            operation("ticks_paused", ticks + "}",
                      R"({"mode": "session", "max_items": 20, "overflow_policy": "pause"})"),
            operation("ticks_idle", ticks + "}", R"({"mode": "session", "idle_timeout_ms": 1000})"),
            // Handshakes.
            operation("refuse", R"({"url": ")" + base + R"(/refuse"})", window(5000)),
            operation("wrong_subprotocol", ticks + R"(, "subprotocols": ["crank.v2"]})",
                      window(5000)),
            operation("closed_port",
                      R"({"url": "ws://127.0.0.1:)" + std::to_string(refusedPort_) + R"(/ticks"})",
                      window(5000)),
            operation("slow_handshake", R"({"url": ")" + base + R"(/slow-handshake?ms=3000",
                          "connect_timeout_ms": 300})",
                      window(10000)),
            operation("headers", R"({"url": ")" + base + R"(/headers?count=2&rate=0",
                          "subprotocols": ["crank.v0", "crank.v1"],
                          "headers": {"X-Tenant": "{{tenant}}", "X-Static": "fixed"}})",
                      window(10000), R"(, "auth_profile": "bearer")"),
            operation("headers_tagged",
                      R"({"url": ")" + base + R"(/headers?count=1&rate=0&tag={{tag}}"})",
                      window(10000)),
            // A progress channel.
            operation("job", R"({"url": ")" + base + R"(/job?q={{query}}",
                          "subscribe_message_template": {"op": "start", "params": {"n": "{{n}}"}},
                          "job": {"done_path": "$.done", "status_path": "$.status",
                                  "progress_path": "$.progress", "total_path": "$.total",
                                  "result_path": "$.result", "error_path": "$.error"}})",
                      R"({"mode": "async_job", "upstream_timeout_ms": 20000})"),
            operation("job_short", R"({"url": ")" + base + R"(/job?q={{query}}",
                          "subscribe_message_template": {"op": "start", "params": {}},
                          "job": {"done_path": "$.done"}})",
                      R"({"mode": "async_job", "upstream_timeout_ms": 500})"),
            // TLS.
            operation("ticks_tls",
                      R"({"url": ")" + wss + R"(/ticks?q={{query}}", "tls": {"ca_file": ")" +
                          dir_->file("c.pem") + R"("}})",
                      window(10000)),
            operation("ticks_tls_system_roots", R"({"url": ")" + wss + R"(/ticks?count=3"})",
                      window(10000)),
            operation("ticks_tls_no_verify",
                      R"({"url": ")" + wss + R"(/ticks?count=2", "tls": {"verify": false}})",
                      window(10000)),
        };
        std::string operations;
        for (const std::string& op : ops) {
            operations += (operations.empty() ? "" : ",\n") + op;
        }
        const std::string config = dir_->write(
            "crank.json", R"({"store": {"path": ")" + dir_->file("crank.db") +
                              R"("}, "plugins": {"directories": [")" CRANK_PLUGIN_DIR R"("]},
            "auth_profiles": {
                "bearer": {"type": "bearer", "token": {"env": "CRANK_WS_TEST_TOKEN"},
                           "headers": {"X-Team": "blue"}}},
            "operations": [)" +
                              operations + "]}");
        crankd_ = new ChildProcess(
            std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"},
            {{"CRANK_WS_TEST_TOKEN", kToken}});
        const auto port = crankd_->waitForListeningPort(30s);
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
        for (ChildProcess** child : {&fixture_, &tls_}) {
            if (*child != nullptr) {
                (*child)->signal(SIGTERM);
                EXPECT_EQ((*child)->waitForExit(15s), 0) << (*child)->stderrText();
                delete *child;
                *child = nullptr;
            }
        }
        delete dir_;
        dir_ = nullptr;
    }

    void SetUp() override {
        ASSERT_NE(port_, 0);
        drain();
        client_.emplace(port_);
        ASSERT_TRUE(client_->open());
    }

    /// Reads what the children wrote so far, so that no pipe fills up.
    static void drain() {
        crankd_->waitForStderrLine("\x01 never printed", 20ms);
        for (ChildProcess* child : {fixture_, tls_}) {
            child->waitForStderrLine("\x01 never printed", 2ms);
        }
    }

    /// tools/call; returns the `result` object and sets elapsedMs_.
    rapidjson::Document call(const std::string& tool, const std::string& arguments = "{}") {
        const auto start = Clock::now();
        rapidjson::Document result = client_->callTool(tool, arguments);
        elapsedMs_ = msBetween(start, Clock::now());
        return result;
    }

    /// The structuredContent of a call that must succeed (not isError).
    rapidjson::Document ok(const std::string& tool, const std::string& arguments = "{}") {
        rapidjson::Document result = call(tool, arguments);
        EXPECT_FALSE(isError(result)) << tool << " " << arguments << ": " << text(result);
        return structured(result);
    }

    /// The structuredContent of a call that must fail (isError), or {} after ADD_FAILURE.
    rapidjson::Document failed(const std::string& tool, const std::string& arguments = "{}") {
        rapidjson::Document result = call(tool, arguments);
        EXPECT_TRUE(isError(result)) << tool << " " << arguments << ": " << text(result);
        return structured(result);
    }

    static rapidjson::Document structured(const rapidjson::Document& result) {
        rapidjson::Document out;
        if (result.IsObject() && result.HasMember("structuredContent")) {
            out.CopyFrom(result["structuredContent"], out.GetAllocator());
        } else {
            ADD_FAILURE() << "no structuredContent: " << text(result);
            out.SetObject();
        }
        return out;
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

    /// The plain fixture's GET /stats (the TLS one speaks only https).
    static rapidjson::Document stats() {
        return parse(exchange(fixturePort_, "GET", "/stats", {}).body);
    }

    /// One counter of /stats (-1 after ADD_FAILURE when it is missing).
    static std::int64_t stat(const char* name) {
        const rapidjson::Document s = stats();
        if (!s.IsObject() || !s.HasMember(name) || !s[name].IsInt64()) {
            ADD_FAILURE() << name << " not in /stats: " << text(s);
            return -1;
        }
        return s[name].GetInt64();
    }

    /// Waits until the fixture holds no connection (an earlier test's are closed).
    static ::testing::AssertionResult quiet() {
        if (eventually([&] { return stat("open") == 0; }, 5s)) {
            return ::testing::AssertionSuccess();
        }
        return ::testing::AssertionFailure() << "connections still open: " << text(stats());
    }

    /// Runs `crankd --check` on a config of `operations`; its exit status and output.
    static std::pair<int, std::string> check(const std::string& file,
                                             const std::string& operations) {
        const std::string config =
            dir_->write(file, R"({"plugins": {"directories": [")" CRANK_PLUGIN_DIR R"("]},
                "operations": [)" +
                                  operations + "]}");
        ChildProcess process(std::vector<std::string>{CRANKD_PATH, "--check", "--config", config});
        const std::optional<int> status = process.waitForExit(60s);
        EXPECT_TRUE(status.has_value()) << "crankd --check did not end";
        return {status.value_or(-1), process.stdoutText() + process.stderrText()};
    }

    std::string base() const { return "ws://127.0.0.1:" + std::to_string(fixturePort_); }

    static TempDir* dir_;
    static ChildProcess* fixture_;
    static ChildProcess* tls_;
    static ChildProcess* crankd_;
    static std::uint16_t port_;
    static std::uint16_t fixturePort_;
    static std::uint16_t tlsPort_;
    static std::uint16_t refusedPort_;
    std::optional<McpClient> client_;
    std::int64_t elapsedMs_ = 0;
};

TempDir* WebSocketTest::dir_ = nullptr;
ChildProcess* WebSocketTest::fixture_ = nullptr;
ChildProcess* WebSocketTest::tls_ = nullptr;
ChildProcess* WebSocketTest::crankd_ = nullptr;
std::uint16_t WebSocketTest::port_ = 0;
std::uint16_t WebSocketTest::fixturePort_ = 0;
std::uint16_t WebSocketTest::tlsPort_ = 0;
std::uint16_t WebSocketTest::refusedPort_ = 0;

// --- windows -----------------------------------------------------------------------------------

TEST_F(WebSocketTest, AWindowTakesMaxItemsInOrderAndClosesCleanly) {
    ASSERT_TRUE(quiet());
    const std::int64_t clean = stat("clean_closes");
    const std::int64_t connections = stat("connections");
    const auto r = ok("ticks", R"({"query": "count=0&rate=0"})");
    EXPECT_EQ(stopReason(r), "max_items") << text(r);
    EXPECT_EQ(r["item_count"].GetInt(), 50) << text(r);
    EXPECT_EQ(seqs(r), range(1, 50));
    EXPECT_TRUE(r["has_more"].GetBool());
    EXPECT_EQ(errorCode(r), "(absent)") << text(r);
    ASSERT_FALSE(r["items"].Empty());
    EXPECT_TRUE(r["items"][0].HasMember("channel")) << text(r["items"][0]);
    EXPECT_LT(elapsedMs_, 5000);
    EXPECT_EQ(stat("connections"), connections + 1);
    // The plugin closed the endless stream with the close handshake.
    EXPECT_TRUE(
        eventually([&] { return stat("open") == 0 && stat("clean_closes") == clean + 1; }, 5s))
        << text(stats()) << " (clean_closes before: " << clean << ")";
}

TEST_F(WebSocketTest, AnUpstreamThatEndsTheStreamEndsTheWindow) {
    ASSERT_TRUE(quiet());
    const auto r = ok("ticks_all", R"({"query": "count=7&rate=0"})");
    EXPECT_EQ(stopReason(r), "upstream_end") << text(r);
    EXPECT_EQ(seqs(r), range(1, 7));
    EXPECT_FALSE(r["has_more"].GetBool());
    EXPECT_TRUE(r["window_complete"].GetBool());
    EXPECT_EQ(errorCode(r), "(absent)") << text(r);
    // close_after: the upstream's close 1000 "done" ends it the same way.
    const auto early = ok("ticks_all", R"({"query": "count=0&rate=0&close_after=4"})");
    EXPECT_EQ(stopReason(early), "upstream_end") << text(early);
    EXPECT_EQ(seqs(early), range(1, 4));
    EXPECT_TRUE(eventually([&] { return stat("open") == 0; }, 5s)) << text(stats());
}

TEST_F(WebSocketTest, SubscribeAndUnsubscribeMessagesCarryTheInput) {
    ASSERT_TRUE(quiet());
    const std::int64_t subscribes = stat("subscribes");
    const std::int64_t unsubscribes = stat("unsubscribes");
    const auto r = ok("ticks_sub", R"({"channel": "btc-eur", "query": "rate=50"})");
    EXPECT_EQ(stopReason(r), "max_items") << text(r);
    EXPECT_EQ(seqs(r), range(1, 10));
    for (const auto& item : r["items"].GetArray()) {
        EXPECT_EQ(member(item, "channel"), "btc-eur") << text(item);
    }
    EXPECT_TRUE(eventually(
        [&] {
            return stat("open") == 0 && stat("subscribes") == subscribes + 1 &&
                   stat("unsubscribes") == unsubscribes + 1;
        },
        5s))
        << text(stats()) << " (before: subscribes " << subscribes << ", unsubscribes "
        << unsubscribes << ")";
}

TEST_F(WebSocketTest, TextIsWrappedAndBinaryFramesAreNotPassedOn) {
    ASSERT_TRUE(quiet());
    const auto r = ok("ticks_all", R"({"query": "count=12&rate=0&text_every=3&binary_every=4"})");
    EXPECT_EQ(stopReason(r), "upstream_end") << text(r);
    std::vector<std::int64_t> ticks;
    std::vector<std::string> texts;
    for (const auto& item : r["items"].GetArray()) {
        ASSERT_TRUE(item.IsObject()) << text(item);
        if (item.HasMember("seq")) {
            ticks.push_back(item["seq"].GetInt64());
        } else if (item.HasMember("text") && item.MemberCount() == 1) {
            texts.push_back(item["text"].GetString());
        } else {
            ADD_FAILURE() << "neither a tick nor wrapped text (a binary frame?): " << text(item);
        }
    }
    // Positions 4, 8 and 12 are binary frames (binary_every wins), 3, 6 and 9 plain text.
    EXPECT_EQ(ticks, (std::vector<std::int64_t>{1, 2, 5, 7, 10, 11})) << text(r);
    EXPECT_EQ(texts, (std::vector<std::string>{"plain text 3", "plain text 6", "plain text 9"}))
        << text(r);
    EXPECT_EQ(r["item_count"].GetUint64(), ticks.size() + texts.size());
    drain();
    EXPECT_TRUE(contains(crankd_->stderrText(), "binary frames from " + base()));
}

TEST_F(WebSocketTest, FragmentedMessagesAreReassembledAroundPings) {
    ASSERT_TRUE(quiet());
    const auto r =
        ok("ticks_all", R"({"query": "count=20&rate=0&fragment=4&fragment_ping=1&size=64"})");
    EXPECT_EQ(stopReason(r), "upstream_end") << text(r);
    EXPECT_EQ(seqs(r), range(1, 20)) << text(r);
    for (const auto& item : r["items"].GetArray()) {
        EXPECT_EQ(member(item, "pad").size(), 64U) << text(item);
    }
}

TEST_F(WebSocketTest, AFragmentedOversizedMessageIsDroppedAndTheStreamGoesOn) {
    ASSERT_TRUE(quiet());
    // Every 3rd message is 2000 bytes in four fragments of ~500: each frame fits the 1000 bytes of
    // max_message_bytes, the message does not.
    const auto r = ok("ticks_small", R"({"query":
        "count=10&rate=0&fragment=4&oversize_every=3&oversize_bytes=2000"})");
    EXPECT_EQ(stopReason(r), "upstream_end") << text(r);
    EXPECT_EQ(errorCode(r), "(absent)") << text(r);
    const auto got = seqs(r);
    EXPECT_FALSE(got.empty());
    for (const auto& item : r["items"].GetArray()) {
        EXPECT_LT(text(item).size(), 1000U) << "an oversized message was passed on";
    }
    // Positions 3, 6 and 9 were the oversized ones.
    EXPECT_EQ(got, (std::vector<std::int64_t>{1, 2, 4, 5, 7, 8, 10})) << text(r);
}

TEST_F(WebSocketTest, AnUnfragmentedOversizedFrameEndsTheWindow) {
    ASSERT_TRUE(quiet());
    const rapidjson::Document result =
        call("ticks_small", R"({"query": "count=10&rate=0&oversize_every=3&oversize_bytes=2000"})");
    EXPECT_FALSE(isError(result)) << "items arrived before the frame: " << text(result);
    const auto r = structured(result);
    EXPECT_EQ(stopReason(r), "upstream_error") << text(r);
    EXPECT_EQ(errorCode(r), "resource_exhausted") << text(r);
    EXPECT_TRUE(contains(errorMessage(r), "larger than max_message_bytes (1000)"));
    EXPECT_EQ(seqs(r), range(1, 2)) << text(r);
    EXPECT_TRUE(eventually([&] { return stat("open") == 0; }, 5s)) << text(stats());
}

// --- heartbeats --------------------------------------------------------------------------------

TEST_F(WebSocketTest, PingsGoBothWays) {
    ASSERT_TRUE(quiet());
    const std::int64_t pongs = stat("pongs_received");
    const std::int64_t pings = stat("pings_received");
    const auto r = ok("ticks_heartbeat", R"({"query": "count=0&rate=5&ping_ms=50"})");
    EXPECT_EQ(stopReason(r), "duration") << text(r);
    EXPECT_EQ(errorCode(r), "(absent)") << text(r);
    const auto got = seqs(r);
    EXPECT_GE(got.size(), 4U) << text(r);
    EXPECT_EQ(got, range(1, static_cast<std::int64_t>(got.size())));
    // 1.5 s: the fixture pinged every 50 ms and we answered; we pinged every 100 ms.
    EXPECT_TRUE(eventually([&] { return stat("open") == 0; }, 5s)) << text(stats());
    EXPECT_GE(stat("pongs_received") - pongs, 10) << text(stats());
    EXPECT_GE(stat("pings_received") - pings, 5) << text(stats());
}

TEST_F(WebSocketTest, ADeadPeerEndsTheWindowLongBeforeItsDuration) {
    ASSERT_TRUE(quiet());
    const rapidjson::Document result = call("ticks_dead", R"({"query": "silent_after=3&rate=50"})");
    EXPECT_FALSE(isError(result)) << text(result);
    const auto r = structured(result);
    EXPECT_LT(elapsedMs_, 2500) << "the dead peer was not noticed: " << text(r);
    EXPECT_EQ(stopReason(r), "upstream_error") << text(r);
    EXPECT_EQ(seqs(r), range(1, 3)) << text(r);
    EXPECT_EQ(errorCode(r), "unavailable") << text(r);
    EXPECT_TRUE(contains(errorMessage(r), "answered no ping within 300 ms"));
    EXPECT_TRUE(eventually([&] { return stat("open") == 0; }, 5s)) << text(stats());
}

TEST_F(WebSocketTest, ADeadPeerIsNoticedWhenPingsAreSparserThanTheTimeout) {
    // The same dead peer, with a ping every 400 ms and 300 ms to answer it: noticed ~700 ms
    // after the last tick. (With pings more frequent than the timeout, as in the test above,
    // each new ping must not restart the wait.)
    ASSERT_TRUE(quiet());
    const rapidjson::Document result =
        call("ticks_dead_sparse_pings", R"({"query": "silent_after=3&rate=50"})");
    EXPECT_FALSE(isError(result)) << text(result);
    const auto r = structured(result);
    EXPECT_LT(elapsedMs_, 2500) << "the dead peer was not noticed: " << text(r);
    EXPECT_EQ(stopReason(r), "upstream_error") << text(r);
    EXPECT_EQ(seqs(r), range(1, 3)) << text(r);
    EXPECT_EQ(errorCode(r), "unavailable") << text(r);
    EXPECT_TRUE(contains(errorMessage(r), "answered no ping within 300 ms"));
    EXPECT_TRUE(eventually([&] { return stat("open") == 0; }, 5s)) << text(stats());
}

// --- reconnects --------------------------------------------------------------------------------

TEST_F(WebSocketTest, ASessionReconnectsAfterADropAndSubscribesAgain) {
    ASSERT_TRUE(quiet());
    const std::int64_t connections = stat("connections");
    const std::int64_t subscribes = stat("subscribes");
    const std::int64_t drops = stat("abrupt_drops");
    const std::string key = uniqueKey("reconnect");
    const auto started = ok(
        "ticks_session_start",
        R"({"channel": "eth", "query": "rate=50&drop_after=5&drop_times=1&key=)" + key + R"("})");
    ASSERT_TRUE(started.HasMember("session_id")) << text(started);
    EXPECT_EQ(member(started, "status"), "active");
    const std::string session = R"({"session_id": ")" + member(started, "session_id") + "\"";

    // Poll until items from the second connection came: 5 before the drop, more after it.
    std::vector<std::int64_t> all;
    std::vector<std::string> channels;
    std::string cursor;
    int polls = 0;
    const bool enough = eventually(
        [&] {
            ++polls;
            const auto page =
                ok("ticks_session_poll",
                   session + (cursor.empty() ? "" : R"(, "cursor": ")" + cursor + "\"") + "}");
            EXPECT_EQ(member(page, "status"), "active") << text(page);
            for (const auto& item : page["items"].GetArray()) {
                all.push_back(item.HasMember("seq") ? item["seq"].GetInt64() : -1);
                channels.push_back(member(item, "channel"));
            }
            if (page.HasMember("cursor") && page["cursor"].IsString()) {
                cursor = page["cursor"].GetString();
            }
            return all.size() >= 15;
        },
        10s);
    ASSERT_TRUE(enough) << "items so far: " << all.size() << " " << text(stats());
    EXPECT_GE(polls, 2);
    // The first connection's 5 ticks, then the second's from 1 again.
    ASSERT_GE(all.size(), 15U);
    EXPECT_EQ(std::vector<std::int64_t>(all.begin(), all.begin() + 5), range(1, 5));
    EXPECT_EQ(std::vector<std::int64_t>(all.begin() + 5, all.begin() + 15), range(1, 10));
    for (const std::string& c : channels) {
        EXPECT_EQ(c, "eth");
    }
    EXPECT_EQ(stat("connections"), connections + 2) << text(stats());
    EXPECT_EQ(stat("subscribes"), subscribes + 2) << text(stats());
    EXPECT_EQ(stat("abrupt_drops"), drops + 1) << text(stats());
    EXPECT_EQ(stat("open"), 1) << text(stats());
    drain();
    EXPECT_TRUE(contains(crankd_->stderrText(), "reconnecting in 50 ms (attempt 1 of 3)"));

    const auto stopped = ok("ticks_session_stop", session + "}");
    EXPECT_TRUE(stopped.IsObject()) << text(stopped);
    EXPECT_TRUE(eventually([&] { return stat("open") == 0; }, 5s)) << text(stats());
    const auto after = ok("ticks_session_poll", session + "}");
    EXPECT_EQ(member(after, "status"), "stopped") << text(after);
}

TEST_F(WebSocketTest, WithoutReconnectADropEndsTheWindowWithItsItems) {
    ASSERT_TRUE(quiet());
    const std::string key = uniqueKey("drop");
    const rapidjson::Document result =
        call("ticks_all", R"({"query": "rate=50&drop_after=5&drop_times=1&key=)" + key + R"("})");
    EXPECT_FALSE(isError(result)) << text(result);
    const auto r = structured(result);
    EXPECT_EQ(stopReason(r), "upstream_error") << text(r);
    EXPECT_EQ(seqs(r), range(1, 5)) << text(r);
    EXPECT_EQ(errorCode(r), "unavailable") << text(r);
    EXPECT_TRUE(contains(errorMessage(r), base() + "/ticks"));
    EXPECT_LT(elapsedMs_, 5000);
}

TEST_F(WebSocketTest, EverySuccessfulSubscriptionResetsTheCountOfFailures) {
    // attempts 1, and three drops in a row, each after a successful subscription: each drop is
    // the first failure in a row again, so the window reads on through a fourth connection.
    ASSERT_TRUE(quiet());
    const std::int64_t connections = stat("connections");
    const std::int64_t drops = stat("abrupt_drops");
    const std::string key = uniqueKey("reset");
    const auto r =
        ok("ticks_retry", R"({"query": "rate=0&drop_after=2&drop_times=3&key=)" + key + R"("})");
    EXPECT_EQ(stopReason(r), "max_items") << text(r);
    EXPECT_EQ(errorCode(r), "(absent)") << text(r);
    EXPECT_EQ(seqs(r), (std::vector<std::int64_t>{1, 2, 1, 2, 1, 2, 1, 2, 3, 4})) << text(r);
    EXPECT_EQ(stat("connections"), connections + 4) << text(stats());
    EXPECT_EQ(stat("abrupt_drops"), drops + 3) << text(stats());
    EXPECT_TRUE(eventually([&] { return stat("open") == 0; }, 5s)) << text(stats());
}

TEST_F(WebSocketTest, AFailedConnectIsRetriedWithBackoffUntilTheAttemptsRunOut) {
    const auto r = failed("closed_port_retry");
    EXPECT_EQ(stopReason(r), "upstream_error") << text(r);
    EXPECT_EQ(errorCode(r), "unavailable") << text(r);
    EXPECT_TRUE(contains(errorMessage(r), "cannot connect to ws://127.0.0.1:"));
    // 100, then 150 and 150 (max_backoff_ms) between the four connects.
    EXPECT_GE(elapsedMs_, 400);
    EXPECT_LT(elapsedMs_, 3000);
    drain();
    const std::string log = crankd_->stderrText();
    EXPECT_TRUE(contains(log, "reconnecting in 100 ms (attempt 1 of 3)"));
    EXPECT_TRUE(contains(log, "reconnecting in 150 ms (attempt 2 of 3)"));
    EXPECT_TRUE(contains(log, "reconnecting in 150 ms (attempt 3 of 3)"));
    EXPECT_TRUE(lacks(log, "(attempt 4 of 3)"));
}

// --- backpressure ------------------------------------------------------------------------------

TEST_F(WebSocketTest, AFullSessionBufferPausesTheReadAndLosesNothing) {
    ASSERT_TRUE(quiet());
    const auto started = ok("ticks_paused_start", R"({"query": "count=0&rate=0&size=200"})");
    ASSERT_TRUE(started.HasMember("session_id")) << text(started);
    const std::string session = R"({"session_id": ")" + member(started, "session_id") + "\"";
    std::vector<std::int64_t> all;
    std::string cursor;
    const bool enough = eventually(
        [&] {
            const auto page =
                ok("ticks_paused_poll",
                   session + (cursor.empty() ? "" : R"(, "cursor": ")" + cursor + "\"") + "}");
            EXPECT_EQ(member(page, "status"), "active") << text(page);
            EXPECT_EQ(member(page, "dropped_count"), "0") << text(page);
            EXPECT_LE(page["items"].Size(), 20U);
            const auto got = seqs(page);
            all.insert(all.end(), got.begin(), got.end());
            if (page.HasMember("cursor") && page["cursor"].IsString()) {
                cursor = page["cursor"].GetString();
            }
            return all.size() >= 200;
        },
        15s);
    ASSERT_TRUE(enough) << "items so far: " << all.size();
    EXPECT_EQ(all, range(1, static_cast<std::int64_t>(all.size()))) << "an item lost or repeated";
    ok("ticks_paused_stop", session + "}");
    EXPECT_TRUE(eventually([&] { return stat("open") == 0; }, 5s)) << text(stats());
}

// --- handshakes --------------------------------------------------------------------------------

TEST_F(WebSocketTest, ARefusedHandshakeNamesTheHttpStatus) {
    const auto r = failed("refuse");
    EXPECT_EQ(stopReason(r), "upstream_error") << text(r);
    EXPECT_EQ(r["item_count"].GetInt(), 0);
    EXPECT_EQ(errorCode(r), "upstream") << text(r);
    EXPECT_TRUE(contains(errorMessage(r),
                         "refused the WebSocket handshake at " + base() + "/refuse: HTTP 403"));
    EXPECT_LT(elapsedMs_, 5000);
}

TEST_F(WebSocketTest, ASubprotocolThatWasNotOfferedIsAProtocolError) {
    const auto r = failed("wrong_subprotocol", R"({"query": "count=3&subprotocol=crank.v1"})");
    EXPECT_EQ(errorCode(r), "protocol") << text(r);
    EXPECT_TRUE(contains(errorMessage(r),
                         "chose the subprotocol \"crank.v1\", which was not offered (offered: "
                         "crank.v2)"));
    // Left to the fixture, it chooses the one offered: the stream runs.
    const auto fine = ok("wrong_subprotocol", R"({"query": "count=3&rate=0"})");
    EXPECT_EQ(seqs(fine), range(1, 3)) << text(fine);
}

TEST_F(WebSocketTest, AClosedPortIsUnavailable) {
    const auto r = failed("closed_port");
    EXPECT_EQ(errorCode(r), "unavailable") << text(r);
    EXPECT_TRUE(contains(errorMessage(r), "cannot connect to ws://127.0.0.1:" +
                                              std::to_string(refusedPort_) + "/ticks"));
    EXPECT_LT(elapsedMs_, 5000);
}

TEST_F(WebSocketTest, ASlowHandshakeTimesOutAtConnectTimeout) {
    const auto r = failed("slow_handshake");
    EXPECT_EQ(errorCode(r), "timeout") << text(r);
    EXPECT_TRUE(contains(errorMessage(r), "no WebSocket handshake answer from " + base() +
                                              "/slow-handshake?ms=3000 within 300 ms"));
    EXPECT_GE(elapsedMs_, 250);
    EXPECT_LT(elapsedMs_, 2000);
}

// --- headers and auth --------------------------------------------------------------------------

TEST_F(WebSocketTest, HandshakeHeadersCarryTemplatesAndTheAuthProfile) {
    const rapidjson::Document result = call("headers", R"({"tenant": "acme"})");
    ASSERT_FALSE(isError(result)) << text(result);
    const auto r = structured(result);
    EXPECT_EQ(stopReason(r), "upstream_end") << text(r);
    ASSERT_GE(r["items"].Size(), 1U) << text(r);
    const rapidjson::Value& first = r["items"][0];
    ASSERT_TRUE(first.HasMember("headers") && first["headers"].IsObject()) << text(first);
    const rapidjson::Value& h = first["headers"];
    EXPECT_EQ(member(h, "x-tenant"), "acme") << text(h);
    EXPECT_EQ(member(h, "x-static"), "fixed") << text(h);
    EXPECT_EQ(member(h, "x-team"), "blue") << text(h);
    // The fixture saw "Bearer <token>"; crankd replaced the secret in the result.
    EXPECT_EQ(member(h, "authorization"), "Bearer [redacted]") << text(h);
    EXPECT_EQ(member(h, "sec-websocket-protocol"), "crank.v0, crank.v1") << text(h);
    EXPECT_EQ(member(first, "subprotocol"), "crank.v1") << text(first);
    EXPECT_EQ(seqs(r).back(), 2) << text(r);
    EXPECT_TRUE(lacks(text(result), kToken));
    drain();
    EXPECT_TRUE(lacks(crankd_->stderrText(), kToken)) << "a secret in crankd's log";
}

TEST_F(WebSocketTest, TheClientsTraceContextGoesInTheHandshake) {
    const rapidjson::Document result = client_->callTool(
        "headers", R"({"tenant": "acme"})", nullptr,
        R"({"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",)"
        R"("tracestate":"rojo=00f067aa0ba902b7"})");
    ASSERT_FALSE(isError(result)) << text(result);
    const auto r = structured(result);
    ASSERT_GE(r["items"].Size(), 1U) << text(r);
    const rapidjson::Value& h = r["items"][0]["headers"];
    EXPECT_EQ(member(h, "traceparent"), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        << text(h);
    EXPECT_EQ(member(h, "tracestate"), "rojo=00f067aa0ba902b7") << text(h);
    drain();
}

TEST_F(WebSocketTest, ATemplateValueInTheUrlIsPercentEncodedAndCannotAddParameters) {
    // A value that would end the parameter, add one, climb the path and start a fragment.
    const rapidjson::Document result = call("headers_tagged", R"({"tag": "a&count=9/../x#y z"})");
    ASSERT_FALSE(isError(result)) << text(result);
    const auto r = structured(result);
    ASSERT_GE(r["items"].Size(), 1U) << text(r);
    EXPECT_EQ(member(r["items"][0], "target"),
              "/headers?count=1&rate=0&tag=a%26count%3D9%2F..%2Fx%23y%20z")
        << text(r);
    EXPECT_EQ(seqs(r).back(), 1) << "count stayed 1: " << text(r);
    drain();
}

// --- async jobs --------------------------------------------------------------------------------

TEST_F(WebSocketTest, AProgressChannelIsAnAsyncJob) {
    const auto started = ok("job_start", R"({"n": 7, "query": "interval_ms=300"})");
    ASSERT_TRUE(started.HasMember("job_id")) << text(started);
    const std::string job = R"({"job_id": ")" + member(started, "job_id") + "\"}";
    rapidjson::Document status;
    bool sawProgress = false;
    ASSERT_TRUE(eventually(
        [&] {
            status = ok("job_status", job);
            const std::string s = member(status, "status");
            if (s == "running" && status.HasMember("progress") && status["progress"].IsObject() &&
                status["progress"].HasMember("progress")) {
                sawProgress = true;
                EXPECT_EQ(member(status["progress"], "total"), "5") << text(status);
                EXPECT_EQ(member(status["progress"], "message"), "running") << text(status);
            }
            return s != "queued" && s != "running";
        },
        15s))
        << text(status);
    EXPECT_TRUE(sawProgress) << "no progress while running; last: " << text(status);
    EXPECT_EQ(member(status, "status"), "succeeded") << text(status);
    const auto result = ok("job_result", job);
    ASSERT_TRUE(result["ready"].GetBool()) << text(result);
    EXPECT_EQ(text(result["result"]), R"({"steps":5,"echo":{"n":7}})");
}

TEST_F(WebSocketTest, AFailedJobSaysWhy) {
    const auto started = ok("job_start", R"({"n": 1, "query": "fail=1"})");
    ASSERT_TRUE(started.HasMember("job_id")) << text(started);
    const std::string job = R"({"job_id": ")" + member(started, "job_id") + "\"}";
    rapidjson::Document status;
    ASSERT_TRUE(eventually(
        [&] {
            status = ok("job_status", job);
            const std::string s = member(status, "status");
            return s != "queued" && s != "running";
        },
        15s))
        << text(status);
    EXPECT_EQ(member(status, "status"), "failed") << text(status);
    EXPECT_TRUE(contains(text(status), "job failed"));
    const rapidjson::Document result = call("job_result", job);
    EXPECT_TRUE(isError(result)) << text(result);
    EXPECT_TRUE(contains(firstText(result), "job failed"));
}

TEST_F(WebSocketTest, ACancelledJobClosesItsConnection) {
    ASSERT_TRUE(quiet());
    const std::int64_t clean = stat("clean_closes");
    const auto started = ok("job_start", R"({"n": 2, "query": "steps=100&interval_ms=100"})");
    ASSERT_TRUE(started.HasMember("job_id")) << text(started);
    const std::string job = R"({"job_id": ")" + member(started, "job_id") + "\"}";
    ASSERT_TRUE(eventually([&] { return stat("open") == 1; }, 5s)) << text(stats());
    const auto cancelled = ok("job_cancel", job);
    EXPECT_EQ(member(cancelled, "cancelled"), "true") << text(cancelled);
    EXPECT_TRUE(
        eventually([&] { return stat("open") == 0 && stat("clean_closes") == clean + 1; }, 5s))
        << text(stats());
    EXPECT_EQ(member(ok("job_status", job), "status"), "cancelled");
}

TEST_F(WebSocketTest, AJobBoundedByUpstreamTimeoutFailsWithATimeout) {
    ASSERT_TRUE(quiet());
    const auto started = ok("job_short_start", R"({"query": "steps=100&interval_ms=100"})");
    ASSERT_TRUE(started.HasMember("job_id")) << text(started);
    const std::string job = R"({"job_id": ")" + member(started, "job_id") + "\"}";
    rapidjson::Document status;
    ASSERT_TRUE(eventually(
        [&] {
            status = ok("job_short_status", job);
            const std::string s = member(status, "status");
            return s != "queued" && s != "running";
        },
        10s))
        << text(status);
    EXPECT_EQ(member(status, "status"), "failed") << text(status);
    EXPECT_TRUE(contains(text(status), "did not finish within 500 ms")) << text(status);
    EXPECT_TRUE(contains(text(status), "timeout")) << text(status);
    EXPECT_TRUE(eventually([&] { return stat("open") == 0; }, 5s)) << text(stats());
}

// --- connections the plugin must close ---------------------------------------------------------

TEST_F(WebSocketTest, AnExpiredSessionClosesItsConnection) {
    ASSERT_TRUE(quiet());
    const std::int64_t clean = stat("clean_closes");
    const auto started = ok("ticks_idle_start", R"({"query": "count=0&rate=20"})");
    ASSERT_TRUE(started.HasMember("session_id")) << text(started);
    const std::string session = R"({"session_id": ")" + member(started, "session_id") + "\"}";
    ASSERT_TRUE(eventually([&] { return stat("open") == 1; }, 5s)) << text(stats());
    // Never polled: expired after 1 s, and the plugin closes the connection.
    EXPECT_TRUE(
        eventually([&] { return stat("open") == 0 && stat("clean_closes") == clean + 1; }, 6s))
        << text(stats());
    const auto after = ok("ticks_idle_poll", session);
    EXPECT_EQ(member(after, "status"), "expired") << text(after);
}

TEST_F(WebSocketTest, StoppingCrankdClosesTheConnectionsOfItsSessions) {
    ASSERT_TRUE(quiet());
    const std::int64_t clean = stat("clean_closes");
    const std::string config = dir_->write(
        "stopping.json",
        R"({"store": {"path": ")" + dir_->file("stopping.db") +
            R"("}, "plugins": {"directories": [")" CRANK_PLUGIN_DIR R"("]},
            "operations": [)" +
            operation("endless", R"({"url": ")" + base() + R"(/ticks?count=0&rate=20"})",
                      R"({"mode": "session"})") +
            "]}");
    ChildProcess crankd(
        std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"});
    const auto port = crankd.waitForListeningPort(30s);
    ASSERT_TRUE(port) << crankd.stderrText();
    McpClient client(*port);
    ASSERT_TRUE(client.open());
    const rapidjson::Document started = client.callTool("endless_start", "{}");
    ASSERT_FALSE(isError(started)) << text(started);
    ASSERT_TRUE(eventually([&] { return stat("open") == 1; }, 5s)) << text(stats());
    crankd.signal(SIGTERM);
    EXPECT_EQ(crankd.waitForExit(20s), 0) << crankd.stderrText();
    EXPECT_TRUE(
        eventually([&] { return stat("open") == 0 && stat("clean_closes") == clean + 1; }, 5s))
        << text(stats());
}

// --- TLS ---------------------------------------------------------------------------------------

TEST_F(WebSocketTest, WssWithTheRightRootsWorksAndTheSystemRootsDoNot) {
    const auto r = ok("ticks_tls", R"({"query": "count=3&rate=0"})");
    EXPECT_EQ(stopReason(r), "upstream_end") << text(r);
    EXPECT_EQ(seqs(r), range(1, 3));
    EXPECT_EQ(seqs(ok("ticks_tls_no_verify")), range(1, 2));
    const auto untrusted = failed("ticks_tls_system_roots");
    EXPECT_EQ(errorCode(untrusted), "unavailable") << text(untrusted);
    EXPECT_TRUE(contains(errorMessage(untrusted), "TLS with wss://127.0.0.1:"));
    EXPECT_LT(elapsedMs_, 10000);
}

// --- configurations crankd refuses -------------------------------------------------------------

TEST_F(WebSocketTest, CrankdCheckRefusesWhatCannotWork) {
    const std::string url = base() + "/ticks";
    const std::vector<std::string> ops{
        operation("unary", R"({"url": ")" + url + R"("})", R"({"mode": "unary"})"),
        operation("http", R"({"url": "http://127.0.0.1:1/ticks"})", window(1000)),
        operation("key_header",
                  R"({"url": ")" + url + R"(", "headers": {"Sec-WebSocket-Key": "x"}})",
                  window(1000)),
        operation("no_done_path", R"({"url": ")" + url + R"(", "job": {"status_path": "$.s"}})",
                  R"({"mode": "async_job"})"),
        operation("contradiction", R"({"url": ")" + url + R"("})",
                  R"({"mode": "window", "transport_behavior": "request_response"})"),
    };
    std::string operations;
    for (const std::string& op : ops) {
        operations += (operations.empty() ? "" : ",\n") + op;
    }
    const auto [status, out] = check("refused.json", operations);
    EXPECT_EQ(status, 3) << out;
    EXPECT_TRUE(contains(out,
                         "operations[0].execution.mode: the protocol \"websocket\" does not "
                         "support mode \"unary\""));
    EXPECT_TRUE(contains(out,
                         "operations[1].config.url: expected a ws:// or wss:// URL, got "
                         "\"http://127.0.0.1:1/ticks\""));
    EXPECT_TRUE(contains(out,
                         "operations[2].config.headers.Sec-WebSocket-Key: is set by the plugin "
                         "itself (the WebSocket handshake)"));
    EXPECT_TRUE(contains(out, "operations[3].config.job.done_path: is required"));
    EXPECT_TRUE(contains(out,
                         "operations[4].execution.transport_behavior: is \"request_response\", "
                         "but the upstream's method is \"server_stream\""));
    for (int i = 0; i < 5; ++i) {
        const std::string path = "operations[" + std::to_string(i) + "]";
        EXPECT_NE(out.find(path), std::string::npos) << path << ": " << out;
    }
    EXPECT_EQ(out.find("operations[5]"), std::string::npos) << out;

    // What the refused ones meant to do, written right, passes.
    const auto [goodStatus, goodOut] =
        check("good.json",
              operation("window", R"({"url": ")" + url + R"(", "headers": {"X-Ok": "v"}})",
                        window(1000)) +
                  "," +
                  operation("job", R"({"url": ")" + url + R"(", "job": {"done_path": "$.done"}})",
                            R"({"mode": "async_job"})"));
    EXPECT_EQ(goodStatus, 0) << goodOut;
    EXPECT_TRUE(contains(goodOut, "configuration is valid (2 operations"));
}

// --- and after all that ------------------------------------------------------------------------

TEST_F(WebSocketTest, ZzCrankdStillServesAndNoConnectionIsLeft) {
    EXPECT_FALSE(crankd_->waitForExit(0ms).has_value()) << crankd_->stderrText();
    EXPECT_EQ(exchange(port_, "GET", "/healthz", {}).status, 200);
    EXPECT_EQ(seqs(ok("ticks_all", R"({"query": "count=2&rate=0"})")), range(1, 2));
    EXPECT_TRUE(quiet());
}

}  // namespace
