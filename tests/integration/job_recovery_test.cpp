// crankd killed with SIGKILL while 100 async jobs run, then started again on the same store:
// every job is accounted for. The 50 REST jobs (the REST plugin's job shape against
// crank-rest-fixture, which keeps running) resume from their cursor, are not started a second
// time upstream, and succeed; the 50 synthetic jobs, which cannot be followed again, are marked
// interrupted. None stays queued or running.

#include <signal.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "mcp_http_client.h"
#include "store/open_store.h"
#include "temp_dir.h"

namespace {

using crank::store::JobRecord;
using crank::store::JobStatus;
using crank::testing::ChildProcess;
using crank::testing::exchange;
using crank::testing::McpClient;
using crank::testing::TempDir;
using namespace std::chrono_literals;

constexpr int kRestJobs = 50;
constexpr int kSyntheticJobs = 50;

class JobRecoveryTest : public ::testing::Test {
protected:
    void SetUp() override {
        fixture_.emplace(
            std::vector<std::string>{CRANK_REST_FIXTURE_PATH, "--listen", "127.0.0.1:0"});
        const auto port = fixture_->waitForListeningPort(20s);
        ASSERT_TRUE(port) << fixture_->stderrText();
        fixturePort_ = *port;
        config_ = dir_.write("crank.json",
                             R"({"server": {"node_id": "node-a"},
                "store": {"path": ")" +
                                 dir_.file("crank.db") +
                                 R"("},
                "plugins": {"directories": [")" CRANK_PLUGIN_DIR R"(", ")" CRANK_TEST_PLUGIN_DIR
                                 R"("]},
                "jobs": {"workers": 128, "heartbeat_interval_ms": 500, "lease_ms": 60000},
                "operations": [
                  {"name": "rjob", "description": "a REST job", "protocol": "rest",
                   "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}},
                   "config": {"method": "POST",
                              "url": "http://127.0.0.1:)" +
                                 std::to_string(fixturePort_) + R"(/jobs",
                              "body": {"duration_ms": 8000, "steps": 8, "result": {"n": "{{n}}"}},
                              "job": {"status_url_path": "$.status_url", "poll_interval_ms": 200,
                                      "progress_path": "$.progress", "total_path": "$.total",
                                      "result_url_path": "$.result_url"}},
                   "execution": {"mode": "async_job", "upstream_timeout_ms": 120000}},
                  {"name": "cjob", "description": "a REST job cancelled upstream on cancel",
                   "protocol": "rest",
                   "config": {"method": "POST",
                              "url": "http://127.0.0.1:)" +
                                 std::to_string(fixturePort_) + R"(/jobs",
                              "body": {"duration_ms": 4000, "steps": 4, "result": {"n": 1}},
                              "job": {"status_url_path": "$.status_url", "poll_interval_ms": 100,
                                      "result_url_path": "$.result_url",
                                      "cancel_method": "DELETE"}},
                   "execution": {"mode": "async_job", "upstream_timeout_ms": 120000}},
                  {"name": "sjob", "description": "a synthetic job", "protocol": "synthetic",
                   "config": {"items": 1, "delay_ms": 600000},
                   "execution": {"mode": "async_job", "upstream_timeout_ms": 900000}}]})");
    }

    void TearDown() override {
        if (crankd_) {
            crankd_->signal(SIGTERM);
            crankd_->waitForExit(20s);
        }
        if (fixture_) {
            fixture_->signal(SIGTERM);
            fixture_->waitForExit(20s);
        }
    }

    std::uint16_t startCrankd() {
        crankd_.emplace(
            std::vector<std::string>{CRANKD_PATH, "--config", config_, "--listen", "127.0.0.1:0"});
        const auto port = crankd_->waitForListeningPort(20s);
        EXPECT_TRUE(port) << crankd_->stderrText();
        return port.value_or(0);
    }

