// The node's replay budget: every session's resumption buffers together stay within
// mcp.replay_budget_bytes, the oldest events of the node dropped first.
#include "mcp/legacy/replay_budget.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mcp/legacy/mcp_session.h"
#include "mcp/legacy/session_manager.h"

namespace crank::mcp {
namespace {

TEST(ReplayBudgetTest, TheNodesReplayBuffersStayWithinTheBudgetOldestDroppedFirst) {
    auto budget = std::make_shared<ReplayBudget>(20'000);
    ReplayLimits replay;
    replay.events_per_stream = 1000;
    replay.bytes_per_session = 1'000'000;  // no session bound gets in the way
    replay.budget = budget;
    SessionManager manager(SessionLimits{100, std::chrono::minutes(1), replay});
    std::vector<std::shared_ptr<McpSession>> sessions;
    std::vector<std::uint64_t> streams;
    for (int i = 0; i < 4; ++i) {
        sessions.push_back(*manager.create("2025-11-25"));
        streams.push_back(sessions.back()->openStream(false));
    }
    // Session 0 sends first, then 1, 2, 3: 4 x 10 KB, twice the budget.
    for (std::size_t s = 0; s < sessions.size(); ++s) {
        for (int e = 0; e < 10; ++e) {
            sessions[s]->send(streams[s], std::string(1000, static_cast<char>('a' + s)));
            ASSERT_LE(budget->bytes(), budget->maxBytes());
        }
    }
    EXPECT_GT(budget->bytes(), 0u);
    // The oldest (session 0's, then 1's) went first; the newest session keeps all of its own.
    EXPECT_FALSE(sessions[0]->oldestReplayEvent().has_value());
    EXPECT_TRUE(sessions[3]->oldestReplayEvent().has_value());
    EXPECT_TRUE(sessions[3]->canResume(std::to_string(streams[3]) + "-1"));
    // A session that ends gives back what it kept.
    const std::size_t before = budget->bytes();
    const std::string id = sessions[3]->id();
    sessions[3].reset();
    ASSERT_TRUE(manager.remove(id));
    EXPECT_LT(budget->bytes(), before);
}

TEST(ReplayBudgetTest, WithoutATrimmerNothingIsDroppedAndTheCountStaysRight) {
    auto budget = std::make_shared<ReplayBudget>(100);
    ReplayLimits replay;
    replay.budget = budget;
    {
        McpSession session("s", "2025-11-25", replay);
        const auto stream = session.openStream(false);
        session.send(stream, std::string(500, 'x'));
        EXPECT_GT(budget->bytes(), 500u);  // over, but no manager to trim
    }
    EXPECT_EQ(budget->bytes(), 0u);
}

}  // namespace
}  // namespace crank::mcp
