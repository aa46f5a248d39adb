#include <atomic>
#include <latch>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "store_test_support.h"

namespace crank::store::test {
namespace {

bool applied(const Result<JobTransitionResult>& result) {
    return result.ok() && result->applied();
}

// All of these use a file database with several pooled connections, so that SQLite's own
// locking (not only the pool) is exercised.
class SqliteStoreConcurrencyTest : public ::testing::Test {
protected:
    void SetUp() override {
        StoreOptions options = fileOptions(dir_, "concurrent.db", 4);
        options.busy_timeout_ms = 10000;
        store_ = openOrFail(options);
        ASSERT_NE(store_, nullptr);
        ASSERT_EQ(store_->connectionCount(), 4U);
    }

    TempDir dir_;
    std::unique_ptr<SqliteStore> store_;
};

TEST_F(SqliteStoreConcurrencyTest, ExactlyOneOfEightRacingThreadsStartsTheJob) {
    constexpr int kThreads = 8;
    constexpr int kRounds = 5;
    for (int round = 0; round < kRounds; ++round) {
        auto job = store_->createJob(sampleJob());
        ASSERT_TRUE(job.ok()) << job.error().message;
        std::latch start(kThreads);
        std::atomic<int> applied{0};
        std::atomic<int> mismatched{0};
        std::atomic<int> other{0};
        std::vector<std::thread> threads;
        threads.reserve(kThreads);
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                JobTransition to_running;
                to_running.to = JobStatus::running;
                to_running.progress_json = "{\"worker\":" + std::to_string(t) + "}";
                start.arrive_and_wait();
                auto result = store_->transitionJob(job->id, JobStatus::queued, to_running);
                const bool lost = result.ok() &&
                                  result->outcome == TransitionOutcome::status_mismatch &&
                                  result->current_status == JobStatus::running;
                if (result.ok() && result->applied()) {
                    ++applied;
                } else if (lost) {
                    ++mismatched;
                } else {
                    ++other;
                }
            });
        }
        for (auto& thread : threads) {
            thread.join();
        }
        EXPECT_EQ(applied.load(), 1) << "round " << round;
        EXPECT_EQ(mismatched.load(), kThreads - 1) << "round " << round;
        EXPECT_EQ(other.load(), 0) << "round " << round;
        EXPECT_EQ(store_->getJob(job->id)->status, JobStatus::running);
    }
}

TEST_F(SqliteStoreConcurrencyTest, IndependentTransitionsOnDifferentRowsAllApply) {
    constexpr int kThreads = 6;
    constexpr int kJobsPerThread = 25;
    std::vector<std::vector<std::string>> ids(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        for (int j = 0; j < kJobsPerThread; ++j) {
            auto job = store_->createJob(sampleJob("ws1", "agent" + std::to_string(t)));
            ASSERT_TRUE(job.ok());
            ids[t].push_back(job->id);
        }
    }
    std::atomic<int> failures{0};
    std::latch start(kThreads);
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            start.arrive_and_wait();
            for (const std::string& id : ids[t]) {
                JobTransition run;
                run.to = JobStatus::running;
                JobTransition finish;
                finish.to = JobStatus::succeeded;
                finish.result_json = "{}";
                finish.finished_at = 1;
                const bool ok = applied(store_->transitionJob(id, JobStatus::queued, run)) &&
                                applied(store_->updateJobProgress(id, "{\"p\":1}")) &&
                                store_->getJob(id).ok() &&
                                applied(store_->transitionJob(id, JobStatus::running, finish));
                if (!ok) {
                    ++failures;
                }
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    EXPECT_EQ(failures.load(), 0);
    JobFilter succeeded;
    succeeded.statuses = {JobStatus::succeeded};
    EXPECT_EQ(*store_->countJobs(succeeded), kThreads * kJobsPerThread);
    JobFilter agent0;
    agent0.agent_id = "agent0";
    agent0.statuses = {JobStatus::succeeded};
    EXPECT_EQ(*store_->countJobs(agent0), kJobsPerThread);
}

TEST_F(SqliteStoreConcurrencyTest, ConcurrentAuditAppendsAllLandWithUniqueIds) {
    constexpr int kThreads = 6;
    constexpr int kEventsPerThread = 50;
    std::latch start(kThreads);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            start.arrive_and_wait();
            for (int i = 0; i < kEventsPerThread; ++i) {
                AuditEvent event;
                event.ts = 1000 + i;
                event.agent_id = "agent" + std::to_string(t);
                event.action = "session.poll";
                event.outcome = "ok";
                if (!store_->appendAudit(event).ok()) {
                    ++failures;
                }
                // Readers interleave with the writers.
                AuditQuery query;
                query.agent_id = event.agent_id;
                query.limit = 1;
                if (!store_->queryAudit(query).ok()) {
                    ++failures;
                }
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    EXPECT_EQ(failures.load(), 0);
    AuditQuery all;
    all.limit = kMaxListLimit;
    auto events = store_->queryAudit(all);
    ASSERT_TRUE(events.ok());
    ASSERT_EQ(events->size(), static_cast<std::size_t>(kThreads * kEventsPerThread));
    std::set<std::int64_t> ids;
    for (const auto& e : *events) {
        ids.insert(e.id);
    }
    EXPECT_EQ(ids.size(), events->size());
    AuditQuery one_agent;
    one_agent.agent_id = "agent3";
    one_agent.limit = kMaxListLimit;
    EXPECT_EQ(store_->queryAudit(one_agent)->size(), static_cast<std::size_t>(kEventsPerThread));
}

TEST_F(SqliteStoreConcurrencyTest, MoreThreadsThanConnectionsWaitForTheirTurn) {
    constexpr int kThreads = 12;  // three times the pool
    std::latch start(kThreads);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            start.arrive_and_wait();
            for (int i = 0; i < 20; ++i) {
                if (!store_->createSession(sampleSession()).ok() || !store_->ping().ok()) {
                    ++failures;
                }
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(*store_->countSessions({}), kThreads * 20);
}

}  // namespace
}  // namespace crank::store::test
