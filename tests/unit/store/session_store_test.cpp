#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store_test_support.h"

namespace crank::store::test {
namespace {

using SessionStoreTest = StoreTest;

TEST_P(SessionStoreTest, CreateAssignsRandomIdAndCreationTimeAndGetReturnsEveryField) {
    SessionRecord input = sampleSession();
    input.cursor = "c-1";
    input.last_poll_at = 1700000000123;
    auto first = store_->createSession(input);
    ASSERT_TRUE(first.ok()) << first.error().message;
    auto second = store_->createSession(input);
    ASSERT_TRUE(second.ok()) << second.error().message;

    EXPECT_EQ(first->id.rfind("ses_", 0), 0U) << first->id;
    EXPECT_EQ(first->id.size(), 4U + 32U);  // prefix + 128 bits in hex
    EXPECT_NE(first->id, second->id);
    EXPECT_GT(first->created_at, 1600000000000);

    auto loaded = store_->getSession(first->id);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_EQ(loaded->id, first->id);
    EXPECT_EQ(loaded->workspace_id, "ws1");
    EXPECT_EQ(loaded->agent_id, "agent1");
    EXPECT_EQ(loaded->operation_id, "op_tail");
    EXPECT_EQ(loaded->protocol, "http_sse");
    EXPECT_EQ(loaded->mode, "session");
    EXPECT_EQ(loaded->status, SessionStatus::active);
    EXPECT_EQ(loaded->cursor, std::optional<std::string>("c-1"));
    EXPECT_EQ(loaded->state_json, R"({"buffered":0})");
    EXPECT_EQ(loaded->expires_at, kFarFuture);
    EXPECT_EQ(loaded->last_poll_at, std::optional<std::int64_t>(1700000000123));
    EXPECT_EQ(loaded->created_at, first->created_at);
    EXPECT_FALSE(loaded->closed_at.has_value());
}

TEST_P(SessionStoreTest, OwnerNodeRoundTripsAndFilters) {
    SessionRecord on_a = sampleSession();
    on_a.owner_node = "node-a";
    auto a1 = store_->createSession(on_a);
    ASSERT_TRUE(a1.ok()) << a1.error().message;
    EXPECT_EQ(a1->owner_node, std::optional<std::string>("node-a"));
    on_a.status = SessionStatus::closed;
    auto a2 = store_->createSession(on_a);
    ASSERT_TRUE(a2.ok());
    SessionRecord on_b = sampleSession();
    on_b.owner_node = "node-b";
    auto b1 = store_->createSession(on_b);
    ASSERT_TRUE(b1.ok());
    auto legacy = store_->createSession(sampleSession());
    ASSERT_TRUE(legacy.ok());

    auto loaded = store_->getSession(a1->id);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_EQ(loaded->owner_node, std::optional<std::string>("node-a"));
    EXPECT_FALSE(store_->getSession(legacy->id)->owner_node.has_value());

    SessionFilter node_a;
    node_a.owner_node = "node-a";
    EXPECT_EQ(*store_->countSessions(node_a), 2);
    node_a.statuses = {SessionStatus::active, SessionStatus::paused};
    auto listed = store_->listSessions(node_a);
    ASSERT_TRUE(listed.ok()) << listed.error().message;
    ASSERT_EQ(listed->size(), 1U);
    EXPECT_EQ(listed->front().id, a1->id);
    EXPECT_EQ(listed->front().owner_node, std::optional<std::string>("node-a"));

    SessionFilter node_b;
    node_b.owner_node = "node-b";
    EXPECT_EQ(*store_->countSessions(node_b), 1);
    EXPECT_EQ(*store_->countSessions({}), 4);

    SessionRecord empty_owner = sampleSession();
    empty_owner.owner_node = "";
    auto rejected = store_->createSession(empty_owner);
    ASSERT_FALSE(rejected.ok());
    EXPECT_EQ(rejected.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(rejected.error().message.find("session.owner_node"), std::string::npos)
        << rejected.error().message;
}

TEST_P(SessionStoreTest, CallerChosenIdIsKeptAndDuplicateIsConflict) {
    SessionRecord input = sampleSession();
    input.id = "ses_given";
    input.created_at = 42;
    auto created = store_->createSession(input);
    ASSERT_TRUE(created.ok()) << created.error().message;
    EXPECT_EQ(created->id, "ses_given");
    EXPECT_EQ(created->created_at, 42);

    auto again = store_->createSession(input);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().code, ErrorCode::conflict) << again.error().message;
}

TEST_P(SessionStoreTest, EmptyCursorIsNotConfusedWithNoCursor) {
    SessionRecord input = sampleSession();
    input.cursor = "";
    auto created = store_->createSession(input);
    ASSERT_TRUE(created.ok()) << created.error().message;
    auto loaded = store_->getSession(created->id);
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->cursor, std::optional<std::string>(""));
}

TEST_P(SessionStoreTest, InvalidInputIsRejectedWithTheFieldName) {
    SessionRecord missing_agent = sampleSession();
    missing_agent.agent_id.clear();
    auto r1 = store_->createSession(missing_agent);
    ASSERT_FALSE(r1.ok());
    EXPECT_EQ(r1.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(r1.error().message.find("session.agent_id"), std::string::npos) << r1.error().message;

    SessionRecord no_expiry = sampleSession();
    no_expiry.expires_at = 0;
    auto r2 = store_->createSession(no_expiry);
    ASSERT_FALSE(r2.ok());
    EXPECT_NE(r2.error().message.find("session.expires_at"), std::string::npos);

    SessionRecord long_id = sampleSession();
    long_id.workspace_id.assign(kMaxShortTextBytes + 1, 'w');
    auto r3 = store_->createSession(long_id);
    ASSERT_FALSE(r3.ok());
    EXPECT_NE(r3.error().message.find("session.workspace_id"), std::string::npos);

    auto none = store_->countSessions({});
    ASSERT_TRUE(none.ok());
    EXPECT_EQ(*none, 0);
}

TEST_P(SessionStoreTest, GetUnknownIdIsNotFound) {
    auto missing = store_->getSession("ses_nope");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, ErrorCode::not_found);
    EXPECT_NE(missing.error().message.find("ses_nope"), std::string::npos);
}

TEST_P(SessionStoreTest, TransitionAppliesOnlyFromTheExpectedStatus) {
    auto created = store_->createSession(sampleSession());
    ASSERT_TRUE(created.ok());
    const std::string id = created->id;

    SessionTransition close;
    close.to = SessionStatus::closed;
    close.closed_at = 1800000000000;
    close.state_json = R"({"reason":"stop"})";
    close.expires_at = 1800000060000;

    // Wrong expectation: nothing changes, the actual status is reported.
    auto wrong = store_->transitionSession(id, SessionStatus::paused, close);
    ASSERT_TRUE(wrong.ok()) << wrong.error().message;
    EXPECT_EQ(wrong->outcome, TransitionOutcome::status_mismatch);
    EXPECT_EQ(wrong->current_status, SessionStatus::active);
    EXPECT_EQ(store_->getSession(id)->status, SessionStatus::active);

    auto applied = store_->transitionSession(id, SessionStatus::active, close);
    ASSERT_TRUE(applied.ok());
    EXPECT_TRUE(applied->applied());
    EXPECT_EQ(applied->current_status, SessionStatus::closed);

    auto loaded = store_->getSession(id);
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->status, SessionStatus::closed);
    EXPECT_EQ(loaded->closed_at, std::optional<std::int64_t>(1800000000000));
    EXPECT_EQ(loaded->state_json, R"({"reason":"stop"})");
    EXPECT_EQ(loaded->expires_at, 1800000060000);
    EXPECT_FALSE(loaded->cursor.has_value()) << "unset fields stay unchanged";

