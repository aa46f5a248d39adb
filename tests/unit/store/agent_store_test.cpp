// The admin API's agents and their keys in the store: ids never reused, several keys at once,
// revocation, a delete that revokes every key, digests unique.
#include <string>

#include <gtest/gtest.h>

#include "store_test_support.h"

namespace crank::store::test {
namespace {

using AgentStore = StoreTest;

AgentRecord agent(const std::string& id, const std::string& workspace = "default") {
    AgentRecord a;
    a.id = id;
    a.workspace_id = workspace;
    return a;
}

AgentKeyRecord key(const std::string& agent_id, const std::string& digest) {
    AgentKeyRecord k;
    k.agent_id = agent_id;
    k.digest = digest;
    k.prefix = digest.substr(0, 4);
    return k;
}

TEST_P(AgentStore, AnAgentHoldsSeveralKeysAndARevokedOneIsListedOnlyWhenAsked) {
    auto created = store_->createAgent(agent("bot"));
    ASSERT_TRUE(created.ok()) << created.error().message;
    EXPECT_GT(created->created_at, 0);
    EXPECT_EQ(created->limits_json, "{}");
    auto first = store_->addAgentKey(key("bot", "aaaa1111"));
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_EQ(first->id.rfind("key_", 0), 0U);
    auto second = store_->addAgentKey(key("bot", "bbbb2222"));
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(store_->listAgentKeys("bot", false, 100)->size(), 2U);

    auto revoked = store_->revokeAgentKey("bot", first->id);
    ASSERT_TRUE(revoked.ok()) << revoked.error().message;
    EXPECT_TRUE(revoked->revoked());
    auto again = store_->revokeAgentKey("bot", first->id);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->revoked_at, revoked->revoked_at) << "revoking twice changes nothing";
    auto live = store_->listAgentKeys("bot", false, 100);
    ASSERT_EQ(live->size(), 1U);
    EXPECT_EQ((*live)[0].digest, "bbbb2222");
    EXPECT_EQ(store_->listAgentKeys("bot", true, 100)->size(), 2U);
    EXPECT_EQ(store_->revokeAgentKey("other", second->id).error().code, ErrorCode::not_found)
        << "a key is revoked through its own agent only";

    EXPECT_EQ(store_->addAgentKey(key("bot", "bbbb2222")).error().code, ErrorCode::conflict);
    EXPECT_EQ(store_->addAgentKey(key("nobody", "cccc3333")).error().code, ErrorCode::not_found);
}

TEST_P(AgentStore, ADeleteRevokesEveryKeyAndTheIdIsNeverReused) {
    ASSERT_TRUE(store_->createAgent(agent("gone", "team")).ok());
    ASSERT_TRUE(store_->addAgentKey(key("gone", "dddd4444")).ok());
    ASSERT_TRUE(store_->addAgentKey(key("gone", "eeee5555")).ok());
    ASSERT_TRUE(store_->setAgentLimits("gone", R"({"max_concurrent_calls":2})").ok());
    EXPECT_EQ(store_->getAgent("gone")->limits_json, R"({"max_concurrent_calls":2})");

    ASSERT_TRUE(store_->deleteAgent("gone").ok());
    EXPECT_TRUE(store_->getAgent("gone")->deleted());
    EXPECT_TRUE(store_->listAgentKeys("gone", false, 100)->empty());
    EXPECT_EQ(store_->listAgentKeys("", false, 100)->size(), 0U);
    EXPECT_EQ(store_->deleteAgent("gone").error().code, ErrorCode::not_found);
    EXPECT_EQ(store_->setAgentLimits("gone", "{}").error().code, ErrorCode::not_found);
    EXPECT_EQ(store_->addAgentKey(key("gone", "ffff6666")).error().code, ErrorCode::not_found);
    EXPECT_EQ(store_->createAgent(agent("gone")).error().code, ErrorCode::conflict);
    EXPECT_TRUE(store_->listAgents(false, 100)->empty());
    EXPECT_EQ(store_->listAgents(true, 100)->size(), 1U);
    EXPECT_EQ(store_->getAgent("never").error().code, ErrorCode::not_found);
}

TEST_P(AgentStore, BadInputIsRefusedNamingTheField) {
    EXPECT_EQ(store_->createAgent(agent("")).error().code, ErrorCode::invalid_argument);
    EXPECT_NE(store_->createAgent(agent("x", "")).error().message.find("workspace_id"),
              std::string::npos);
    EXPECT_EQ(store_->createAgent(agent(std::string(kMaxShortTextBytes + 1, 'a'))).error().code,
              ErrorCode::invalid_argument);
    ASSERT_TRUE(store_->createAgent(agent("ok")).ok());
    EXPECT_EQ(store_->addAgentKey(key("ok", "")).error().code, ErrorCode::invalid_argument);
    EXPECT_EQ(store_->listAgents(false, 0).error().code, ErrorCode::invalid_argument);
    EXPECT_EQ(store_->listAgentKeys("ok", false, 0).error().code, ErrorCode::invalid_argument);
}

TEST_P(AgentStore, ListsArePagedByTheLastIdSeen) {
    for (const char* id : {"a1", "a2", "a3"}) {
        ASSERT_TRUE(store_->createAgent(agent(id)).ok());
        ASSERT_TRUE(store_->addAgentKey(key(id, std::string(id) + "-digest")).ok());
    }
    auto first = store_->listAgents(false, 2);
    ASSERT_EQ(first->size(), 2U);
    auto rest = store_->listAgents(false, 2, first->back().id);
    ASSERT_EQ(rest->size(), 1U);
    EXPECT_EQ((*rest)[0].id, "a3");
    auto keys = store_->listAgentKeys("", false, 2);
    ASSERT_EQ(keys->size(), 2U);
    auto more = store_->listAgentKeys("", false, 2, keys->back().id);
    ASSERT_EQ(more->size(), 1U);
    EXPECT_LT(keys->back().id, (*more)[0].id);
}

INSTANTIATE_TEST_SUITE_P(Backends, AgentStore, ::testing::Values(Backing::memory, Backing::file),
                         backingName);

}  // namespace
}  // namespace crank::store::test
