// AuditLog (sampling of reads) and AuditCleaner (retention) on a real SQLite file.

#include "runtime/audit_log.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/audit_cleaner.h"
#include "store/open_store.h"
#include "temp_dir.h"

namespace crank::runtime {
namespace {

using crank::testing::TempDir;

class AuditRuntimeTest : public ::testing::Test {
protected:
    void SetUp() override {
        store::StoreOptions options;
        options.path = dir_.file("crank.db");
        auto opened = store::openStore(options);
        ASSERT_TRUE(static_cast<bool>(opened)) << opened.error().message;
        store_ = std::shared_ptr<store::Store>(std::move(opened).value());
    }

    static store::AuditEvent event(const std::string& agent, const std::string& action,
                                   const std::string& outcome = "ok", std::int64_t ts = 0) {
        store::AuditEvent e;
        e.ts = ts;
        e.workspace_id = "ws";
        e.agent_id = agent;
        e.operation_id = "op";
        e.action = action;
        e.outcome = outcome;
        e.detail_json = R"({"n":1})";
        return e;
    }

    std::vector<store::AuditEvent> events(const std::string& action) {
        store::AuditQuery q;
        q.action = action;
        q.order = store::SortOrder::oldest_first;
        q.limit = store::kMaxListLimit;
        auto found = store_->queryAudit(q);
        EXPECT_TRUE(found.ok()) << found.error().message;
        return found.ok() ? std::move(found).value() : std::vector<store::AuditEvent>{};
    }

    TempDir dir_;
    std::shared_ptr<store::Store> store_;
};

TEST_F(AuditRuntimeTest, WithoutSamplingEveryEventIsRecorded) {
    AuditLog log(store_);
    for (int i = 0; i < 4; ++i) {
        ASSERT_TRUE(log.append(event("a", "session.poll")).ok());
    }
    const auto polls = events("session.poll");
    ASSERT_EQ(polls.size(), 4U);
    EXPECT_EQ(polls[0].detail_json, R"({"n":1})");
}

TEST_F(AuditRuntimeTest, SuccessfulReadsAreSampledPerAgentAndSayTheirRate) {
    AuditLog log(store_, 3);
    for (int i = 0; i < 7; ++i) {
        ASSERT_TRUE(log.append(event("busy", "job.status")).ok());
    }
    ASSERT_TRUE(log.append(event("quiet", "job.status")).ok());
    ASSERT_TRUE(log.append(event("busy", "job.status", "not_found")).ok());
    const auto reads = events("job.status");
    ASSERT_EQ(reads.size(), 5U);  // busy: 1st, 4th, 7th; quiet: its one; the failure
    EXPECT_EQ(reads[0].detail_json, R"({"n":1,"sample_every":3})");
    EXPECT_EQ(reads[3].agent_id, "quiet");
    EXPECT_EQ(reads[4].outcome, "not_found");
    EXPECT_EQ(reads[4].detail_json, R"({"n":1})");
}

TEST_F(AuditRuntimeTest, OtherActionsAreNeverSampled) {
    AuditLog log(store_, 5);
    for (const char* action : {"session.start", "session.stop", "job.cancel", "job.result",
                               "unary.call", "window.call"}) {
        for (int i = 0; i < 3; ++i) {
            ASSERT_TRUE(log.append(event("a", action)).ok());
        }
        EXPECT_EQ(events(action).size(), 3U) << action;
    }
}

TEST_F(AuditRuntimeTest, TheCleanerDeletesByAgeThenBySizeOldestFirst) {
    const std::int64_t now = 100 * kMsPerDay;
    std::vector<std::int64_t> ids;
    for (const std::int64_t day : {50, 60, 69, 71, 80, 90, 95, 99}) {
        ids.push_back(store_->appendAudit(event("a", "job.start", "ok", day * kMsPerDay))->id);
    }
    AuditCleaner::Options options;
    options.max_age_ms = 30 * kMsPerDay;  // before day 70 goes: 50, 60, 69
    options.max_events = 4;               // then 71 goes
    AuditCleaner cleaner(store_, options);
    EXPECT_EQ(cleaner.cleanOnce(now), 4);
    std::vector<std::int64_t> left;
    for (const auto& e : events("job.start")) {
        left.push_back(e.id);
    }
    EXPECT_EQ(left, std::vector<std::int64_t>(ids.begin() + 4, ids.end()));
    EXPECT_EQ(cleaner.cleanOnce(now), 0);
}

TEST_F(AuditRuntimeTest, TheCleanerDrainsABacklogLargerThanOneBatch) {
    const int backlog = store::kMaxCleanupBatch + 10;
    for (int i = 0; i < backlog; ++i) {
        ASSERT_TRUE(store_->appendAudit(event("a", "session.poll", "ok", 1 + i)).ok());
    }
    AuditCleaner::Options options;
    options.max_age_ms = 0;
    options.max_events = 5;
    AuditCleaner cleaner(store_, options);
    EXPECT_EQ(cleaner.cleanOnce(kMsPerDay), backlog - 5);
    EXPECT_EQ(events("session.poll").size(), 5U);
}

}  // namespace
}  // namespace crank::runtime
