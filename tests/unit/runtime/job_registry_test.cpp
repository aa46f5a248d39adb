// JobRegistry against a real SQLite file shared by several registries, each playing one crankd
// node: takeover of a dead node's jobs after its lease, the race of two nodes claiming the same
// job, a node taking back its own queued and resumable jobs at start-up, and the cleaner.
// The operation's run is a test function, so that every path is driven deterministically.

#include "runtime/job_registry.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "store/open_store.h"
#include "temp_dir.h"

namespace crank::runtime {
namespace {

using namespace std::chrono_literals;
using crank::testing::TempDir;
using store::JobStatus;

/// What the test run function saw, across every registry of a test.
struct Runs {
    std::mutex mutex;
    int started = 0;
    std::vector<std::string> cursors;  // request.cursor of each run
};

OperationPtr jobOperation(std::int64_t result_ttl_ms = 3'600'000) {
    auto op = std::make_shared<Operation>();
    op->config.name = "op";
    op->config.execution.mode = config::ExecutionMode::async_job;
    op->config.execution.result_ttl_ms = result_ttl_ms;
    return op;
}

/// Input `{"sleep_ms": N, "cursor": "c"}`: sets the cursor at once, then waits N ms (or until
/// cancelled) and answers `{"cursor_given": request.cursor}`. A resumed run (given a cursor)
/// follows a job that has been running all along: it answers at once.
JobRegistry::RunFunction runFunction(const std::shared_ptr<Runs>& runs) {
    return [runs](const Operation&, PreparedRequest& request, mcp::ToolCall& call) {
        rapidjson::Document input;
        input.Parse(request.input_json.c_str());
        {
            const std::lock_guard lock(runs->mutex);
            ++runs->started;
            runs->cursors.push_back(request.cursor);
        }
        if (input.HasMember("cursor") && request.on_cursor) {
            request.on_cursor(input["cursor"].GetString());
        }
        const auto until =
            std::chrono::steady_clock::now() +
            std::chrono::milliseconds(input.HasMember("sleep_ms") && request.cursor.empty()
                                          ? input["sleep_ms"].GetInt64()
                                          : 0);
        while (std::chrono::steady_clock::now() < until) {
            if (call.cancelled()) {
                mcp::ToolResult stopped;
                stopped.content_json = R"([{"type":"text","text":"cancelled"}])";
                stopped.is_error = true;
                return stopped;
            }
            std::this_thread::sleep_for(5ms);
        }
        mcp::ToolResult r;
        r.structured_json = R"({"cursor_given":")" + request.cursor + "\"}";
        r.content_json = R"([{"type":"text","text":"done"}])";
        return r;
    };
}

JobRegistry::PrepareFunction prepareFunction() {
    return [](const Operation&, std::string_view arguments,
              PreparedRequest& request) -> std::optional<mcp::ToolResult> {
        request.input_json = std::string(arguments);
        return std::nullopt;
    };
}

class JobRegistryTest : public ::testing::Test {
protected:
    void SetUp() override {
        store::StoreOptions options;
        options.path = dir_.file("jobs.db");
        auto opened = store::openStore(options);
        ASSERT_TRUE(static_cast<bool>(opened)) << opened.error().message;
        store_ = std::move(opened).value();
    }

    std::unique_ptr<JobRegistry> node(const std::string& id, const OperationPtr& op,
                                      int workers = 4, std::size_t max_queued = 1'000) {
        JobRegistry::Options o;
        o.store = store_;
        o.node_id = id;
        o.workers = workers;
        o.max_queued = max_queued;
        o.heartbeat_interval_ms = 100;
        o.lease_ms = 600;
        o.progress_write_ms = 50;
        o.clean_interval_ms = 100;
        auto registry = std::make_unique<JobRegistry>(o, prepareFunction(), runFunction(runs_));
        registry->addOperation(op);
        registry->start();
        return registry;
    }

    std::string start(JobRegistry& registry, const OperationPtr& op, const std::string& input) {
        auto started = registry.startJob(op, input, caller_);
        EXPECT_TRUE(static_cast<bool>(started)) << started.error().message;
        rapidjson::Document doc;
        doc.Parse(started ? started->c_str() : "{}");
        return doc.HasMember("job_id") ? doc["job_id"].GetString() : "";
    }