    // Doing it again loses: the session is closed now.
    auto twice = store_->transitionSession(id, SessionStatus::active, close);
    ASSERT_TRUE(twice.ok());
    EXPECT_EQ(twice->outcome, TransitionOutcome::status_mismatch);
    EXPECT_EQ(twice->current_status, SessionStatus::closed);

    auto unknown = store_->transitionSession("ses_unknown", SessionStatus::active, close);
    ASSERT_TRUE(unknown.ok());
    EXPECT_EQ(unknown->outcome, TransitionOutcome::not_found);
    EXPECT_FALSE(unknown->current_status.has_value());
}

TEST_P(SessionStoreTest, TouchRecordsThePollOnlyWhileTheStatusIsExpected) {
    auto created = store_->createSession(sampleSession());
    ASSERT_TRUE(created.ok());
    const std::string id = created->id;

    SessionTouch touch;
    touch.cursor = "c-9";
    touch.last_poll_at = 1750000000000;
    touch.expires_at = 1750000300000;
    auto touched = store_->touchSession(id, SessionStatus::active, touch);
    ASSERT_TRUE(touched.ok()) << touched.error().message;
    EXPECT_TRUE(touched->applied());
    EXPECT_EQ(touched->current_status, SessionStatus::active);

    auto loaded = store_->getSession(id);
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->cursor, std::optional<std::string>("c-9"));
    EXPECT_EQ(loaded->last_poll_at, std::optional<std::int64_t>(1750000000000));
    EXPECT_EQ(loaded->expires_at, 1750000300000);
    EXPECT_EQ(loaded->state_json, R"({"buffered":0})") << "unset fields stay unchanged";
    EXPECT_EQ(loaded->status, SessionStatus::active);

    SessionTouch late;
    late.cursor = "c-10";
    auto paused = store_->touchSession(id, SessionStatus::paused, late);
    ASSERT_TRUE(paused.ok());
    EXPECT_EQ(paused->outcome, TransitionOutcome::status_mismatch);
    EXPECT_EQ(store_->getSession(id)->cursor, std::optional<std::string>("c-9"));

    SessionTouch now_touch;  // last_poll_at 0 = now
    ASSERT_TRUE(store_->touchSession(id, SessionStatus::active, now_touch).ok());
    EXPECT_GT(*store_->getSession(id)->last_poll_at, 1750000000000);

    auto missing = store_->touchSession("ses_missing", SessionStatus::active, touch);
    ASSERT_TRUE(missing.ok());
    EXPECT_EQ(missing->outcome, TransitionOutcome::not_found);
}

