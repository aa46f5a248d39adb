#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store_test_support.h"

namespace crank::store::test {
namespace {

using JobStoreTest = StoreTest;

TEST_P(JobStoreTest, CreateAndGetRoundTripEveryField) {
    JobRecord input = sampleJob();
    input.progress_json = R"({"done":0})";
    auto created = store_->createJob(input);
    ASSERT_TRUE(created.ok()) << created.error().message;
    EXPECT_EQ(created->id.rfind("job_", 0), 0U);
    EXPECT_EQ(created->id.size(), 4U + 32U);
    EXPECT_GT(created->created_at, 0);
    EXPECT_EQ(created->updated_at, created->created_at);

    auto loaded = store_->getJob(created->id);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_EQ(loaded->workspace_id, "ws1");
    EXPECT_EQ(loaded->agent_id, "agent1");
    EXPECT_EQ(loaded->operation_id, "op_export");
    EXPECT_EQ(loaded->status, JobStatus::queued);
    EXPECT_EQ(loaded->progress_json, std::optional<std::string>(R"({"done":0})"));
    EXPECT_FALSE(loaded->result_json.has_value());
    EXPECT_FALSE(loaded->error_json.has_value());
    EXPECT_EQ(loaded->expires_at, kFarFuture);
    EXPECT_EQ(loaded->created_at, created->created_at);
    EXPECT_FALSE(loaded->finished_at.has_value());

    EXPECT_EQ(store_->getJob("job_missing").error().code, ErrorCode::not_found);
    JobRecord duplicate = sampleJob();
    duplicate.id = created->id;
    EXPECT_EQ(store_->createJob(duplicate).error().code, ErrorCode::conflict);
}

TEST_P(JobStoreTest, LifecycleThroughCompareAndSet) {
    auto created = store_->createJob(sampleJob());
    ASSERT_TRUE(created.ok());
    const std::string id = created->id;

    JobTransition start;
    start.to = JobStatus::running;
    auto started = store_->transitionJob(id, JobStatus::queued, start);
    ASSERT_TRUE(started.ok()) << started.error().message;
    EXPECT_TRUE(started->applied());

    auto progressed = store_->updateJobProgress(id, R"({"done":50})");
    ASSERT_TRUE(progressed.ok());
    EXPECT_TRUE(progressed->applied());
    EXPECT_EQ(store_->getJob(id)->progress_json, std::optional<std::string>(R"({"done":50})"));

    JobTransition finish;
    finish.to = JobStatus::succeeded;
    finish.result_json = R"({"rows":3})";
    finish.progress_json = R"({"done":100})";
    finish.finished_at = 1800000000000;
    finish.expires_at = 1800000600000;
    auto finished = store_->transitionJob(id, JobStatus::running, finish);
    ASSERT_TRUE(finished.ok());
    EXPECT_TRUE(finished->applied());
    EXPECT_EQ(finished->current_status, JobStatus::succeeded);

    auto loaded = store_->getJob(id);
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->status, JobStatus::succeeded);
    EXPECT_EQ(loaded->result_json, std::optional<std::string>(R"({"rows":3})"));
    EXPECT_EQ(loaded->progress_json, std::optional<std::string>(R"({"done":100})"));
    EXPECT_FALSE(loaded->error_json.has_value());
    EXPECT_EQ(loaded->finished_at, std::optional<std::int64_t>(1800000000000));
    EXPECT_EQ(loaded->expires_at, 1800000600000);
    EXPECT_GE(loaded->updated_at, created->created_at);

    // Progress after the end, and a cancel that comes too late, both lose.
    auto late_progress = store_->updateJobProgress(id, R"({"done":101})");
    ASSERT_TRUE(late_progress.ok());
    EXPECT_EQ(late_progress->outcome, TransitionOutcome::status_mismatch);
    EXPECT_EQ(late_progress->current_status, JobStatus::succeeded);
    JobTransition cancel;
    cancel.to = JobStatus::cancelled;
    auto late_cancel = store_->transitionJob(id, JobStatus::running, cancel);
    ASSERT_TRUE(late_cancel.ok());
    EXPECT_EQ(late_cancel->outcome, TransitionOutcome::status_mismatch);
    EXPECT_EQ(late_cancel->current_status, JobStatus::succeeded);
    EXPECT_EQ(store_->getJob(id)->progress_json, std::optional<std::string>(R"({"done":100})"));

