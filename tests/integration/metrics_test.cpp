// GET /metrics of the real crankd: tool calls counted and timed by workspace, tool and outcome;
// plugins, jobs (from the store), MCP sessions and tools read at every scrape; the Prometheus
// text format; the Host policy.
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "child_process.h"
#include "mcp_http_client.h"
#include "sanitizers.h"
#include "temp_dir.h"

namespace {

using crank::testing::ChildProcess;
using crank::testing::exchange;
using crank::testing::McpClient;
using crank::testing::Reply;
using crank::testing::TempDir;
using namespace std::chrono_literals;

bool has(const std::string& text, const std::string& line) {
    return text.find(line) != std::string::npos;
}

/// The value of the series whose line starts with `series` (name and labels), or -1.
double valueOf(const std::string& text, const std::string& series) {
    const std::string start = series + " ";
    for (std::size_t at = text.find(start); at != std::string::npos;
         at = text.find(start, at + 1)) {
        if (at == 0 || text[at - 1] == '\n') {
            const std::size_t end = text.find('\n', at);
            return std::stod(text.substr(at + start.size(), end - at - start.size()));
        }
    }
    return -1;
}

TEST(Metrics, ToolCallsPluginsJobsAndSessionsAreExposed) {
    const TempDir dir;
    const std::string config =
        dir.write("crank.json", R"({"store": {"path": ")" + dir.file("crank.db") +
                                    R"("}, "plugins": {"directories": [")" CRANK_PLUGIN_DIR
                                    R"(", ")" CRANK_TEST_PLUGIN_DIR R"("]},
        "operations": [
          {"name": "feed", "description": "five items", "protocol": "synthetic",
           "config": {"items": 5},
           "execution": {"mode": "window", "transport_behavior": "server_stream"}},
          {"name": "bad", "description": "always fails", "protocol": "synthetic",
           "config": {"items": 5, "fail_on_open": true},
           "execution": {"mode": "window", "transport_behavior": "server_stream"}},
          {"name": "job", "description": "a job", "protocol": "synthetic",
           "config": {"items": 1},
           "execution": {"mode": "async_job", "transport_behavior": "server_stream"}}]})");
    ChildProcess crankd(
        std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"});
    const auto port = crankd.waitForListeningPort(20s);
    ASSERT_TRUE(port) << crankd.stderrText();

    McpClient client(*port);
    ASSERT_TRUE(client.open());
    client.callTool("feed", "{}");
    client.callTool("feed", "{}");
    client.callTool("bad", "{}");
    const auto started = client.callTool("job_start", "{}");
    ASSERT_TRUE(started.HasMember("structuredContent")) << crankd.stderrText();
    const std::string jobId = started["structuredContent"]["job_id"].GetString();
    for (int i = 0; i < 100; ++i) {  // the job ends within 5 s
        const auto status = client.callTool("job_status", R"({"job_id": ")" + jobId + "\"}");
        if (std::string(status["structuredContent"]["status"].GetString()) == "succeeded") {
            break;
        }
        std::this_thread::sleep_for(50ms);
    }

    const Reply scraped = exchange(*port, "GET", "/metrics", {});
    ASSERT_EQ(scraped.status, 200);
    EXPECT_EQ(scraped.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    const std::string& m = scraped.body;
    EXPECT_TRUE(has(m, "# TYPE crank_tool_calls_total counter\n")) << m;
    EXPECT_TRUE(has(m,
                    "crank_tool_calls_total{workspace=\"default\",tool=\"feed\","
                    "outcome=\"ok\"} 2\n"))
        << m;
    EXPECT_TRUE(has(m,
                    "crank_tool_calls_total{workspace=\"default\",tool=\"bad\","
                    "outcome=\"tool_error\"} 1\n"))
        << m;
    EXPECT_TRUE(has(m, "# TYPE crank_tool_call_duration_seconds histogram\n")) << m;
    EXPECT_TRUE(has(m,
                    "crank_tool_call_duration_seconds_bucket{workspace=\"default\","
                    "tool=\"feed\",le=\"+Inf\"} 2\n"))
        << m;
    EXPECT_TRUE(has(m,
                    "crank_tool_call_duration_seconds_count{workspace=\"default\","
                    "tool=\"feed\"} 2\n"))
        << m;
    EXPECT_TRUE(has(m, "crank_plugins{status=\"loaded\"} ")) << m;
    EXPECT_TRUE(has(m, "crank_plugin_load_failures 0\n")) << m;
    EXPECT_TRUE(has(m, "crank_jobs{status=\"succeeded\"} 1\n")) << m;
    EXPECT_TRUE(has(m, "crank_jobs{status=\"running\"} 0\n")) << m;
    EXPECT_TRUE(has(m, "crank_mcp_sessions 1\n")) << m;
    EXPECT_TRUE(has(m, "crank_tools{workspace=\"default\"} 6\n")) << m;
    EXPECT_TRUE(has(m, "# TYPE crank_sse_streams gauge\n")) << m;
    // Memory: SQLite's own, and the heap in use and taken (glibc's figures, which say nothing
    // under a sanitizer's allocator); each a positive figure.
    std::vector<std::string> memory{"crank_sqlite_memory_bytes "};
    if (!crank::testing::kSanitized) {
        memory.emplace_back("crank_heap_bytes{state=\"in_use\"} ");
        memory.emplace_back("crank_heap_bytes{state=\"taken\"} ");
    }
    for (const std::string& series : memory) {
        const auto at = m.find(std::string("\n") + series);
        ASSERT_NE(at, std::string::npos) << series << " in\n" << m;
        const std::size_t from = at + 1 + series.size();
        const std::string value = m.substr(from, m.find('\n', from) - from);
        EXPECT_GT(std::stod(value), 0) << series << value;
    }

    // The MCP endpoint's Host policy: a foreign Host is refused.
    EXPECT_EQ(exchange(*port, "GET", "/metrics", {{"Host", "evil.example"}}).status, 403);
    EXPECT_EQ(exchange(*port, "POST", "/metrics", {}).status, 405);

    crankd.signal(SIGTERM);
    EXPECT_EQ(crankd.waitForExit(20s), 0) << crankd.stderrText();
}

