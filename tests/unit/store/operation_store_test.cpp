#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store_test_support.h"

namespace crank::store::test {
namespace {

using OperationStoreTest = StoreTest;

OperationRecord newOperation(const std::string& workspace, const std::string& name) {
    OperationRecord operation;
    operation.workspace_id = workspace;
    operation.name = name;
    return operation;
}

OperationVersionDraft draft(const std::string& config, const std::string& comment) {
    OperationVersionDraft d;
    d.config_json = config;
    d.created_by = "alice";
    d.comment = comment;
    return d;
}

TEST_P(OperationStoreTest, CreateGetAndNameUniquenessPerWorkspace) {
    auto created = store_->createOperation(newOperation("ws1", "weather"));
    ASSERT_TRUE(created.ok()) << created.error().message;
    EXPECT_EQ(created->id.rfind("op_", 0), 0U);
    EXPECT_GT(created->created_at, 0);
    EXPECT_FALSE(created->published_version.has_value());
    EXPECT_FALSE(created->deleted());

    auto loaded = store_->getOperation(created->id);
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->name, "weather");
    EXPECT_EQ(loaded->workspace_id, "ws1");
    EXPECT_EQ(loaded->created_at, created->created_at);

    auto same_name = store_->createOperation(newOperation("ws1", "weather"));
    ASSERT_FALSE(same_name.ok());
    EXPECT_EQ(same_name.error().code, ErrorCode::conflict);
    EXPECT_NE(same_name.error().message.find("weather"), std::string::npos);
    EXPECT_TRUE(store_->createOperation(newOperation("ws2", "weather")).ok())
        << "names are unique per workspace only";

