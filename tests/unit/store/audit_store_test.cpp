#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store_test_support.h"

namespace crank::store::test {
namespace {

using AuditStoreTest = StoreTest;

AuditEvent event(std::int64_t ts, const std::string& ws, const std::string& agent,
                 const std::string& op, const std::string& action) {
    AuditEvent e;
    e.ts = ts;
    e.workspace_id = ws;
    e.agent_id = agent;
    e.operation_id = op;
    e.action = action;
    e.outcome = "ok";
    e.detail_json = R"({"ts":)" + std::to_string(ts) + "}";
    return e;
}

std::vector<std::int64_t> timestamps(const std::vector<AuditEvent>& events) {
    std::vector<std::int64_t> out;
    out.reserve(events.size());
    for (const auto& e : events) {
        out.push_back(e.ts);
    }
    return out;
}

class AuditQueries : public AuditStoreTest {
protected:
    void SetUp() override {
        AuditStoreTest::SetUp();
        ASSERT_NE(store_, nullptr);
        // ts 100..700; ts 300 twice so that the id decides between them.
        const std::vector<AuditEvent> events = {
            event(100, "ws1", "agent1", "op1", "session.start"),
            event(200, "ws1", "agent2", "op1", "session.poll"),
            event(300, "ws1", "agent1", "op2", "job.start"),
            event(300, "ws2", "agent1", "op2", "job.cancel"),
            event(500, "ws1", "", "", "operation.publish"),
            event(600, "ws2", "agent3", "op3", "session.start"),
            event(700, "ws1", "agent1", "op1", "session.stop"),
        };
        for (const auto& e : events) {
            auto appended = store_->appendAudit(e);
            ASSERT_TRUE(appended.ok()) << appended.error().message;
            ids_.push_back(appended->id);
        }
    }

