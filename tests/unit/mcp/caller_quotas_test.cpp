// CallerQuotas: calls, MCP sessions and streams bounded per agent, per workspace and in all.
#include "mcp/caller_quotas.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace crank::mcp {
namespace {

using Kind = CallerQuotas::Kind;

std::shared_ptr<CallerQuotas> quotas() {
    return std::make_shared<CallerQuotas>(
        std::map<std::string, CallerQuotas::Bounds>{{"team", {10, 3, 5}}},
        std::map<std::string, CallerQuotas::Bounds>{{"mallory", {2, 1, -1}}},
        CallerQuotas::Bounds{4, -1, -1});
}

TEST(CallerQuotas, AnAgentIsBoundedBeforeItsWorkspaceAndTheRefusalNamesTheLimit) {
    auto q = quotas();
    EXPECT_EQ(q->acquire(Kind::session, "mallory", "team"), "");
    const std::string refused = q->acquire(Kind::session, "mallory", "team");
    EXPECT_NE(refused.find("auth.agents[].limits.max_mcp_sessions"), std::string::npos) << refused;
    EXPECT_EQ(q->acquire(Kind::session, "alice", "team"), "");
    EXPECT_EQ(q->acquire(Kind::session, "bob", "team"), "");
    const std::string full = q->acquire(Kind::session, "carol", "team");
    EXPECT_NE(full.find("auth.workspaces[].limits.max_mcp_sessions"), std::string::npos) << full;
    q->release(Kind::session, "mallory", "team");
    EXPECT_EQ(q->acquire(Kind::session, "carol", "team"), "");
}

TEST(CallerQuotas, AReloadsBoundsCountWhatIsHeldAndApplyToAgentsItAdds) {
    auto q = quotas();
    EXPECT_EQ(q->acquire(Kind::call, "mallory", "team"), "");
    EXPECT_EQ(q->acquire(Kind::call, "mallory", "team"), "");
    // mallory's bound drops to 1 while it holds 2; "newbie" gets one of its own.
    q->setBounds({{"team", {10, 3, 5}}}, {{"mallory", {1, 1, -1}}, {"newbie", {1, -1, -1}}}, {});
    EXPECT_NE(q->acquire(Kind::call, "mallory", "team"), "");
    q->release(Kind::call, "mallory", "team");
    EXPECT_NE(q->acquire(Kind::call, "mallory", "team"), "");  // still at its new bound
    q->release(Kind::call, "mallory", "team");
    EXPECT_EQ(q->acquire(Kind::call, "mallory", "team"), "");
    EXPECT_EQ(q->acquire(Kind::call, "newbie", "team"), "");
    const std::string refused = q->acquire(Kind::call, "newbie", "team");
    EXPECT_NE(refused.find("auth.agents[].limits.max_concurrent_calls"), std::string::npos)
        << refused;
}

TEST(CallerQuotas, TheNodeBoundsCallsOfEveryWorkspace) {
    auto q = quotas();
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(q->acquire(Kind::call, "agent" + std::to_string(i), "team"), "");
    }
    const std::string refused = q->acquire(Kind::call, "other", "elsewhere");
    EXPECT_NE(refused.find("server.max_concurrent_calls"), std::string::npos) << refused;
    EXPECT_EQ(q->acquire(Kind::stream, "other", "elsewhere"), "");  // streams: no node bound here
}

TEST(CallerQuotas, AHoldGivesItsPlaceBackWhenDestroyed) {
    auto q = quotas();
    std::string refusal;
    {
        auto hold = CallerQuotas::hold(q, Kind::session, "mallory", "team", refusal);
        ASSERT_NE(hold, nullptr);
        EXPECT_EQ(q->heldByAgent(Kind::session, "mallory"), 1);
        EXPECT_EQ(CallerQuotas::hold(q, Kind::session, "mallory", "team", refusal), nullptr);
        EXPECT_FALSE(refusal.empty());
    }
    EXPECT_EQ(q->heldByAgent(Kind::session, "mallory"), 0);
    EXPECT_NE(CallerQuotas::hold(q, Kind::session, "mallory", "team", refusal), nullptr);
}

TEST(CallerQuotas, TheAnonymousAgentHasOnlyItsWorkspacesBounds) {
    auto q = std::make_shared<CallerQuotas>(
        std::map<std::string, CallerQuotas::Bounds>{{"default", {-1, 2, -1}}},
        std::map<std::string, CallerQuotas::Bounds>{{"", {0, 0, 0}}}, CallerQuotas::Bounds{});
    EXPECT_EQ(q->acquire(Kind::session, "", "default"), "");
    EXPECT_EQ(q->acquire(Kind::session, "", "default"), "");
    EXPECT_FALSE(q->acquire(Kind::session, "", "default").empty());
}

}  // namespace
}  // namespace crank::mcp