    OperationRecord published = newOperation("ws1", "x");
    published.published_version = 1;
    EXPECT_EQ(store_->createOperation(published).error().code, ErrorCode::invalid_argument);
    EXPECT_EQ(store_->getOperation("op_missing").error().code, ErrorCode::not_found);
}

OperationRecord newUpstream(const std::string& workspace, const std::string& name) {
    OperationRecord upstream = newOperation(workspace, name);
    upstream.kind = OperationKind::upstream;
    return upstream;
}

TEST_P(OperationStoreTest, UpstreamsAreVersionedBesideOperationsWithNamesUniqueEverywhere) {
    auto op = store_->createOperation(newOperation("ws1", "github"));
    ASSERT_TRUE(op.ok()) << op.error().message;
    auto up = store_->createOperation(newUpstream("ws1", "github"));
    ASSERT_TRUE(up.ok()) << "an operation and an upstream do not share names: "
                         << up.error().message;
    EXPECT_EQ(up->id.rfind("up_", 0), 0U);
    EXPECT_EQ(up->kind, OperationKind::upstream);
    EXPECT_EQ(store_->getOperation(up->id)->kind, OperationKind::upstream);
    EXPECT_EQ(store_->getOperation(op->id)->kind, OperationKind::operation);

    auto elsewhere = store_->createOperation(newUpstream("ws2", "github"));
    ASSERT_FALSE(elsewhere.ok()) << "an upstream's name is unique in every workspace";
    EXPECT_EQ(elsewhere.error().code, ErrorCode::conflict);
    EXPECT_NE(elsewhere.error().message.find("upstream"), std::string::npos);

    ASSERT_TRUE(store_->addOperationVersion(up->id, draft(R"({"name":"github"})", "")).ok());
    auto published = store_->publishOperationVersion(up->id, 1, std::nullopt);
    ASSERT_TRUE(published.ok());
    EXPECT_TRUE(published->applied());

    OperationFilter operations;
    auto ops = store_->listOperations(operations);
    ASSERT_TRUE(ops.ok());
    ASSERT_EQ(ops->size(), 1U) << "operations are listed without upstreams";
    EXPECT_EQ((*ops)[0].id, op->id);
    OperationFilter upstreams;
    upstreams.kind = OperationKind::upstream;
    upstreams.published_only = true;
    auto ups = store_->listOperations(upstreams);
    ASSERT_TRUE(ups.ok());
    ASSERT_EQ(ups->size(), 1U);
    EXPECT_EQ((*ups)[0].id, up->id);
    EXPECT_EQ((*ups)[0].published_version, 1);

    ASSERT_TRUE(store_->deleteOperation(up->id).ok());
    EXPECT_TRUE(store_->createOperation(newUpstream("ws2", "github")).ok())
        << "a deleted upstream's name is free again";
}

TEST_P(OperationStoreTest, EveryChangeIsANewDraftVersionAndHistoryIsNewestFirst) {
    auto op = store_->createOperation(newOperation("ws1", "weather"));
    ASSERT_TRUE(op.ok());
    for (int i = 1; i <= 3; ++i) {
        auto added = store_->addOperationVersion(
            op->id, draft(R"({"v":)" + std::to_string(i) + "}", "change " + std::to_string(i)));
        ASSERT_TRUE(added.ok()) << added.error().message;
        EXPECT_EQ(added->version, i);
        EXPECT_EQ(added->state, VersionState::draft);
        EXPECT_EQ(added->operation_id, op->id);
    }

    auto v2 = store_->getOperationVersion(op->id, 2);
    ASSERT_TRUE(v2.ok());
    EXPECT_EQ(v2->config_json, R"({"v":2})");
    EXPECT_EQ(v2->comment, "change 2");
    EXPECT_EQ(v2->created_by, "alice");
    EXPECT_GT(v2->created_at, 0);
    EXPECT_EQ(store_->getOperationVersion(op->id, 4).error().code, ErrorCode::not_found);

    auto history = store_->listOperationVersions(op->id, 100);
    ASSERT_TRUE(history.ok()) << history.error().message;
    ASSERT_EQ(history->size(), 3U);
    EXPECT_EQ((*history)[0].version, 3);
    EXPECT_EQ((*history)[1].version, 2);
    EXPECT_EQ((*history)[2].version, 1);
    auto latest = store_->listOperationVersions(op->id, 1);
    ASSERT_TRUE(latest.ok());
    ASSERT_EQ(latest->size(), 1U);
    EXPECT_EQ(latest->front().version, 3);

    EXPECT_EQ(store_->listOperationVersions("op_missing", 10).error().code, ErrorCode::not_found);
    EXPECT_EQ(store_->addOperationVersion("op_missing", draft("{}", "")).error().code,
              ErrorCode::not_found);
    EXPECT_EQ(store_->getPublishedVersion(op->id).error().code, ErrorCode::not_found)
        << "nothing published yet";
}

TEST_P(OperationStoreTest, AnEditBasedOnAnOlderVersionIsRefusedAndAddsNothing) {
    auto op = store_->createOperation(newOperation("ws1", "weather"));
    ASSERT_TRUE(op.ok());
    OperationVersionDraft first = draft(R"({"v":1})", "");
    first.expected_latest = 0;
    ASSERT_TRUE(store_->addOperationVersion(op->id, first).ok());
    OperationVersionDraft again = draft(R"({"v":"again"})", "");
    again.expected_latest = 0;
    auto refused = store_->addOperationVersion(op->id, again);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::conflict);
    EXPECT_NE(refused.error().message.find("at version 1, not 0"), std::string::npos)
        << refused.error().message;

    // Two editors who both loaded version 1: exactly one of them saves.
    OperationVersionDraft a = draft(R"({"v":"a"})", "a");
    a.expected_latest = 1;
    OperationVersionDraft b = draft(R"({"v":"b"})", "b");
    b.expected_latest = 1;
    auto savedA = store_->addOperationVersion(op->id, a);
    auto savedB = store_->addOperationVersion(op->id, b);
    ASSERT_TRUE(savedA.ok()) << savedA.error().message;
    EXPECT_EQ(savedA->version, 2);
    ASSERT_FALSE(savedB.ok());
    EXPECT_EQ(savedB.error().code, ErrorCode::conflict);
    auto history = store_->listOperationVersions(op->id, 100);
    ASSERT_TRUE(history.ok());
    ASSERT_EQ(history->size(), 2U) << "the refused edits added no version";
    EXPECT_EQ(history->front().config_json, R"({"v":"a"})");
}