    EXPECT_EQ(store_->updateJobProgress("job_missing", "{}")->outcome,
              TransitionOutcome::not_found);
    EXPECT_EQ(store_->transitionJob("job_missing", JobStatus::queued, start)->outcome,
              TransitionOutcome::not_found);
}

TEST_P(JobStoreTest, ProgressOnlyWhileRunning) {
    auto created = store_->createJob(sampleJob());
    ASSERT_TRUE(created.ok());
    auto queued = store_->updateJobProgress(created->id, R"({"done":1})");
    ASSERT_TRUE(queued.ok());
    EXPECT_EQ(queued->outcome, TransitionOutcome::status_mismatch);
    EXPECT_EQ(queued->current_status, JobStatus::queued);
    EXPECT_FALSE(store_->getJob(created->id)->progress_json.has_value());
}

TEST_P(JobStoreTest, ListAndCountApplyEveryFilter) {
    auto make = [&](const std::string& ws, const std::string& agent, JobStatus status,
                    std::int64_t created_at) {
        JobRecord job = sampleJob(ws, agent);
        job.status = status;
        job.created_at = created_at;
        auto created = store_->createJob(job);
        EXPECT_TRUE(created.ok());
        return created.ok() ? created->id : std::string();
    };
    const std::string a = make("ws1", "agent1", JobStatus::queued, 10);
    const std::string b = make("ws1", "agent1", JobStatus::running, 20);
    const std::string c = make("ws1", "agent1", JobStatus::running, 30);
    make("ws1", "agent2", JobStatus::running, 40);
    make("ws2", "agent1", JobStatus::failed, 50);

    JobFilter mine;
    mine.workspace_id = "ws1";
    mine.agent_id = "agent1";
    mine.statuses = {JobStatus::queued, JobStatus::running};
    EXPECT_EQ(*store_->countJobs(mine), 3);
    auto listed = store_->listJobs(mine);
    ASSERT_TRUE(listed.ok()) << listed.error().message;
    ASSERT_EQ(listed->size(), 3U);
    EXPECT_EQ((*listed)[0].id, c);
    EXPECT_EQ((*listed)[1].id, b);
    EXPECT_EQ((*listed)[2].id, a);

    JobFilter running;
    running.statuses = {JobStatus::running};
    running.order = SortOrder::oldest_first;
    running.limit = 1;
    listed = store_->listJobs(running);
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 1U);
    EXPECT_EQ(listed->front().id, b);
    EXPECT_EQ(*store_->countJobs(running), 3) << "count ignores the limit";

    JobFilter ws2;
    ws2.workspace_id = "ws2";
    EXPECT_EQ(*store_->countJobs(ws2), 1);
    JobFilter agent2;
    agent2.agent_id = "agent2";
    EXPECT_EQ(*store_->countJobs(agent2), 1);
    EXPECT_EQ(*store_->countJobs({}), 5);
    JobFilter bad;
    bad.limit = -1;
    EXPECT_EQ(store_->listJobs(bad).error().code, ErrorCode::invalid_argument);
}

TEST_P(JobStoreTest, MarkInterruptedTouchesOnlyRunningJobs) {
    auto make = [&](JobStatus status, std::optional<std::string> error_json) {
        JobRecord job = sampleJob();
        job.status = status;
        job.error_json = std::move(error_json);
        auto created = store_->createJob(job);
        EXPECT_TRUE(created.ok());
        return created.ok() ? created->id : std::string();
    };
    const std::string running1 = make(JobStatus::running, std::nullopt);
    const std::string running2 = make(JobStatus::running, R"({"code":"partial"})");
    const std::string queued = make(JobStatus::queued, std::nullopt);
    const std::string done = make(JobStatus::succeeded, std::nullopt);

    auto marked = store_->markRunningJobsInterrupted(1900000000000);
    ASSERT_TRUE(marked.ok()) << marked.error().message;
    EXPECT_EQ(*marked, 2);

    auto r1 = store_->getJob(running1);
    ASSERT_TRUE(r1.ok());
    EXPECT_EQ(r1->status, JobStatus::interrupted);
    EXPECT_EQ(r1->finished_at, std::optional<std::int64_t>(1900000000000));
    EXPECT_EQ(r1->updated_at, 1900000000000);
    ASSERT_TRUE(r1->error_json.has_value());
    EXPECT_NE(r1->error_json->find("interrupted"), std::string::npos);
    EXPECT_EQ(store_->getJob(running2)->error_json,
              std::optional<std::string>(R"({"code":"partial"})"))
        << "an existing error is kept";
    EXPECT_EQ(store_->getJob(queued)->status, JobStatus::queued);
    EXPECT_EQ(store_->getJob(done)->status, JobStatus::succeeded);

    auto again = store_->markRunningJobsInterrupted(1900000000001);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, 0);
}

TEST_P(JobStoreTest, CleanupDeletesOnlyExpiredTerminalJobs) {
    auto make = [&](JobStatus status, std::int64_t expires_at) {
        JobRecord job = sampleJob();
        job.status = status;
        job.expires_at = expires_at;
        auto created = store_->createJob(job);
        EXPECT_TRUE(created.ok());
        return created.ok() ? created->id : std::string();
    };
    std::vector<std::string> gone = {make(JobStatus::succeeded, 10), make(JobStatus::failed, 10),
                                     make(JobStatus::cancelled, 10),
                                     make(JobStatus::interrupted, 10)};
    std::vector<std::string> kept = {make(JobStatus::queued, 10), make(JobStatus::running, 10),
                                     make(JobStatus::succeeded, 10000)};

    auto deleted = store_->deleteExpiredJobs(5000, kMaxCleanupBatch * 5);
    ASSERT_TRUE(deleted.ok()) << deleted.error().message;
    EXPECT_EQ(*deleted, 4);
    for (const auto& id : gone) {
        EXPECT_EQ(store_->getJob(id).error().code, ErrorCode::not_found) << id;
    }
    for (const auto& id : kept) {
        EXPECT_TRUE(store_->getJob(id).ok()) << id;
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, JobStoreTest, ::testing::Values(Backing::memory, Backing::file),
                         backingName);

}  // namespace
}  // namespace crank::store::test
