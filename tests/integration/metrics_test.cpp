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

    // The MCP endpoint's Host policy: a foreign Host is refused.
    EXPECT_EQ(exchange(*port, "GET", "/metrics", {{"Host", "evil.example"}}).status, 403);
    EXPECT_EQ(exchange(*port, "POST", "/metrics", {}).status, 405);

    crankd.signal(SIGTERM);
    EXPECT_EQ(crankd.waitForExit(20s), 0) << crankd.stderrText();
}

}  // namespace
