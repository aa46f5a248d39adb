#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
    // One job by id, only with its owner's workspace and agent.
    JobFilter byId = mine;
    byId.statuses.clear();
    byId.id = b;
    listed = store_->listJobs(byId);
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 1U);
    EXPECT_EQ(listed->front().id, b);
    byId.agent_id = "agent2";
    EXPECT_TRUE(store_->listJobs(byId)->empty());
    byId.agent_id = "agent1";
    byId.workspace_id = "ws2";
    EXPECT_TRUE(store_->listJobs(byId)->empty());
    JobFilter bad;
    bad.limit = -1;
    EXPECT_EQ(store_->listJobs(bad).error().code, ErrorCode::invalid_argument);
}

TEST_P(JobStoreTest, MarkInterruptedTouchesOnlyRunningJobs) {
    auto make = [&](JobStatus status, std::optional<std::string> error_json) {
        JobRecord job = sampleJob();
        job.status = status;
        job.error_json = std::move(error_json);
        job.owner_node = "node-a";
        auto created = store_->createJob(job);
        EXPECT_TRUE(created.ok());
        return created.ok() ? created->id : std::string();
    };
    const std::string running1 = make(JobStatus::running, std::nullopt);
    const std::string running2 = make(JobStatus::running, R"({"code":"partial"})");
    const std::string queued = make(JobStatus::queued, std::nullopt);
    const std::string done = make(JobStatus::succeeded, std::nullopt);

    auto marked = store_->markRunningJobsInterrupted(1900000000000, "node-a");
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

    auto again = store_->markRunningJobsInterrupted(1900000000001, "node-a");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, 0);
}

TEST_P(JobStoreTest, OwnershipFieldsRoundTrip) {
    JobRecord input = sampleJob();
    input.owner_node = "node-a";
    input.cursor = R"({"page":3})";
    input.input_json = R"({"city":"Oslo"})";
    input.heartbeat_at = 1700000000001;
    input.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    input.tracestate = "vendor=a,other=b";
    auto created = store_->createJob(input);
    ASSERT_TRUE(created.ok()) << created.error().message;
    EXPECT_EQ(created->input_json, R"({"city":"Oslo"})");

    auto loaded = store_->getJob(created->id);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_EQ(loaded->owner_node, std::optional<std::string>("node-a"));
    EXPECT_EQ(loaded->cursor, std::optional<std::string>(R"({"page":3})"));
    EXPECT_EQ(loaded->input_json, R"({"city":"Oslo"})");
    EXPECT_EQ(loaded->heartbeat_at, std::optional<std::int64_t>(1700000000001));
    EXPECT_EQ(loaded->traceparent, input.traceparent);
    EXPECT_EQ(loaded->tracestate, "vendor=a,other=b");

    JobFilter all;
    auto listed = store_->listJobs(all);
    ASSERT_TRUE(listed.ok()) << listed.error().message;
    ASSERT_EQ(listed->size(), 1U);
    EXPECT_EQ(listed->front().owner_node, std::optional<std::string>("node-a"));
    EXPECT_EQ(listed->front().cursor, std::optional<std::string>(R"({"page":3})"));
    EXPECT_EQ(listed->front().input_json, R"({"city":"Oslo"})");
    EXPECT_EQ(listed->front().heartbeat_at, std::optional<std::int64_t>(1700000000001));
    EXPECT_EQ(listed->front().traceparent, input.traceparent);

    // Defaults: no owner, no cursor, no heartbeat, input "{}".
    auto plain = store_->createJob(sampleJob());
    ASSERT_TRUE(plain.ok()) << plain.error().message;
    auto plain_loaded = store_->getJob(plain->id);
    ASSERT_TRUE(plain_loaded.ok());
    EXPECT_FALSE(plain_loaded->owner_node.has_value());
    EXPECT_FALSE(plain_loaded->cursor.has_value());
    EXPECT_EQ(plain_loaded->input_json, "{}");
    EXPECT_FALSE(plain_loaded->heartbeat_at.has_value());
    EXPECT_TRUE(plain_loaded->traceparent.empty());
    EXPECT_TRUE(plain_loaded->tracestate.empty());

    JobRecord empty_owner = sampleJob();
    empty_owner.owner_node = "";
    auto rejected = store_->createJob(empty_owner);
    ASSERT_FALSE(rejected.ok());
    EXPECT_EQ(rejected.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(rejected.error().message.find("job.owner_node"), std::string::npos)
        << rejected.error().message;
}

TEST_P(JobStoreTest, TransitionSetsOwnershipFieldsAndLeavesUnsetOnesAlone) {
    JobRecord input = sampleJob();
    input.owner_node = "node-a";
    input.cursor = "c1";
    auto created = store_->createJob(input);
    ASSERT_TRUE(created.ok());

    JobTransition start;
    start.to = JobStatus::running;
    start.heartbeat_at = 1700000000500;
    ASSERT_TRUE(store_->transitionJob(created->id, JobStatus::queued, start)->applied());
    auto loaded = store_->getJob(created->id);
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->owner_node, std::optional<std::string>("node-a"));
    EXPECT_EQ(loaded->cursor, std::optional<std::string>("c1"));
    EXPECT_EQ(loaded->heartbeat_at, std::optional<std::int64_t>(1700000000500));

    JobTransition move;
    move.to = JobStatus::running;
    move.owner_node = "node-b";
    move.cursor = "c2";
    ASSERT_TRUE(store_->transitionJob(created->id, JobStatus::running, move)->applied());
    loaded = store_->getJob(created->id);
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->owner_node, std::optional<std::string>("node-b"));
    EXPECT_EQ(loaded->cursor, std::optional<std::string>("c2"));
    EXPECT_EQ(loaded->heartbeat_at, std::optional<std::int64_t>(1700000000500));
}