TEST_P(SessionStoreTest, ListAndCountApplyEveryFilterAndTheLimit) {
    // ws1/agent1: 3 active + 1 closed; ws1/agent2: 1 active; ws2/agent1: 1 paused.
    std::vector<std::string> ids;
    for (int i = 0; i < 4; ++i) {
        SessionRecord s = sampleSession("ws1", "agent1");
        s.created_at = 1000 + i;
        auto created = store_->createSession(s);
        ASSERT_TRUE(created.ok());
        ids.push_back(created->id);
    }
    SessionTransition close;
    close.to = SessionStatus::closed;
    ASSERT_TRUE(store_->transitionSession(ids[3], SessionStatus::active, close)->applied());
    SessionRecord other_agent = sampleSession("ws1", "agent2");
    other_agent.created_at = 2000;
    other_agent.operation_id = "op_other";
    ASSERT_TRUE(store_->createSession(other_agent).ok());
    SessionRecord other_ws = sampleSession("ws2", "agent1");
    other_ws.status = SessionStatus::paused;
    other_ws.created_at = 3000;
    other_ws.expires_at = 500;
    ASSERT_TRUE(store_->createSession(other_ws).ok());

    SessionFilter live;
    live.workspace_id = "ws1";
    live.agent_id = "agent1";
    live.statuses = {SessionStatus::active, SessionStatus::paused};
    EXPECT_EQ(*store_->countSessions(live), 3);

    auto listed = store_->listSessions(live);
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 3U);
    EXPECT_EQ((*listed)[0].id, ids[2]) << "newest first";
    EXPECT_EQ((*listed)[2].id, ids[0]);

    live.order = SortOrder::oldest_first;
    live.limit = 2;
    listed = store_->listSessions(live);
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 2U);
    EXPECT_EQ((*listed)[0].id, ids[0]);
    EXPECT_EQ((*listed)[1].id, ids[1]);

    SessionFilter by_workspace;
    by_workspace.workspace_id = "ws1";
    EXPECT_EQ(*store_->countSessions(by_workspace), 5);
    SessionFilter by_agent;
    by_agent.agent_id = "agent1";
    EXPECT_EQ(*store_->countSessions(by_agent), 5);
    SessionFilter by_operation;
    by_operation.operation_id = "op_other";
    EXPECT_EQ(*store_->countSessions(by_operation), 1);
    SessionFilter closed;
    closed.statuses = {SessionStatus::closed};
    auto closed_list = store_->listSessions(closed);
    ASSERT_TRUE(closed_list.ok());
    ASSERT_EQ(closed_list->size(), 1U);
    EXPECT_EQ(closed_list->front().id, ids[3]);
    SessionFilter overdue;
    overdue.expires_before = 1000;
    auto overdue_list = store_->listSessions(overdue);
    ASSERT_TRUE(overdue_list.ok());
    ASSERT_EQ(overdue_list->size(), 1U);
    EXPECT_EQ(overdue_list->front().workspace_id, "ws2");
    EXPECT_EQ(*store_->countSessions({}), 6);
}