TEST(Metrics, RequestsItemsDropsAndUpstreamErrorsAreCounted) {
    const TempDir dir;
    const std::string config =
        dir.write("crank.json", R"({"plugins": {"directories": [")" CRANK_PLUGIN_DIR
                                R"(", ")" CRANK_TEST_PLUGIN_DIR R"("]},
        "operations": [
          {"name": "feed", "description": "six items, every third malformed",
           "protocol": "synthetic", "config": {"items": 6, "item_bytes": 50, "malformed_every": 3},
           "execution": {"mode": "window", "transport_behavior": "server_stream"}},
          {"name": "bad", "description": "fails after two items", "protocol": "synthetic",
           "config": {"items": 5, "fail_after_items": 2},
           "execution": {"mode": "window", "transport_behavior": "server_stream"}},
          {"name": "tail", "description": "ten items into a buffer of three",
           "protocol": "synthetic", "config": {"items": 10, "item_bytes": 40},
           "execution": {"mode": "session", "transport_behavior": "server_stream",
                         "max_items": 3, "overflow_policy": "drop_oldest"}}]})");
    ChildProcess crankd(
        std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"});
    const auto port = crankd.waitForListeningPort(20s);
    ASSERT_TRUE(port) << crankd.stderrText();

    McpClient client(*port);
    ASSERT_TRUE(client.open());
    const auto fed = client.callTool("feed", "{}");
    ASSERT_TRUE(fed.HasMember("structuredContent")) << crankd.stderrText();
    EXPECT_EQ(fed["structuredContent"]["item_count"].GetInt(), 4);
    EXPECT_EQ(fed["structuredContent"]["dropped_count"].GetInt(), 2);
    client.callTool("bad", "{}");
    const auto started = client.callTool("tail_start", "{}");
    ASSERT_TRUE(started.HasMember("structuredContent")) << crankd.stderrText();
    const std::string session = started["structuredContent"]["session_id"].GetString();
    // The stream ends after its ten items; the buffer kept the last three.
    for (int i = 0; i < 100; ++i) {
        const auto polled = client.callTool("tail_poll", R"({"session_id": ")" + session + "\"}");
        if (std::string(polled["structuredContent"]["status"].GetString()) == "completed") {
            break;
        }
        std::this_thread::sleep_for(50ms);
    }
    const auto last = client.callTool("tail_poll", R"({"session_id": ")" + session + "\"}");
    EXPECT_EQ(last["structuredContent"]["dropped_count"].GetInt(), 7) << crankd.stderrText();

    // JSON-RPC messages by method and outcome, and HTTP requests the endpoint refused.
    EXPECT_EQ(client.post(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})").status, 200);
    EXPECT_EQ(client.post(R"({"jsonrpc":"2.0","id":4,"method":"no/such"})").status, 200);
    EXPECT_EQ(client.post(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":[]})").status,
              200);
    EXPECT_EQ(client.post(R"({"jsonrpc":"2.0","id":6,"method":)").status, 400);
    EXPECT_EQ(exchange(*port, "POST", "/mcp", {{"Content-Type", "application/json"}},
                       R"({"jsonrpc":"2.0","id":1,"method":"ping"})")
                  .status,
              406);

    const Reply scraped = exchange(*port, "GET", "/metrics", {});
    ASSERT_EQ(scraped.status, 200);
    const std::string& m = scraped.body;
    EXPECT_EQ(valueOf(m, R"(crank_mcp_requests_total{method="initialize",outcome="ok"})"), 1) << m;
    EXPECT_EQ(valueOf(m, R"(crank_mcp_requests_total{method="notifications/initialized",)"
                         R"(outcome="accepted"})"),
              1)
        << m;
    EXPECT_EQ(valueOf(m, R"(crank_mcp_requests_total{method="tools/list",outcome="ok"})"), 1) << m;
    EXPECT_EQ(
        valueOf(m, R"(crank_mcp_requests_total{method="unknown",outcome="method_not_found"})"), 1)
        << m;
    EXPECT_EQ(
        valueOf(m, R"(crank_mcp_requests_total{method="tools/call",outcome="invalid_params"})"), 1)
        << m;
    EXPECT_EQ(valueOf(m, R"(crank_mcp_requests_total{method="invalid",outcome="parse_error"})"), 1)
        << m;
    // feed, bad, tail_start and the polls: every tools/call answered with a result.
    EXPECT_GE(valueOf(m, R"(crank_mcp_requests_total{method="tools/call",outcome="ok"})"), 5) << m;
    EXPECT_EQ(valueOf(m, R"(crank_mcp_request_duration_seconds_count{method="tools/list"})"), 1)
        << m;
    EXPECT_EQ(valueOf(m, R"(crank_mcp_http_requests_total{verb="POST",status="406"})"), 1) << m;
    EXPECT_EQ(valueOf(m, R"(crank_mcp_http_requests_total{verb="POST",status="400"})"), 1) << m;

    // Items read from the upstreams: the window's six (two of them dropped by the safety stage
    // as malformed), the failing window's two, the session's ten (seven pushed out of its
    // buffer of three).
    EXPECT_EQ(valueOf(m, R"(crank_items_collected_total{protocol="synthetic",mode="window"})"), 8)
        << m;
    EXPECT_GT(valueOf(m, R"(crank_bytes_collected_total{protocol="synthetic",mode="window"})"),
              6 * 40)
        << m;
    EXPECT_EQ(valueOf(m, R"(crank_items_dropped_total{protocol="synthetic",mode="window",)"
                         R"(reason="safety"})"),
              2)
        << m;
    EXPECT_EQ(valueOf(m, R"(crank_items_collected_total{protocol="synthetic",mode="session"})"), 10)
        << m;
    EXPECT_GT(valueOf(m, R"(crank_bytes_collected_total{protocol="synthetic",mode="session"})"),
              10 * 30)
        << m;
    EXPECT_EQ(valueOf(m, R"(crank_items_dropped_total{protocol="synthetic",mode="session",)"
                         R"(reason="overflow"})"),
              7)
        << m;
    EXPECT_EQ(valueOf(m, R"(crank_upstream_errors_total{protocol="synthetic",mode="window",)"
                         R"(code="upstream"})"),
              1)
        << m;

    crankd.signal(SIGTERM);
    EXPECT_EQ(crankd.waitForExit(20s), 0) << crankd.stderrText();
}

}  // namespace