TEST_P(OperationStoreTest, PublishIsOptimisticAndArchivesThePreviousVersion) {
    auto op = store_->createOperation(newOperation("ws1", "weather"));
    ASSERT_TRUE(op.ok());
    for (int i = 1; i <= 3; ++i) {
        ASSERT_TRUE(store_->addOperationVersion(op->id, draft("{}", "")).ok());
    }

    // First publish: the caller expects nothing to be published.
    auto first = store_->publishOperationVersion(op->id, 1, std::nullopt);
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_TRUE(first->applied());
    EXPECT_EQ(first->published_version, std::optional<std::int64_t>(1));
    EXPECT_EQ(store_->getPublishedVersion(op->id)->version, 1);
    EXPECT_EQ(store_->getOperation(op->id)->published_version, std::optional<std::int64_t>(1));

    // A second editor who still believes nothing is published loses.
    auto stale = store_->publishOperationVersion(op->id, 2, std::nullopt);
    ASSERT_TRUE(stale.ok());
    EXPECT_EQ(stale->outcome, PublishOutcome::version_mismatch);
    EXPECT_EQ(stale->published_version, std::optional<std::int64_t>(1));
    auto wrong = store_->publishOperationVersion(op->id, 2, 3);
    ASSERT_TRUE(wrong.ok());
    EXPECT_EQ(wrong->outcome, PublishOutcome::version_mismatch);
    EXPECT_EQ(store_->getOperationVersion(op->id, 2)->state, VersionState::draft);
    EXPECT_EQ(store_->getPublishedVersion(op->id)->version, 1);

    auto second = store_->publishOperationVersion(op->id, 3, 1);
    ASSERT_TRUE(second.ok());
    EXPECT_TRUE(second->applied());
    EXPECT_EQ(store_->getOperationVersion(op->id, 1)->state, VersionState::archived);
    EXPECT_EQ(store_->getOperationVersion(op->id, 2)->state, VersionState::draft);
    EXPECT_EQ(store_->getOperationVersion(op->id, 3)->state, VersionState::published);
    EXPECT_EQ(store_->getPublishedVersion(op->id)->version, 3);

    // Rollback: an archived version can be published again.
    auto rollback = store_->publishOperationVersion(op->id, 1, 3);
    ASSERT_TRUE(rollback.ok());
    EXPECT_TRUE(rollback->applied());
    EXPECT_EQ(store_->getOperationVersion(op->id, 1)->state, VersionState::published);
    EXPECT_EQ(store_->getOperationVersion(op->id, 3)->state, VersionState::archived);

    // Republishing the published version is a no-op that succeeds.
    auto same = store_->publishOperationVersion(op->id, 1, 1);
    ASSERT_TRUE(same.ok());
    EXPECT_TRUE(same->applied());
    EXPECT_EQ(store_->getOperationVersion(op->id, 1)->state, VersionState::published);

    auto history = store_->listOperationVersions(op->id, 10);
    ASSERT_TRUE(history.ok());
    int published = 0;
    for (const auto& v : *history) {
        published += v.state == VersionState::published ? 1 : 0;
    }
    EXPECT_EQ(published, 1) << "at most one published version";

    EXPECT_EQ(store_->publishOperationVersion(op->id, 9, 1)->outcome, PublishOutcome::not_found);
    EXPECT_EQ(store_->publishOperationVersion("op_missing", 1, std::nullopt)->outcome,
              PublishOutcome::not_found);
}