TEST_P(JobStoreTest, CursorOnlyWhileRunning) {
    auto created = store_->createJob(sampleJob());
    ASSERT_TRUE(created.ok());
    const std::string id = created->id;

    auto queued = store_->setJobCursor(id, "early");
    ASSERT_TRUE(queued.ok()) << queued.error().message;
    EXPECT_EQ(queued->outcome, TransitionOutcome::status_mismatch);
    EXPECT_EQ(queued->current_status, JobStatus::queued);
    EXPECT_FALSE(store_->getJob(id)->cursor.has_value());

    JobTransition start;
    start.to = JobStatus::running;
    ASSERT_TRUE(store_->transitionJob(id, JobStatus::queued, start)->applied());
    const std::int64_t before = store_->getJob(id)->updated_at;
    auto set = store_->setJobCursor(id, R"({"offset":42})");
    ASSERT_TRUE(set.ok()) << set.error().message;
    EXPECT_TRUE(set->applied());
    EXPECT_EQ(set->current_status, JobStatus::running);
    auto loaded = store_->getJob(id);
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->cursor, std::optional<std::string>(R"({"offset":42})"));
    EXPECT_GE(loaded->updated_at, before);

    JobTransition finish;
    finish.to = JobStatus::succeeded;
    ASSERT_TRUE(store_->transitionJob(id, JobStatus::running, finish)->applied());
    auto late = store_->setJobCursor(id, "late");
    ASSERT_TRUE(late.ok());
    EXPECT_EQ(late->outcome, TransitionOutcome::status_mismatch);
    EXPECT_EQ(late->current_status, JobStatus::succeeded);
    EXPECT_EQ(store_->getJob(id)->cursor, std::optional<std::string>(R"({"offset":42})"));

    EXPECT_EQ(store_->setJobCursor("job_missing", "x")->outcome, TransitionOutcome::not_found);
}

