// Retention of the audit log (Store::deleteAuditBefore, Store::deleteAuditBeyond): only the
// oldest events go, in bounded batches, and the log stays append-only.

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store_test_support.h"

namespace crank::store::test {
namespace {

AuditEvent event(std::int64_t ts, const std::string& action = "session.poll") {
    AuditEvent e;
    e.ts = ts;
    e.workspace_id = "ws1";
    e.agent_id = "agent1";
    e.operation_id = "op1";
    e.action = action;
    e.outcome = "ok";
    return e;
}

/// How many events a cleanup call deleted; -1 (and a failure) when it failed.
std::int64_t deletedBy(const Result<std::int64_t>& result) {
    EXPECT_TRUE(result.ok()) << result.error().message;
    return result.ok() ? *result : -1;
}

class AuditRetention : public StoreTest {
protected:
    void SetUp() override {
        StoreTest::SetUp();
        ASSERT_NE(store_, nullptr);
        // ts 100..700; ts 300 twice so that the id decides between them.
        for (const std::int64_t ts : {100, 200, 300, 300, 500, 600, 700}) {
            auto appended = store_->appendAudit(event(ts));
            ASSERT_TRUE(appended.ok()) << appended.error().message;
            ids_.push_back(appended->id);
        }
    }

    /// The ids left, oldest (ts, id) first.
    std::vector<std::int64_t> remaining() {
        AuditQuery all;
        all.order = SortOrder::oldest_first;
        all.limit = kMaxListLimit;
        auto events = store_->queryAudit(all);
        EXPECT_TRUE(events.ok()) << events.error().message;
        std::vector<std::int64_t> out;
        if (events.ok()) {
            for (const auto& e : *events) {
                out.push_back(e.id);
            }
        }
        return out;
    }

    /// ids_[from..] in order.
    std::vector<std::int64_t> idsFrom(std::size_t from) const {
        return {ids_.begin() + static_cast<std::ptrdiff_t>(from), ids_.end()};
    }

    std::vector<std::int64_t> ids_;
};

TEST_P(AuditRetention, DeleteBeforeRemovesOnlyEventsOlderThanTheCutOff) {
    auto deleted = store_->deleteAuditBefore(300, kMaxCleanupBatch);
    ASSERT_TRUE(deleted.ok()) << deleted.error().message;
    EXPECT_EQ(*deleted, 2);
    EXPECT_EQ(remaining(), idsFrom(2));  // ts == 300 stays: the cut-off is exclusive
    EXPECT_EQ(deletedBy(store_->deleteAuditBefore(300, kMaxCleanupBatch)), 0);
}

TEST_P(AuditRetention, DeleteBeforeGoesOldestFirstInBatches) {
    EXPECT_EQ(deletedBy(store_->deleteAuditBefore(700, 3)), 3);
    EXPECT_EQ(remaining(), idsFrom(3));  // 100, 200 and the first of the two 300s
    EXPECT_EQ(deletedBy(store_->deleteAuditBefore(700, 3)), 3);
    EXPECT_EQ(remaining(), idsFrom(6));
    EXPECT_EQ(deletedBy(store_->deleteAuditBefore(700, 3)), 0);
    EXPECT_EQ(remaining(), idsFrom(6));
}

TEST_P(AuditRetention, DeleteBeyondKeepsExactlyTheNewestEvents) {
    auto deleted = store_->deleteAuditBeyond(3, kMaxCleanupBatch);
    ASSERT_TRUE(deleted.ok()) << deleted.error().message;
    EXPECT_EQ(*deleted, 4);
    EXPECT_EQ(remaining(), idsFrom(4));
    EXPECT_EQ(deletedBy(store_->deleteAuditBeyond(3, kMaxCleanupBatch)), 0);
    EXPECT_EQ(deletedBy(store_->deleteAuditBeyond(100, kMaxCleanupBatch)), 0);
    EXPECT_EQ(remaining(), idsFrom(4));
}

TEST_P(AuditRetention, DeleteBeyondOrdersByTimestampNotByAppend) {
    // Appended last but stamped first: it is the oldest, so it goes first.
    auto late = store_->appendAudit(event(50));
    ASSERT_TRUE(late.ok()) << late.error().message;
    EXPECT_EQ(deletedBy(store_->deleteAuditBeyond(7, kMaxCleanupBatch)), 1);
    EXPECT_EQ(remaining(), ids_);
}

TEST_P(AuditRetention, DeleteBeyondIsBoundedByItsBatch) {
    EXPECT_EQ(deletedBy(store_->deleteAuditBeyond(0, 2)), 2);
    EXPECT_EQ(remaining(), idsFrom(2));
    EXPECT_EQ(deletedBy(store_->deleteAuditBeyond(0, kMaxCleanupBatch)), 5);
    EXPECT_TRUE(remaining().empty());
}

TEST_P(AuditRetention, BadArgumentsAreRefusedAndDeleteNothing) {
    EXPECT_EQ(store_->deleteAuditBefore(1000, 0).error().code, ErrorCode::invalid_argument);
    EXPECT_EQ(store_->deleteAuditBeyond(0, 0).error().code, ErrorCode::invalid_argument);
    const auto negative = store_->deleteAuditBeyond(-1, 10);
    ASSERT_FALSE(negative.ok());
    EXPECT_EQ(negative.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(negative.error().message.find("keep"), std::string::npos) << negative.error().message;
    EXPECT_EQ(remaining(), ids_);
}

TEST(AuditRetentionFileTest, IdsAreNeverReusedAndTheLogStaysAppendOnly) {
    TempDir dir;
    auto store = openOrFail(fileOptions(dir));
    ASSERT_NE(store, nullptr);
    std::int64_t last = 0;
    for (const std::int64_t ts : {1, 2, 3}) {
        last = store->appendAudit(event(ts)).value().id;
    }
    ASSERT_EQ(deletedBy(store->deleteAuditBeyond(0, kMaxCleanupBatch)), 3);
    EXPECT_EQ(rawInt(store->path(), "SELECT count(*) FROM audit_events"), 0);
    // The newest row was deleted too, yet the next id is above it.
    EXPECT_GT(store->appendAudit(event(4)).value().id, last);
    EXPECT_THROW(rawExec(store->path(), "UPDATE audit_events SET outcome = 'forged'"),
                 std::exception);
}

INSTANTIATE_TEST_SUITE_P(Backends, AuditRetention,
                         ::testing::Values(Backing::memory, Backing::file), backingName);

}  // namespace
}  // namespace crank::store::test
