// The federation's subscription table: an upstream told of a resource's first subscriber and its
// last one gone, a client's end forgetting everything it followed, and the bounds per client and
// per agent that keep one agent from growing it without end.

#include "federation/resource_subscriptions.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace crank::federation {
namespace {

const ResourceSubscriptions::Limits kLimits{3, 5};

TEST(ResourceSubscriptionsTest, TheUpstreamIsToldOfTheFirstSubscriberAndTheLastGone) {
    ResourceSubscriptions table;
    EXPECT_TRUE(*table.add("ws", "file:///a", "up", "s1", "alice", kLimits));
    EXPECT_FALSE(*table.add("ws", "file:///a", "up", "s2", "bob", kLimits));
    EXPECT_FALSE(*table.add("ws", "file:///a", "up", "s1", "alice", kLimits));  // again: nothing
    EXPECT_EQ(table.subscribers("ws", "file:///a"), (std::vector<std::string>{"s1", "s2"}));
    EXPECT_TRUE(table.subscribers("other", "file:///a").empty());
    EXPECT_FALSE(table.remove("ws", "file:///a", "s1"));
    EXPECT_FALSE(table.remove("ws", "file:///a", "nobody"));
    EXPECT_TRUE(table.remove("ws", "file:///a", "s2"));
    EXPECT_EQ(table.size(), 0U);
    EXPECT_FALSE(table.remove("ws", "file:///a", "s2"));
}

TEST(ResourceSubscriptionsTest, AnEndedClientLeavesTheResourcesOnlyItFollowed) {
    ResourceSubscriptions table;
    ASSERT_TRUE(table.add("ws", "x:1", "up", "listen:1", "alice", kLimits));
    ASSERT_TRUE(table.add("ws", "x:2", "up", "listen:1", "alice", kLimits));
    ASSERT_TRUE(table.add("ws", "x:2", "up", "s9", "bob", kLimits));
    const auto orphans = table.forget("ws", "listen:1");
    ASSERT_EQ(orphans.size(), 1U);
    EXPECT_EQ(orphans[0].uri, "x:1");
    EXPECT_EQ(orphans[0].upstream, "up");
    EXPECT_EQ(orphans[0].workspace, "ws");
    EXPECT_EQ(table.subscribers("ws", "x:2"), std::vector<std::string>{"s9"});
    EXPECT_TRUE(table.forget("ws", "listen:1").empty());
    EXPECT_TRUE(table.forget("other", "s9").empty());  // another workspace's: untouched
    EXPECT_EQ(table.size(), 1U);
}

TEST(ResourceSubscriptionsTest, AClientAndAnAgentAreBoundedAndGetTheirPlacesBack) {
    ResourceSubscriptions table;
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(table.add("ws", "x:" + std::to_string(i), "up", "s1", "alice", kLimits));
    }
    const auto refused = table.add("ws", "x:9", "up", "s1", "alice", kLimits);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("max_subscriptions_per_client"), std::string::npos)
        << refused.error().message;
    // Another client of the same agent: two more fit, then the agent's bound.
    ASSERT_TRUE(table.add("ws", "x:3", "up", "s2", "alice", kLimits));
    ASSERT_TRUE(table.add("ws", "x:4", "up", "s2", "alice", kLimits));
    const auto agentFull = table.add("ws", "x:5", "up", "s3", "alice", kLimits);
    ASSERT_FALSE(agentFull);
    EXPECT_NE(agentFull.error().message.find("max_subscriptions_per_agent"), std::string::npos);
    // Another agent is not refused; another upstream counts apart.
    EXPECT_TRUE(*table.add("ws", "x:5", "up", "s4", "bob", kLimits));
    EXPECT_TRUE(*table.add("ws", "y:1", "up2", "s1", "alice", kLimits));
    // Places come back when subscriptions go.
    table.remove("ws", "x:0", "s1");
    EXPECT_TRUE(table.add("ws", "x:9", "up", "s1", "alice", kLimits));
    table.forget("ws", "s2");
    EXPECT_TRUE(table.add("ws", "x:6", "up", "s3", "alice", kLimits));
}

TEST(ResourceSubscriptionsTest, AHugeUriIsRefused) {
    ResourceSubscriptions table;
    const auto refused =
        table.add("ws", std::string(kMaxSubscribedUriBytes + 1, 'u'), "up", "s1", "alice", kLimits);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::invalid_argument);
    EXPECT_TRUE(
        table.add("ws", std::string(kMaxSubscribedUriBytes, 'u'), "up", "s1", "alice", kLimits));
    EXPECT_EQ(table.size(), 1U);
}

}  // namespace
}  // namespace crank::federation