TEST_P(JobStoreTest, HeartbeatCountsOnlyTheLiveJobsOfThatOwner) {
    auto make = [&](std::optional<std::string> owner, JobStatus status) {
        JobRecord job = sampleJob();
        job.owner_node = std::move(owner);
        job.status = status;
        auto created = store_->createJob(job);
        EXPECT_TRUE(created.ok());
        return created.ok() ? created->id : std::string();
    };
    const std::string a_queued = make("node-a", JobStatus::queued);
    const std::string a_running = make("node-a", JobStatus::running);
    const std::string a_done = make("node-a", JobStatus::succeeded);
    const std::string b_running = make("node-b", JobStatus::running);
    const std::string nobody = make(std::nullopt, JobStatus::running);

    auto beat = store_->heartbeatJobs("node-a", 1700000001000);
    ASSERT_TRUE(beat.ok()) << beat.error().message;
    EXPECT_EQ(*beat, 2);
    EXPECT_EQ(store_->getJob(a_queued)->heartbeat_at, std::optional<std::int64_t>(1700000001000));
    EXPECT_EQ(store_->getJob(a_running)->heartbeat_at, std::optional<std::int64_t>(1700000001000));
    EXPECT_FALSE(store_->getJob(a_done)->heartbeat_at.has_value());
    EXPECT_FALSE(store_->getJob(b_running)->heartbeat_at.has_value());
    EXPECT_FALSE(store_->getJob(nobody)->heartbeat_at.has_value());

    EXPECT_EQ(*store_->heartbeatJobs("node-c", 1700000002000), 0);
    EXPECT_EQ(store_->heartbeatJobs("", 1700000002000).error().code, ErrorCode::invalid_argument);
}

TEST_P(JobStoreTest, ClaimIsCompareAndSetOnTheOwner) {
    JobRecord owned = sampleJob();
    owned.owner_node = "node-dead";
    owned.status = JobStatus::running;
    auto created = store_->createJob(owned);
    ASSERT_TRUE(created.ok());
    const std::string id = created->id;

    // Two nodes race for the job of the dead node: exactly one wins.
    auto first = store_->claimJob(id, std::string_view("node-dead"), "node-b", 1700000003000);
    auto second = store_->claimJob(id, std::string_view("node-dead"), "node-c", 1700000003001);
    ASSERT_TRUE(first.ok()) << first.error().message;
    ASSERT_TRUE(second.ok()) << second.error().message;
    EXPECT_TRUE(*first);
    EXPECT_FALSE(*second);
    auto loaded = store_->getJob(id);
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->owner_node, std::optional<std::string>("node-b"));
    EXPECT_EQ(loaded->heartbeat_at, std::optional<std::int64_t>(1700000003000));
    EXPECT_EQ(loaded->updated_at, 1700000003000);
    EXPECT_EQ(loaded->status, JobStatus::running) << "a claim does not change the status";

    // A NULL expected owner matches only a job without owner.
    EXPECT_FALSE(*store_->claimJob(id, std::nullopt, "node-c", 1700000003002));
    auto legacy = store_->createJob(sampleJob());
    ASSERT_TRUE(legacy.ok());
    EXPECT_FALSE(*store_->claimJob(legacy->id, std::string_view("node-dead"), "node-c", 1));
    EXPECT_TRUE(*store_->claimJob(legacy->id, std::nullopt, "node-c", 1700000003003));
    EXPECT_FALSE(*store_->claimJob(legacy->id, std::nullopt, "node-d", 1700000003004));
    EXPECT_EQ(store_->getJob(legacy->id)->owner_node, std::optional<std::string>("node-c"));

    // A terminal job cannot be claimed.
    JobRecord done = sampleJob();
    done.owner_node = "node-dead";
    done.status = JobStatus::failed;
    auto finished = store_->createJob(done);
    ASSERT_TRUE(finished.ok());
    EXPECT_FALSE(*store_->claimJob(finished->id, std::string_view("node-dead"), "node-b", 5));
    EXPECT_EQ(store_->getJob(finished->id)->owner_node, std::optional<std::string>("node-dead"));

    EXPECT_FALSE(*store_->claimJob("job_missing", std::nullopt, "node-b", 5));
    EXPECT_EQ(store_->claimJob(id, std::string_view("node-b"), "", 5).error().code,
              ErrorCode::invalid_argument);
}