TEST_P(SessionStoreTest, LimitIsClampedAndMustBePositive) {
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(store_->createSession(sampleSession()).ok());
    }
    SessionFilter huge;
    huge.limit = kMaxListLimit * 10;
    auto listed = store_->listSessions(huge);
    ASSERT_TRUE(listed.ok()) << listed.error().message;
    EXPECT_EQ(listed->size(), 3U);

    SessionFilter zero;
    zero.limit = 0;
    auto rejected = store_->listSessions(zero);
    ASSERT_FALSE(rejected.ok());
    EXPECT_EQ(rejected.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(rejected.error().message.find("limit"), std::string::npos);
}

TEST_P(SessionStoreTest, CleanupDeletesOnlyExpiredTerminalSessionsInBatches) {
    auto make = [&](SessionStatus status, std::int64_t expires_at) {
        SessionRecord s = sampleSession();
        s.status = status;
        s.expires_at = expires_at;
        auto created = store_->createSession(s);
        EXPECT_TRUE(created.ok());
        return created.ok() ? created->id : std::string();
    };
    const std::string closed_old = make(SessionStatus::closed, 100);
    const std::string expired_old = make(SessionStatus::expired, 200);
    const std::string failed_old = make(SessionStatus::failed, 300);
    const std::string closed_new = make(SessionStatus::closed, 5000);
    const std::string active_old = make(SessionStatus::active, 100);
    const std::string paused_old = make(SessionStatus::paused, 100);

    auto first = store_->deleteExpiredSessions(1000, 2);
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_EQ(*first, 2) << "a batch stops at the limit";
    auto second = store_->deleteExpiredSessions(1000, 100);
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(*second, 1);
    EXPECT_EQ(*store_->deleteExpiredSessions(1000, 100), 0);

    EXPECT_EQ(store_->getSession(closed_old).error().code, ErrorCode::not_found);
    EXPECT_EQ(store_->getSession(expired_old).error().code, ErrorCode::not_found);
    EXPECT_EQ(store_->getSession(failed_old).error().code, ErrorCode::not_found);
    EXPECT_TRUE(store_->getSession(closed_new).ok()) << "not expired yet";
    EXPECT_TRUE(store_->getSession(active_old).ok()) << "live sessions are never deleted";
    EXPECT_TRUE(store_->getSession(paused_old).ok());

    EXPECT_FALSE(store_->deleteExpiredSessions(1000, 0).ok());
}

INSTANTIATE_TEST_SUITE_P(Backends, SessionStoreTest,
                         ::testing::Values(Backing::memory, Backing::file), backingName);

}  // namespace
}  // namespace crank::store::test