    std::vector<JobRecord> jobs() const {
        crank::store::StoreOptions options;
        options.path = dir_.file("crank.db");
        auto store = crank::store::openStore(options);
        EXPECT_TRUE(static_cast<bool>(store));
        if (!store) {
            return {};
        }
        crank::store::JobFilter f;
        f.limit = 1000;
        auto rows = (*store)->listJobs(f);
        EXPECT_TRUE(static_cast<bool>(rows));
        return rows ? *rows : std::vector<JobRecord>{};
    }

    /// The fixture's counter `name` from /jobs-stats.
    std::int64_t fixtureStat(const char* name) const {
        const auto reply = exchange(fixturePort_, "GET", "/jobs-stats", {}, "");
        const auto doc = reply.json();
        return doc.IsObject() && doc.HasMember(name) ? doc[name].GetInt64() : -1;
    }

    TempDir dir_;
    std::string config_;
    std::optional<ChildProcess> fixture_;
    std::optional<ChildProcess> crankd_;
    std::uint16_t fixturePort_ = 0;
};

TEST_F(JobRecoveryTest, EveryJobIsAccountedForAfterAKillAndARestart) {
    const std::uint16_t port = startCrankd();
    ASSERT_NE(port, 0);
    {
        McpClient client(port);
        ASSERT_TRUE(client.open());
        for (int i = 0; i < kRestJobs + kSyntheticJobs; ++i) {
            const bool rest = i < kRestJobs;
            const auto r = client.callTool(rest ? "rjob_start" : "sjob_start",
                                           rest ? R"({"n": )" + std::to_string(i) + "}" : "{}");
            ASSERT_TRUE(r.HasMember("structuredContent")) << i;
        }
    }
    // Wait until all 100 run and every REST job has told its cursor (the upstream job started).
    std::vector<JobRecord> rows;
    for (int i = 0; i < 200; ++i) {
        rows = jobs();
        int running = 0;
        int withCursor = 0;
        for (const JobRecord& job : rows) {
            running += job.status == JobStatus::running ? 1 : 0;
            withCursor += job.cursor ? 1 : 0;
        }
        if (running == kRestJobs + kSyntheticJobs && withCursor == kRestJobs) {
            break;
        }
        std::this_thread::sleep_for(100ms);
    }
    ASSERT_EQ(rows.size(), static_cast<std::size_t>(kRestJobs + kSyntheticJobs));
    for (const JobRecord& job : rows) {
        ASSERT_EQ(job.status, JobStatus::running) << job.id;
        EXPECT_EQ(job.owner_node.value_or(""), "node-a");
        EXPECT_EQ(job.cursor.has_value(), job.operation_id == "rjob") << job.id;
    }
    EXPECT_EQ(fixtureStat("started"), kRestJobs);

    // kill -9: no shutdown, no last write.
    crankd_->signal(SIGKILL);
    ASSERT_TRUE(crankd_->waitForExit(20s).has_value());
    crankd_.reset();
    for (const JobRecord& job : jobs()) {
        EXPECT_EQ(job.status, JobStatus::running) << "still running in the store: " << job.id;
    }

    // Restart on the same store: the node takes its jobs back.
    const std::uint16_t again = startCrankd();
    ASSERT_NE(again, 0);
    std::map<JobStatus, int> counts;
    for (int i = 0; i < 400; ++i) {
        rows = jobs();
        counts.clear();
        for (const JobRecord& job : rows) {
            ++counts[job.status];
        }
        if (counts[JobStatus::queued] == 0 && counts[JobStatus::running] == 0) {
            break;
        }
        std::this_thread::sleep_for(100ms);
    }
    ASSERT_EQ(rows.size(), static_cast<std::size_t>(kRestJobs + kSyntheticJobs));
    EXPECT_EQ(counts[JobStatus::succeeded], kRestJobs);
    EXPECT_EQ(counts[JobStatus::interrupted], kSyntheticJobs);
    for (const JobRecord& job : rows) {
        if (job.operation_id == "rjob") {
            EXPECT_EQ(job.status, JobStatus::succeeded)
                << job.id << " " << job.error_json.value_or("");
            EXPECT_NE(job.result_json.value_or("").find(R"("n")"), std::string::npos) << job.id;
        } else {
            EXPECT_EQ(job.status, JobStatus::interrupted) << job.id;
            EXPECT_NE(job.error_json.value_or("").find("crankd restarted"), std::string::npos)
                << job.error_json.value_or("");
        }
    }
    // Resumed, not started again: the upstream saw 50 starts in all.
    EXPECT_EQ(fixtureStat("started"), kRestJobs);

    // And MCP clients see the same through the job tools.
    McpClient client(again);
    ASSERT_TRUE(client.open());
    for (const JobRecord& job : rows) {
        const auto r =
            client.callTool(job.operation_id + "_status", R"({"job_id": ")" + job.id + "\"}");
        ASSERT_TRUE(r.HasMember("structuredContent"));
        EXPECT_STREQ(r["structuredContent"]["status"].GetString(),
                     job.operation_id == "rjob" ? "succeeded" : "interrupted");
    }
}

