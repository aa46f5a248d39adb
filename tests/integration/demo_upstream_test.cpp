// crank-demo-upstream, the demo's own upstream: its REST, SSE and long-poll endpoints over real
// loopback HTTP. Its SSE is read back with the REST plugin's SSE parser.

#include <signal.h>

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "mcp_http_client.h"
#include "sse_parser.h"

namespace {

using crank::testing::ChildProcess;
using crank::testing::exchange;
using crank::testing::Reply;
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
        crank::rest::SseParser parser;
        std::vector<crank::rest::SseEvent> events;
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

}  // namespace
