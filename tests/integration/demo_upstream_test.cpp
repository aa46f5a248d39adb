// crank-demo-upstream, the demo's own upstream: its REST, SSE and long-poll endpoints over real
// loopback HTTP. Its SSE is read back with the REST plugin's SSE parser.

#include <signal.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "mcp_http_client.h"
#include "temp_dir.h"
#include <crank/sdk/http/sse.hpp>

namespace {

using crank::testing::ChildProcess;
using crank::testing::exchange;
using crank::testing::Reply;
using crank::testing::TempDir;
using namespace std::chrono_literals;

class DemoUpstreamTest : public ::testing::Test {
protected:
    void SetUp() override {
        process_.emplace(
            std::vector<std::string>{CRANK_DEMO_UPSTREAM_PATH, "--listen", "127.0.0.1:0"});
        const auto port = process_->waitForListeningPort(20s);
        ASSERT_TRUE(port) << process_->stderrText();
        port_ = *port;
    }

    void TearDown() override {
        process_->signal(SIGTERM);
        EXPECT_EQ(process_->waitForExit(20s), 0) << process_->stderrText();
    }

    Reply get(const std::string& path) { return exchange(port_, "GET", path, {}); }

    std::optional<ChildProcess> process_;
    std::uint16_t port_ = 0;
};

TEST_F(DemoUpstreamTest, ItemsArePagedWithACursorUntilDone) {
    const Reply first = get("/items?limit=3");
    ASSERT_EQ(first.status, 200);
    const auto page = first.json();
    EXPECT_EQ(page["items"].Size(), 3U);
    EXPECT_STREQ(page["next_cursor"].GetString(), "3");
    EXPECT_FALSE(page["done"].GetBool());
    const auto last = get("/items?limit=100&cursor=990").json();
    EXPECT_EQ(last["items"].Size(), 10U);
    EXPECT_TRUE(last["done"].GetBool());
    EXPECT_EQ(get("/items/7").json()["id"].GetInt(), 7);
    EXPECT_EQ(get("/items/0").status, 404);
    EXPECT_EQ(get("/items/abc").status, 404);
    EXPECT_EQ(get("/nowhere").status, 404);
}

TEST_F(DemoUpstreamTest, EchoReturnsTheBody) {
    const Reply reply = exchange(port_, "POST", "/echo", {{"Content-Type", "application/json"}},
                                 R"({"hello":"world"})");
    EXPECT_EQ(reply.status, 200);
    EXPECT_EQ(reply.body, R"({"hello":"world"})");
}

TEST_F(DemoUpstreamTest, LogAndMetricsStreamsAreServerSentEvents) {
    for (const std::string kind : {"logs", "metrics"}) {
        const Reply reply = get("/" + kind + "/stream?count=5&rate=1000");
        ASSERT_EQ(reply.status, 200);
        EXPECT_EQ(reply.header("content-type"), "text/event-stream");
        // The body is chunked: undo the chunking before parsing.
        std::string body;
        std::size_t i = 0;
        while (i < reply.body.size()) {
            const std::size_t lineEnd = reply.body.find("\r\n", i);
            ASSERT_NE(lineEnd, std::string::npos);
            const std::size_t size = std::stoul(reply.body.substr(i, lineEnd - i), nullptr, 16);
            if (size == 0) {
                break;
            }
            body += reply.body.substr(lineEnd + 2, size);
            i = lineEnd + 2 + size + 2;
        }
        crank::sdk::http::SseParser parser;
        std::vector<crank::sdk::http::SseEvent> events;
        ASSERT_TRUE(parser.feed(body, events)) << parser.error();
        ASSERT_EQ(events.size(), 5U) << body;
        EXPECT_EQ(events[0].type, kind == "logs" ? "log" : "metrics");
        EXPECT_EQ(events[4].id, "5");
        rapidjson::Document item;
        item.Parse(events[2].data.c_str());
        ASSERT_FALSE(item.HasParseError()) << events[2].data;
        EXPECT_EQ(item["seq"].GetInt(), 3);
    }
}

TEST_F(DemoUpstreamTest, LongPollWaitsForNewEventsAfterTheCursor) {
    const auto first = get("/events/poll?cursor=0&wait_ms=3000").json();
    ASSERT_GE(first["events"].Size(), 1U);
    const std::string cursor = first["cursor"].GetString();
    const auto next = get("/events/poll?cursor=" + cursor + "&wait_ms=3000").json();
    ASSERT_GE(next["events"].Size(), 1U);
    EXPECT_EQ(next["events"][0]["n"].GetInt(), std::stoi(cursor) + 1);
}

/// examples/demo.json as scripts/run.sh uses it, with the demo upstream on this test's port and
/// crankd on a free one: every tool it publishes answers through the REST plugin (the session
/// too: started, polled, stopped).
TEST_F(DemoUpstreamTest, TheDemoConfigPublishesEveryModeThroughTheRestPlugin) {
    std::ifstream in(CRANK_SOURCE_DIR "/examples/demo.json");
    std::stringstream text;
    text << in.rdbuf();
    std::string config = text.str();
    const TempDir dir;
    const auto replaceAll = [&config](const std::string& from, const std::string& to) {
        for (std::size_t at = config.find(from); at != std::string::npos;
             at = config.find(from, at + to.size())) {
            config.replace(at, from.size(), to);
        }
    };
    replaceAll("127.0.0.1:8081", "127.0.0.1:" + std::to_string(port_));
    replaceAll("./crank.db", dir.file("crank.db"));
    ChildProcess crankd(
        std::vector<std::string>{CRANKD_PATH, "--config", dir.write("demo.json", config),
                                 "--listen", "127.0.0.1:0"},
        {{"CRANK_ADMIN_TOKEN", "demo-admin-token"}});
    const auto crankdPort = crankd.waitForListeningPort(20s);
    ASSERT_TRUE(crankdPort) << crankd.stderrText();

    crank::testing::McpClient client(*crankdPort);
    ASSERT_TRUE(client.open());
    // structuredContent of a successful call.
    const auto call = [&client](const std::string& tool, const std::string& arguments) {
        const rapidjson::Document result = client.callTool(tool, arguments);
        rapidjson::Document out;
        if (result.HasMember("structuredContent") && !result["isError"].GetBool()) {
            out.CopyFrom(result["structuredContent"], out.GetAllocator());
        } else {
            ADD_FAILURE() << tool << ": no structuredContent";
            out.SetObject();
        }
        return out;
    };

    const auto item = call("get_item", R"({"id": 7})");
    ASSERT_TRUE(item.HasMember("name"));
    EXPECT_STREQ(item["name"].GetString(), "nut-7");

    const auto echo = call("echo", R"({"note": "hello", "tags": ["a", "b"]})");
    ASSERT_TRUE(echo.HasMember("note"));
    EXPECT_STREQ(echo["note"].GetString(), "hello");
    EXPECT_EQ(echo["tags"].Size(), 2U);

    const auto logs = call("recent_logs", R"({"rate": 200})");
    ASSERT_TRUE(logs.HasMember("summary"));
    EXPECT_GT(logs["item_count"].GetInt(), 0);
    EXPECT_EQ(logs["summary"]["count"].GetInt(), logs["item_count"].GetInt());
    EXPECT_TRUE(logs["summary"]["counts"].HasMember("level"));

    const auto cpu = call("cpu_stats", "{}");
    ASSERT_TRUE(cpu.HasMember("stats"));
    EXPECT_GT(cpu["stats"]["numeric"]["cpu"]["count"].GetInt(), 0);
    EXPECT_LE(cpu["stats"]["numeric"]["cpu"]["max"].GetDouble(), 99.0);

    const auto events = call("recent_events", "{}");
    ASSERT_TRUE(events.HasMember("items"));
    EXPECT_GT(events["items"].Size(), 0U);
    EXPECT_TRUE(events.HasMember("cursor"));

    const auto started = call("follow_logs_start", R"({"rate": 200})");
    ASSERT_TRUE(started.HasMember("session_id"));
    const std::string id = started["session_id"].GetString();
    int seen = 0;
    std::string cursor = "0";
    for (int i = 0; i < 100 && seen < 5; ++i) {
        const auto page = call("follow_logs_poll",
                               R"({"session_id": ")" + id + R"(", "cursor": ")" + cursor + "\"}");
        ASSERT_TRUE(page.HasMember("items"));
        seen += static_cast<int>(page["items"].Size());
        cursor = page["cursor"].GetString();
        std::this_thread::sleep_for(50ms);
    }
    EXPECT_GE(seen, 5);
    const auto stopped = call("follow_logs_stop", R"({"session_id": ")" + id + "\"}");
    EXPECT_STREQ(stopped["status"].GetString(), "stopped");

    // The report job: started at once, followed by status with growing progress, then the
    // downloaded report as its result.
    const auto job = call("report_start", R"({"rows": 200})");
    ASSERT_TRUE(job.HasMember("job_id"));
    const std::string jobId = job["job_id"].GetString();
    std::string status;
    for (int i = 0; i < 300 && status != "succeeded" && status != "failed"; ++i) {
        const auto s = call("report_status", R"({"job_id": ")" + jobId + "\"}");
        status = s["status"].GetString();
        std::this_thread::sleep_for(50ms);
    }
    ASSERT_EQ(status, "succeeded");
    const auto report = call("report_result", R"({"job_id": ")" + jobId + "\"}");
    ASSERT_TRUE(report["ready"].GetBool());
    EXPECT_TRUE(report["result"].IsObject());

    // The admin API (token from the environment, as scripts/run.sh gives it) shows the demo's
    // operations as read-only config operations, and the web UI is served next to crankd.
    EXPECT_EQ(exchange(*crankdPort, "GET", "/admin/api/operations", {}).status, 401);
    const Reply listed = exchange(*crankdPort, "GET", "/admin/api/operations",
                                  {{"Authorization", "Bearer demo-admin-token"}});
    ASSERT_EQ(listed.status, 200) << listed.body;
    const auto operations = listed.json();
    ASSERT_TRUE(operations["operations"].IsArray());
    EXPECT_EQ(operations["operations"].Size(), 7U) << listed.body;
    for (const auto& op : operations["operations"].GetArray()) {
        EXPECT_STREQ(op["source"].GetString(), "config");
        EXPECT_TRUE(op["read_only"].GetBool());
    }
    const Reply ui = exchange(*crankdPort, "GET", "/ui/", {});
    EXPECT_EQ(ui.status, 200);
    EXPECT_NE(ui.body.find("<html"), std::string::npos);

    crankd.signal(SIGTERM);
    EXPECT_EQ(crankd.waitForExit(20s), 0) << crankd.stderrText();
}

}  // namespace