TEST_F(JobRecoveryTest, AGracefulRestartLeavesTheUpstreamJobRunningAndResumesIt) {
    const std::uint16_t port = startCrankd();
    ASSERT_NE(port, 0);
    std::string kept;
    std::string cancelled;
    {
        McpClient client(port);
        ASSERT_TRUE(client.open());
        const auto a = client.callTool("cjob_start", "{}");
        const auto b = client.callTool("cjob_start", "{}");
        ASSERT_TRUE(a.HasMember("structuredContent") && b.HasMember("structuredContent"));
        kept = a["structuredContent"]["job_id"].GetString();
        cancelled = b["structuredContent"]["job_id"].GetString();
        // Both started upstream (their cursors are stored).
        for (int i = 0; i < 100; ++i) {
            int withCursor = 0;
            for (const JobRecord& job : jobs()) {
                withCursor += job.cursor ? 1 : 0;
            }
            if (withCursor == 2) {
                break;
            }
            std::this_thread::sleep_for(50ms);
        }
        // An explicit cancel undoes the upstream job: its cancel request goes out.
        const auto r = client.callTool("cjob_cancel", R"({"job_id": ")" + cancelled + "\"}");
        ASSERT_TRUE(r.HasMember("structuredContent"));
        EXPECT_TRUE(r["structuredContent"]["cancelled"].GetBool());
    }
    for (int i = 0; i < 100 && fixtureStat("cancelled") < 1; ++i) {
        std::this_thread::sleep_for(50ms);
    }
    EXPECT_EQ(fixtureStat("cancelled"), 1);

    // SIGTERM: crankd stops, but the other job goes on upstream (no second cancel request) and
    // stays running in the store with its cursor.
    crankd_->signal(SIGTERM);
    ASSERT_EQ(crankd_->waitForExit(20s), 0) << crankd_->stderrText();
    crankd_.reset();
    EXPECT_EQ(fixtureStat("cancelled"), 1);
    for (const JobRecord& job : jobs()) {
        if (job.id == kept) {
            EXPECT_EQ(job.status, JobStatus::running);
            EXPECT_TRUE(job.cursor.has_value());
        }
    }

    const std::uint16_t again = startCrankd();
    ASSERT_NE(again, 0);
    McpClient client(again);
    ASSERT_TRUE(client.open());
    std::string status;
    for (int i = 0; i < 300 && status != "succeeded" && status != "failed"; ++i) {
        const auto r = client.callTool("cjob_status", R"({"job_id": ")" + kept + "\"}");
        ASSERT_TRUE(r.HasMember("structuredContent"));
        status = r["structuredContent"]["status"].GetString();
        std::this_thread::sleep_for(50ms);
    }
    EXPECT_EQ(status, "succeeded");
    EXPECT_EQ(fixtureStat("started"), 2);
    EXPECT_EQ(fixtureStat("cancelled"), 1);
}

}  // namespace