    std::vector<std::int64_t> ids_;
};

TEST_P(AuditQueries, AppendAssignsIncreasingIdsAndKeepsEveryField) {
    for (std::size_t i = 1; i < ids_.size(); ++i) {
        EXPECT_GT(ids_[i], ids_[i - 1]);
    }
    AuditQuery all;
    all.order = SortOrder::oldest_first;
    auto events = store_->queryAudit(all);
    ASSERT_TRUE(events.ok()) << events.error().message;
    ASSERT_EQ(events->size(), 7U);
    const AuditEvent& first = events->front();
    EXPECT_EQ(first.id, ids_[0]);
    EXPECT_EQ(first.ts, 100);
    EXPECT_EQ(first.workspace_id, "ws1");
    EXPECT_EQ(first.agent_id, "agent1");
    EXPECT_EQ(first.operation_id, "op1");
    EXPECT_EQ(first.action, "session.start");
    EXPECT_EQ(first.outcome, "ok");
    EXPECT_EQ(first.detail_json, R"({"ts":100})");
}

TEST_P(AuditQueries, OrderIsByTimestampThenIdInBothDirections) {
    AuditQuery newest;
    auto desc = store_->queryAudit(newest);
    ASSERT_TRUE(desc.ok());
    EXPECT_EQ(timestamps(*desc), (std::vector<std::int64_t>{700, 600, 500, 300, 300, 200, 100}));
    EXPECT_EQ((*desc)[3].id, ids_[3]) << "equal ts: higher id first when newest first";
    EXPECT_EQ((*desc)[4].id, ids_[2]);

    AuditQuery oldest;
    oldest.order = SortOrder::oldest_first;
    auto asc = store_->queryAudit(oldest);
    ASSERT_TRUE(asc.ok());
    EXPECT_EQ(timestamps(*asc), (std::vector<std::int64_t>{100, 200, 300, 300, 500, 600, 700}));
    EXPECT_EQ((*asc)[2].id, ids_[2]);
    EXPECT_EQ((*asc)[3].id, ids_[3]);
}

TEST_P(AuditQueries, EachFilterSelectsItsEvents) {
    AuditQuery ws;
    ws.workspace_id = "ws2";
    EXPECT_EQ(timestamps(*store_->queryAudit(ws)), (std::vector<std::int64_t>{600, 300}));

    AuditQuery agent;
    agent.agent_id = "agent1";
    EXPECT_EQ(timestamps(*store_->queryAudit(agent)),
              (std::vector<std::int64_t>{700, 300, 300, 100}));

    AuditQuery op;
    op.operation_id = "op1";
    EXPECT_EQ(timestamps(*store_->queryAudit(op)), (std::vector<std::int64_t>{700, 200, 100}));

    AuditQuery action;
    action.action = "session.start";
    EXPECT_EQ(timestamps(*store_->queryAudit(action)), (std::vector<std::int64_t>{600, 100}));

    AuditQuery combined;
    combined.workspace_id = "ws1";
    combined.agent_id = "agent1";
    combined.operation_id = "op1";
    EXPECT_EQ(timestamps(*store_->queryAudit(combined)), (std::vector<std::int64_t>{700, 100}));

    AuditQuery nothing;
    nothing.workspace_id = "ws9";
    EXPECT_TRUE(store_->queryAudit(nothing)->empty());
}

TEST_P(AuditQueries, TimeRangeIsHalfOpen) {
    AuditQuery range;
    range.from_ts = 200;
    range.to_ts = 600;
    range.order = SortOrder::oldest_first;
    EXPECT_EQ(timestamps(*store_->queryAudit(range)),
              (std::vector<std::int64_t>{200, 300, 300, 500}));

    AuditQuery from_only;
    from_only.from_ts = 600;
    EXPECT_EQ(timestamps(*store_->queryAudit(from_only)), (std::vector<std::int64_t>{700, 600}));

    AuditQuery to_only;
    to_only.to_ts = 200;
    EXPECT_EQ(timestamps(*store_->queryAudit(to_only)), (std::vector<std::int64_t>{100}));

    AuditQuery empty;
    empty.from_ts = 300;
    empty.to_ts = 300;
    EXPECT_TRUE(store_->queryAudit(empty)->empty());

    AuditQuery backwards;
    backwards.from_ts = 600;
    backwards.to_ts = 200;
    auto rejected = store_->queryAudit(backwards);
    ASSERT_FALSE(rejected.ok());
    EXPECT_EQ(rejected.error().code, ErrorCode::invalid_argument);
}

TEST_P(AuditQueries, LimitKeepsTheNewestOrTheOldest) {
    AuditQuery newest;
    newest.limit = 2;
    EXPECT_EQ(timestamps(*store_->queryAudit(newest)), (std::vector<std::int64_t>{700, 600}));
    AuditQuery oldest;
    oldest.limit = 2;
    oldest.order = SortOrder::oldest_first;
    EXPECT_EQ(timestamps(*store_->queryAudit(oldest)), (std::vector<std::int64_t>{100, 200}));
    AuditQuery huge;
    huge.limit = 1 << 30;
    EXPECT_EQ(store_->queryAudit(huge)->size(), 7U);
    AuditQuery zero;
    zero.limit = 0;
    EXPECT_EQ(store_->queryAudit(zero).error().code, ErrorCode::invalid_argument);
}

TEST_P(AuditStoreTest, AppendRequiresActionAndOutcomeAndStampsMissingTime) {
    AuditEvent no_action;
    no_action.outcome = "ok";
    EXPECT_EQ(store_->appendAudit(no_action).error().code, ErrorCode::invalid_argument);
    AuditEvent no_outcome;
    no_outcome.action = "job.start";
    EXPECT_EQ(store_->appendAudit(no_outcome).error().code, ErrorCode::invalid_argument);

    AuditEvent stamped;
    stamped.action = "admin.login";
    stamped.outcome = "denied";
    auto appended = store_->appendAudit(stamped);
    ASSERT_TRUE(appended.ok()) << appended.error().message;
    EXPECT_GT(appended->ts, 1600000000000);
    EXPECT_GT(appended->id, 0);
    EXPECT_EQ(store_->queryAudit({})->size(), 1U);
}

TEST(AuditStoreAppendOnlyTest, TheDatabaseRefusesToEditTheLog) {
    TempDir dir;
    auto store = openOrFail(fileOptions(dir));
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->appendAudit(event(1, "ws", "a", "o", "job.start")).ok());
    // Even a connection that bypasses the store cannot rewrite an event.
    EXPECT_THROW(rawExec(store->path(), "UPDATE audit_events SET outcome = 'forged'"),
                 std::exception);
    EXPECT_EQ(store->queryAudit({})->front().outcome, "ok");
}

INSTANTIATE_TEST_SUITE_P(Backends, AuditStoreTest,
                         ::testing::Values(Backing::memory, Backing::file), backingName);
INSTANTIATE_TEST_SUITE_P(Backends, AuditQueries, ::testing::Values(Backing::memory, Backing::file),
                         backingName);

}  // namespace
}  // namespace crank::store::test