TEST_P(JobStoreTest, MarkInterruptedTouchesOnlyItsOwnAndOwnerlessJobs) {
    auto make = [&](std::optional<std::string> owner, JobStatus status) {
        JobRecord job = sampleJob();
        job.owner_node = std::move(owner);
        job.status = status;
        auto created = store_->createJob(job);
        EXPECT_TRUE(created.ok());
        return created.ok() ? created->id : std::string();
    };
    const std::string mine = make("node-a", JobStatus::running);
    const std::string mine_queued = make("node-a", JobStatus::queued);
    const std::string legacy = make(std::nullopt, JobStatus::running);
    const std::string other = make("node-b", JobStatus::running);

    auto marked = store_->markRunningJobsInterrupted(1900000000000, "node-a");
    ASSERT_TRUE(marked.ok()) << marked.error().message;
    EXPECT_EQ(*marked, 2);
    EXPECT_EQ(store_->getJob(mine)->status, JobStatus::interrupted);
    EXPECT_EQ(store_->getJob(legacy)->status, JobStatus::interrupted);
    EXPECT_EQ(store_->getJob(mine_queued)->status, JobStatus::queued);
    EXPECT_EQ(store_->getJob(other)->status, JobStatus::running);
    EXPECT_FALSE(store_->getJob(other)->finished_at.has_value());

    EXPECT_EQ(store_->markRunningJobsInterrupted(1900000000000, "").error().code,
              ErrorCode::invalid_argument);
}

TEST_P(JobStoreTest, FilterByOwnerAndStaleHeartbeat) {
    std::int64_t created_at = 100;
    auto make = [&](std::optional<std::string> owner, JobStatus status,
                    std::optional<std::int64_t> heartbeat_at) {
        JobRecord job = sampleJob();
        job.owner_node = std::move(owner);
        job.status = status;
        job.heartbeat_at = heartbeat_at;
        job.created_at = created_at++;  // a stable list order
        auto created = store_->createJob(job);
        EXPECT_TRUE(created.ok());
        return created.ok() ? created->id : std::string();
    };
    const std::string a_fresh = make("node-a", JobStatus::running, 2000);
    const std::string a_stale = make("node-a", JobStatus::queued, 500);
    const std::string b_never = make("node-b", JobStatus::running, std::nullopt);
    const std::string b_done = make("node-b", JobStatus::succeeded, 100);
    make(std::nullopt, JobStatus::running, 1000);

    JobFilter node_a;
    node_a.owner_node = "node-a";
    EXPECT_EQ(*store_->countJobs(node_a), 2);
    node_a.statuses = {JobStatus::running};
    auto listed = store_->listJobs(node_a);
    ASSERT_TRUE(listed.ok()) << listed.error().message;
    ASSERT_EQ(listed->size(), 1U);
    EXPECT_EQ(listed->front().id, a_fresh);

    // Live jobs not heard of since 1000: heartbeat 500 and never; 1000 itself is not before.
    JobFilter stale;
    stale.statuses = {JobStatus::queued, JobStatus::running};
    stale.heartbeat_before = 1000;
    stale.order = SortOrder::oldest_first;
    listed = store_->listJobs(stale);
    ASSERT_TRUE(listed.ok()) << listed.error().message;
    ASSERT_EQ(listed->size(), 2U);
    EXPECT_EQ((*listed)[0].id, a_stale);
    EXPECT_EQ((*listed)[1].id, b_never);
    EXPECT_EQ(*store_->countJobs(stale), 2);

    JobFilter stale_b;
    stale_b.owner_node = "node-b";
    stale_b.heartbeat_before = 1000;
    EXPECT_EQ(*store_->countJobs(stale_b), 2) << "b_never and b_done";
    JobFilter nobody;
    nobody.owner_node = "node-z";
    EXPECT_EQ(*store_->countJobs(nobody), 0);
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