    /// Waits (bounded) until `predicate(job)` holds; the last record read.
    template <typename Predicate>
    store::JobRecord waitFor(const std::string& id, Predicate predicate) {
        store::JobRecord job;
        for (int i = 0; i < 300; ++i) {
            auto row = store_->getJob(id);
            if (row) {
                job = *row;
                if (predicate(job)) {
                    return job;
                }
            }
            std::this_thread::sleep_for(20ms);
        }
        ADD_FAILURE() << "job " << id << " never reached the state; status "
                      << store::jobStatusName(job.status);
        return job;
    }

    int runsStarted() {
        const std::lock_guard lock(runs_->mutex);
        return runs_->started;
    }

    TempDir dir_;
    std::shared_ptr<store::Store> store_;
    std::shared_ptr<Runs> runs_ = std::make_shared<Runs>();
    mcp::Caller caller_{"default", "alice"};
};

TEST_F(JobRegistryTest, AnotherNodeTakesOverAResumableJobOnceTheLeaseHasPassed) {
    const OperationPtr op = jobOperation();
    auto a = node("node-a", op);
    const std::string id = start(*a, op, R"({"sleep_ms": 60000, "cursor": "k1"})");
    waitFor(id, [](const store::JobRecord& j) { return j.cursor.has_value(); });
    // node-a stops renewing (it stops; the job stays running with its cursor, as after a crash).
    a.reset();
    const auto left = store_->getJob(id);
    ASSERT_TRUE(static_cast<bool>(left));
    EXPECT_EQ(left->status, JobStatus::running);
    EXPECT_EQ(left->owner_node.value_or(""), "node-a");

    // node-b starts before the lease has passed: it leaves the job alone at first, then its
    // cleaner claims it and resumes it from the cursor.
    auto b = node("node-b", op);
    const auto done =
        waitFor(id, [](const store::JobRecord& j) { return j.status == JobStatus::succeeded; });
    EXPECT_EQ(done.owner_node.value_or(""), "node-b");
    EXPECT_NE(done.result_json.value_or("").find(R"("cursor_given":"k1")"), std::string::npos)
        << done.result_json.value_or("");
    const std::lock_guard lock(runs_->mutex);
    ASSERT_EQ(runs_->cursors.size(), 2U);
    EXPECT_EQ(runs_->cursors[0], "");    // node-a started it
    EXPECT_EQ(runs_->cursors[1], "k1");  // node-b followed it
}

TEST_F(JobRegistryTest, TwoNodesRacingForAStaleJobRunItOnce) {
    const OperationPtr op = jobOperation();
    auto a = node("node-a", op);
    const std::string id = start(*a, op, R"({"sleep_ms": 60000, "cursor": "k"})");
    waitFor(id, [](const store::JobRecord& j) { return j.cursor.has_value(); });
    a.reset();
    std::this_thread::sleep_for(700ms);  // past the lease
    std::unique_ptr<JobRegistry> b;
    std::unique_ptr<JobRegistry> c;
    std::thread tb([&] { b = node("node-b", op); });
    std::thread tc([&] { c = node("node-c", op); });
    tb.join();
    tc.join();
    waitFor(id, [](const store::JobRecord& j) { return j.status == JobStatus::succeeded; });
    std::this_thread::sleep_for(300ms);  // a second claimer would have started by now
    EXPECT_EQ(runsStarted(), 2);         // node-a's run and exactly one of node-b and node-c
}

TEST_F(JobRegistryTest, ARestartedNodeRunsItsQueuedJobsAgain) {
    const OperationPtr op = jobOperation();
    auto a = node("node-a", op, 1);
    const std::string busy = start(*a, op, R"({"sleep_ms": 60000})");
    waitFor(busy, [](const store::JobRecord& j) { return j.status == JobStatus::running; });
    const std::string waiting = start(*a, op, R"({"sleep_ms": 0})");
    EXPECT_EQ(store_->getJob(waiting)->status, JobStatus::queued);
    a.reset();
    // The running job had no cursor: stopping interrupts it. The queued one stays queued.
    EXPECT_EQ(store_->getJob(busy)->status, JobStatus::interrupted);
    EXPECT_EQ(store_->getJob(waiting)->status, JobStatus::queued);

    auto again = node("node-a", op, 1);
    waitFor(waiting, [](const store::JobRecord& j) { return j.status == JobStatus::succeeded; });
    EXPECT_EQ(store_->getJob(busy)->status, JobStatus::interrupted);
}

TEST_F(JobRegistryTest, FinishedJobsAreDeletedOnceTheirTtlHasPassed) {
    const OperationPtr op = jobOperation(200);
    auto a = node("node-a", op);
    const std::string id = start(*a, op, R"({})");
    waitFor(id, [](const store::JobRecord& j) { return j.status == JobStatus::succeeded; });
    bool deleted = false;
    for (int i = 0; i < 100 && !deleted; ++i) {
        auto row = store_->getJob(id);
        deleted = !row && row.error().code == ErrorCode::not_found;
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(deleted);
}

TEST_F(JobRegistryTest, CancelWinsOverAQueuedJobAndTheRunNeverStarts) {
    const OperationPtr op = jobOperation();
    auto a = node("node-a", op, 1);
    const std::string busy = start(*a, op, R"({"sleep_ms": 60000})");
    waitFor(busy, [](const store::JobRecord& j) { return j.status == JobStatus::running; });
    const std::string queued = start(*a, op, R"({})");
    auto cancelled = a->cancel(queued, caller_);
    ASSERT_TRUE(static_cast<bool>(cancelled)) << cancelled.error().message;
    EXPECT_EQ(cancelled->status, mcp::TaskStatus::cancelled);
    ASSERT_TRUE(static_cast<bool>(a->cancel(busy, caller_)));
    waitFor(busy, [](const store::JobRecord& j) { return j.status == JobStatus::cancelled; });
    std::this_thread::sleep_for(200ms);  // the worker is free: a queued run would start now
    EXPECT_EQ(runsStarted(), 1);
    EXPECT_EQ(store_->getJob(queued)->status, JobStatus::cancelled);
}

TEST_F(JobRegistryTest, AWatchedJobOfAnotherNodeIsReportedWhenItEnds) {
    const OperationPtr op = jobOperation();
    auto a = node("node-a", op);
    auto b = node("node-b", op);
    std::mutex mutex;
    std::vector<mcp::TaskInfo> seen;
    b->subscribe([&](const mcp::TaskInfo& task) {
        const std::lock_guard lock(mutex);
        seen.push_back(task);
    });
    const std::string id = start(*a, op, R"({"sleep_ms": 300})");
    b->watch(id);  // a tasks/result on node-b waits for node-a's job
    waitFor(id, [](const store::JobRecord& j) { return j.status == JobStatus::succeeded; });
    bool reported = false;
    for (int i = 0; i < 100 && !reported; ++i) {
        {
            const std::lock_guard lock(mutex);
            for (const mcp::TaskInfo& t : seen) {
                reported = reported || (t.task_id == id && t.status == mcp::TaskStatus::completed);
            }
        }
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(reported);
}

TEST_F(JobRegistryTest, TheQueueIsBoundedAndTheRefusalNamesTheLimit) {
    const OperationPtr op = jobOperation();
    auto a = node("node-a", op, 1, 1);
    const std::string busy = start(*a, op, R"({"sleep_ms": 60000})");
    waitFor(busy, [](const store::JobRecord& j) { return j.status == JobStatus::running; });
    start(*a, op, R"({})");  // queued: the queue is full now
    auto refused = a->startJob(op, R"({})", caller_);
    ASSERT_FALSE(static_cast<bool>(refused));
    EXPECT_NE(refused.error().message.find("jobs.max_queued"), std::string::npos)
        << refused.error().message;
    // Nothing was recorded for the refused job.
    store::JobFilter all;
    EXPECT_EQ(*store_->countJobs(all), 2);
}

}  // namespace
}  // namespace crank::runtime