TEST_P(OperationStoreTest, DeleteIsSoftKeepsHistoryAndFreesTheName) {
    auto op = store_->createOperation(newOperation("ws1", "weather"));
    ASSERT_TRUE(op.ok());
    ASSERT_TRUE(store_->addOperationVersion(op->id, draft(R"({"a":1})", "")).ok());
    ASSERT_TRUE(store_->publishOperationVersion(op->id, 1, std::nullopt)->applied());

    ASSERT_TRUE(store_->deleteOperation(op->id).ok());
    auto again = store_->deleteOperation(op->id);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().code, ErrorCode::not_found);
    EXPECT_NE(again.error().message.find("deleted already"), std::string::npos);
    EXPECT_EQ(store_->deleteOperation("op_missing").error().code, ErrorCode::not_found);

    auto loaded = store_->getOperation(op->id);
    ASSERT_TRUE(loaded.ok());
    EXPECT_TRUE(loaded->deleted());
    EXPECT_EQ(store_->getPublishedVersion(op->id).error().code, ErrorCode::not_found);
    auto history = store_->listOperationVersions(op->id, 10);
    ASSERT_TRUE(history.ok());
    EXPECT_EQ(history->size(), 1U) << "versions stay as history";
    EXPECT_EQ(store_->addOperationVersion(op->id, draft("{}", "")).error().code,
              ErrorCode::conflict);
    EXPECT_EQ(store_->publishOperationVersion(op->id, 1, 1)->outcome, PublishOutcome::not_found);

    auto reused = store_->createOperation(newOperation("ws1", "weather"));
    ASSERT_TRUE(reused.ok()) << reused.error().message;
    EXPECT_NE(reused->id, op->id);
}

TEST_P(OperationStoreTest, ListFiltersByWorkspaceNameAndDeletion) {
    auto a = store_->createOperation(newOperation("ws1", "b_second"));
    auto b = store_->createOperation(newOperation("ws1", "a_first"));
    auto c = store_->createOperation(newOperation("ws2", "c_other"));
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    ASSERT_TRUE(store_->deleteOperation(c->id).ok());

    OperationFilter ws1;
    ws1.workspace_id = "ws1";
    auto listed = store_->listOperations(ws1);
    ASSERT_TRUE(listed.ok()) << listed.error().message;
    ASSERT_EQ(listed->size(), 2U);
    EXPECT_EQ((*listed)[0].name, "a_first") << "ordered by name";
    EXPECT_EQ((*listed)[1].name, "b_second");

    auto live = store_->listOperations({});
    ASSERT_TRUE(live.ok());
    EXPECT_EQ(live->size(), 2U) << "deleted operations are hidden by default";
    OperationFilter all;
    all.include_deleted = true;
    EXPECT_EQ(store_->listOperations(all)->size(), 3U);

    OperationFilter by_name;
    by_name.workspace_id = "ws1";
    by_name.name = "b_second";
    auto found = store_->listOperations(by_name);
    ASSERT_TRUE(found.ok());
    ASSERT_EQ(found->size(), 1U);
    EXPECT_EQ(found->front().id, a->id);

    OperationFilter limited;
    limited.limit = 1;
    EXPECT_EQ(store_->listOperations(limited)->size(), 1U);
}

TEST_P(OperationStoreTest, PublishedOnlyListsWhatANodeServes) {
    auto draftOnly = store_->createOperation(newOperation("ws1", "a_draft"));
    auto published = store_->createOperation(newOperation("ws1", "b_published"));
    auto gone = store_->createOperation(newOperation("ws1", "c_deleted"));
    ASSERT_TRUE(draftOnly.ok() && published.ok() && gone.ok());
    for (const auto* op : {&*draftOnly, &*published, &*gone}) {
        ASSERT_TRUE(store_->addOperationVersion(op->id, draft("{}", "")).ok());
    }
    ASSERT_TRUE(store_->publishOperationVersion(published->id, 1, std::nullopt)->applied());
    ASSERT_TRUE(store_->publishOperationVersion(gone->id, 1, std::nullopt)->applied());
    ASSERT_TRUE(store_->deleteOperation(gone->id).ok());

    OperationFilter filter;
    filter.published_only = true;
    auto served = store_->listOperations(filter);
    ASSERT_TRUE(served.ok()) << served.error().message;
    ASSERT_EQ(served->size(), 1U) << "drafts and deleted operations are not served";
    EXPECT_EQ(served->front().id, published->id);
    filter.include_deleted = true;
    EXPECT_EQ(store_->listOperations(filter)->size(), 2U);
}

INSTANTIATE_TEST_SUITE_P(Backends, OperationStoreTest,
                         ::testing::Values(Backing::memory, Backing::file), backingName);

}  // namespace
}  // namespace crank::store::test
