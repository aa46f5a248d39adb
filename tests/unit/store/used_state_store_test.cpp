// The register of opened request states (Store::recordUsedState, Store::deleteExpiredUsedStates):
// an id is recorded once, each caller holds only its share of unexpired records, and expired
// records give their share back and are deleted in bounded batches.

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "store_test_support.h"

namespace crank::store::test {
namespace {

constexpr std::int64_t kNow = 1'000'000;

UsedStateRecord used(const std::string& id, const std::string& agent = "alice",
                     std::int64_t expires_at = kNow + 60'000,
                     const std::string& workspace = "ws1") {
    return UsedStateRecord{id, workspace, agent, expires_at};
}

class UsedStates : public StoreTest {
protected:
    UsedStateOutcome record(const UsedStateRecord& r, const UsedStateLimits& limits = {},
                            std::int64_t now = kNow) {
        const auto outcome = store_->recordUsedState(r, now, limits);
        EXPECT_TRUE(outcome.ok()) << outcome.error().message;
        return outcome.ok() ? *outcome : UsedStateOutcome::used_before;
    }
};

TEST_P(UsedStates, AnIdIsRecordedOnceWhoeverRecordsItAgain) {
    EXPECT_EQ(record(used("s1")), UsedStateOutcome::recorded);
    EXPECT_EQ(record(used("s1")), UsedStateOutcome::used_before);
    EXPECT_EQ(record(used("s1", "bob")), UsedStateOutcome::used_before);
    EXPECT_EQ(record(used("s2")), UsedStateOutcome::recorded);
}

TEST_P(UsedStates, EachAgentAndWorkspaceHoldsOnlyItsShare) {
    const UsedStateLimits limits{2, 3};
    EXPECT_EQ(record(used("a1"), limits), UsedStateOutcome::recorded);
    EXPECT_EQ(record(used("a2"), limits), UsedStateOutcome::recorded);
    EXPECT_EQ(record(used("a3"), limits), UsedStateOutcome::agent_full);
    EXPECT_EQ(record(used("b1", "bob"), limits), UsedStateOutcome::recorded);
    EXPECT_EQ(record(used("b2", "bob"), limits), UsedStateOutcome::workspace_full);
    // Another workspace, and an agent of the same name in it, are apart.
    EXPECT_EQ(record(used("c1", "alice", kNow + 60'000, "ws2"), limits),
              UsedStateOutcome::recorded);
    // A refused record was not written: once there is room it is recorded.
    EXPECT_EQ(record(used("a3"), UsedStateLimits{}), UsedStateOutcome::recorded);
}

TEST_P(UsedStates, ExpiredRecordsGiveTheirShareBackAndAreDeletedInBatches) {
    const UsedStateLimits limits{1, -1};
    EXPECT_EQ(record(used("old", "alice", kNow + 10), limits), UsedStateOutcome::recorded);
    EXPECT_EQ(record(used("new"), limits), UsedStateOutcome::agent_full);
    EXPECT_EQ(record(used("new"), limits, kNow + 10), UsedStateOutcome::recorded);
    for (int i = 0; i < 5; ++i) {
        record(used("x" + std::to_string(i), "carol", kNow + 20 + i));
    }
    auto deleted = store_->deleteExpiredUsedStates(kNow + 22, 2);
    ASSERT_TRUE(deleted.ok()) << deleted.error().message;
    EXPECT_EQ(*deleted, 2);  // the oldest expiries first: "old" and x0
    deleted = store_->deleteExpiredUsedStates(kNow + 22, 100);
    ASSERT_TRUE(deleted.ok());
    EXPECT_EQ(*deleted, 2);  // x1, x2 (expires_at <= now)
    EXPECT_EQ(record(used("x3", "carol")), UsedStateOutcome::used_before);  // not expired: kept
    EXPECT_FALSE(store_->deleteExpiredUsedStates(kNow, 0).ok());
}

TEST_P(UsedStates, BadRecordsAreRefusedNamingTheField) {
    const auto empty = store_->recordUsedState(used(""), kNow, {});
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(empty.error().message.find("id"), std::string::npos);
    const auto huge = store_->recordUsedState(used("s", std::string(5000, 'a')), kNow, {});
    ASSERT_FALSE(huge.ok());
    EXPECT_NE(huge.error().message.find("agent"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Backends, UsedStates, ::testing::Values(Backing::memory, Backing::file),
                         backingName);

}  // namespace
}  // namespace crank::store::test
