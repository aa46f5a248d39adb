// Upstream tasks under crank's own ids: registered once, found only by crank's id, bounded, and
// never shown to a client under the upstream's id, even when an answer cannot be read.

#include "federation/upstream_tasks.h"

#include <cstddef>
#include <string>

#include <gtest/gtest.h>

#include "federation/upstream_link.h"

namespace crank::federation {
namespace {

TEST(UpstreamTasksTest, ATaskGetsOneUnguessableIdAndIsFoundByItOnly) {
    UpstreamLink link;
    UpstreamTasks tasks;
    const std::string id = tasks.add(link, "t1", "ws", "session-1", "alice");
    EXPECT_EQ(id.rfind(std::string(UpstreamTasks::kPrefix), 0), 0U);
    EXPECT_EQ(id.size(), UpstreamTasks::kPrefix.size() + 32);
    EXPECT_NE(tasks.add(link, "t2", "ws", "session-1", "alice"), id);
    const auto route = tasks.find(id);
    ASSERT_TRUE(route.has_value());
    EXPECT_EQ(route->upstream_id, "t1");
    EXPECT_EQ(route->agent, "alice");
    EXPECT_FALSE(tasks.find("t1").has_value());  // the upstream's id names nothing here
    const auto crank = tasks.crankId(link, "t1");
    ASSERT_TRUE(crank.has_value());
    EXPECT_EQ(crank->first, id);
    EXPECT_EQ(crank->second, "session-1");
}

TEST(UpstreamTasksTest, TheOldestAreForgottenPastTheBound) {
    UpstreamLink link;
    UpstreamTasks tasks;
    // Many agents, each within its share: the node's bound forgets the oldest, whoever's.
    const std::size_t agents = UpstreamTasks::kMaxTasks / (UpstreamTasks::kMaxTasksPerAgent / 2);
    const auto agentOf = [&](std::size_t i) { return "agent-" + std::to_string(i % agents); };
    const std::string first = tasks.add(link, "t0", "ws", "s", agentOf(0));
    for (std::size_t i = 1; i <= UpstreamTasks::kMaxTasks; ++i) {
        tasks.add(link, "t" + std::to_string(i), "ws", "s", agentOf(i));
    }
    EXPECT_FALSE(tasks.find(first).has_value());
    EXPECT_FALSE(tasks.crankId(link, "t0").has_value());
    EXPECT_TRUE(tasks.crankId(link, "t1").has_value());
}

TEST(UpstreamTasksTest, OneAgentsFloodForgetsItsOwnOldestNotAnotherAgentsTasks) {
    UpstreamLink link;
    UpstreamTasks tasks;
    const std::string alices = tasks.add(link, "alice-1", "ws", "s", "alice");
    const std::string first = tasks.add(link, "m0", "ws", "s", "mallory");
    for (std::size_t i = 1; i <= 3 * UpstreamTasks::kMaxTasks; ++i) {
        tasks.add(link, "m" + std::to_string(i), "ws", "s", "mallory");
    }
    EXPECT_TRUE(tasks.find(alices).has_value()) << "an agent's tasks outlive another's flood";
    EXPECT_FALSE(tasks.find(first).has_value());
    EXPECT_FALSE(tasks.crankId(link, "m" + std::to_string(2 * UpstreamTasks::kMaxTasks)));
    EXPECT_TRUE(tasks.crankId(link, "m" + std::to_string(3 * UpstreamTasks::kMaxTasks)));
}

TEST(UpstreamTasksTest, SettledResultsAreKeptWithinTheirBytesAndAnOversizedOneIsRefused) {
    UpstreamLink link;
    UpstreamTasks tasks;
    const auto settled = tasks.settle(link, R"({"content":[]})", "ws", "s", "alice");
    ASSERT_TRUE(settled.ok());
    const auto route = tasks.find(*settled);
    ASSERT_TRUE(route.has_value());
    ASSERT_NE(route->settled, nullptr);
    EXPECT_EQ(*route->settled, R"({"content":[]})");
    EXPECT_TRUE(route->modern);
    EXPECT_GT(route->created_ms, 0);

    const auto huge = tasks.settle(
        link, std::string(UpstreamTasks::kMaxSettledBytesPerAgent + 1, ' '), "ws", "s", "alice");
    ASSERT_FALSE(huge.ok());
    EXPECT_NE(huge.error().message.find("without a task"), std::string::npos);

    // Mallory's results past her share push out her own oldest, not Alice's.
    const std::string big(UpstreamTasks::kMaxSettledBytesPerAgent / 4, 'x');
    const std::string mallorysFirst = *tasks.settle(link, big, "ws", "s", "mallory");
    for (int i = 0; i < 12; ++i) {
        ASSERT_TRUE(tasks.settle(link, big, "ws", "s", "mallory").ok());
    }
    EXPECT_FALSE(tasks.find(mallorysFirst).has_value());
    EXPECT_TRUE(tasks.find(*settled).has_value());

    // Past the node's bytes the oldest settled results go, not the tasks that hold none.
    const std::string carols = tasks.add(link, "carol-1", "ws", "s", "carol");
    const std::string full(UpstreamTasks::kMaxSettledBytesPerAgent - 16, 'y');
    for (std::size_t agent = 0;
         agent < UpstreamTasks::kMaxSettledBytes / UpstreamTasks::kMaxSettledBytesPerAgent + 2;
         ++agent) {
        ASSERT_TRUE(tasks.settle(link, full, "ws", "s", "agent-" + std::to_string(agent)).ok());
    }
    EXPECT_TRUE(tasks.find(carols).has_value());
    EXPECT_FALSE(tasks.find(*settled).has_value());
}

TEST(UpstreamTasksTest, ACreatedTaskIsAdoptedUnderCranksIdOnlyForACallerThatDeclaredIt) {
    UpstreamLink link;
    link.config.name = "up";
    UpstreamTasks tasks;
    const std::string created =
        R"({"resultType":"task","taskId":"u-7","status":"working","ttlMs":60000})";
    const auto adopted = tasks.adoptCreated(link, created, "ws", "alice", true);
    ASSERT_TRUE(adopted.ok());
    const auto id = tasks.crankId(link, "u-7");
    ASSERT_TRUE(id.has_value());
    EXPECT_EQ(*adopted, R"({"resultType":"task","taskId":")" + id->first +
                            R"(","status":"working","ttlMs":60000})");
    EXPECT_TRUE(tasks.find(id->first)->modern);

    // Nobody asked for it: refused, never passed on with the upstream's id.
    const auto unasked = tasks.adoptCreated(link, created, "ws", "alice", false);
    ASSERT_FALSE(unasked.ok());
    EXPECT_NE(unasked.error().message.find("did not ask for"), std::string::npos);
    // A task without an id, or with one past the bound; a result spelled with escapes.
    EXPECT_FALSE(tasks.adoptCreated(link, R"({"resultType":"task"})", "ws", "a", true).ok());
    EXPECT_FALSE(tasks
                     .adoptCreated(link,
                                   R"({"resultType":"task","taskId":")" +
                                       std::string(UpstreamTasks::kMaxUpstreamIdBytes + 1, 'i') +
                                       R"("})",
                                   "ws", "a", true)
                     .ok());
    const auto escaped =
        tasks.adoptCreated(link, R"({"resultType":"task","taskId":"u-8"})", "ws", "a", true);
    ASSERT_TRUE(escaped.ok());
    EXPECT_EQ(escaped->find("u-8"), std::string::npos);
    // Any other result as it came.
    EXPECT_EQ(*tasks.adoptCreated(link, R"({"content":[{"type":"text","text":"task"}]})", "ws", "a",
                                  false),
              R"({"content":[{"type":"text","text":"task"}]})");
}

TEST(UpstreamTasksTest, RenamingReplacesTheIdEverywhereOrRefusesAnUnreadableAnswer) {
    EXPECT_EQ(withTaskId(R"({"task":{"taskId":"up"},"_meta":{"x":{"taskId":"up"}},"o":"up"})", "up",
                         "up-crank"),
              R"({"task":{"taskId":"up-crank"},"_meta":{"x":{"taskId":"up-crank"}},"o":"up"})");
    // Not JSON, or nested past the bound: no text at all, never the upstream's id unchanged.
    EXPECT_FALSE(withTaskId(R"({"task":{"taskId":"up"})", "up", "c").has_value());
    EXPECT_FALSE(withTaskId(std::string(1000, '[') + std::string(1000, ']'), "up", "c"));
}

TEST(UpstreamTasksTest, ARequestToTheClientCarriesCrankIdInItsRelatedTask) {
    UpstreamLink link;
    UpstreamTasks tasks;
    const std::string id = tasks.add(link, "up-1", "ws", "s", "a");
    const std::string params =
        R"({"message":"?","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-1"}}})";
    EXPECT_EQ(tasks.toClientIds(link, params, "a"),
              R"({"message":"?","_meta":{"io.modelcontextprotocol/related-task":{"taskId":")" + id +
                  R"("}}})");
    EXPECT_EQ(tasks.toClientIds(link, R"({"message":"no task"})", "a"), R"({"message":"no task"})");
    // Another agent's task, or one crank does not know: no related-task at all (never the
    // upstream's id); params naming a task that cannot be read: not relayed.
    EXPECT_EQ(tasks.toClientIds(link, params, "b"), R"({"message":"?","_meta":{}})");
    EXPECT_EQ(
        tasks.toClientIds(
            link, R"({"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-9"}}})", "a"),
        R"({"_meta":{}})");
    EXPECT_FALSE(tasks.toClientIds(link, R"({"taskId":"up-1")", "a").has_value());
}

TEST(UpstreamTasksTest, AnIdTheUpstreamGivesAgainIsANewTaskNeverAnotherAgentsOld) {
    UpstreamLink link;
    UpstreamTasks tasks;
    const std::string alices = tasks.add(link, "1", "ws", "s-a", "alice");
    // The upstream restarted and numbers its tasks from 1 again: Bob's task is his alone.
    const std::string bobs = tasks.add(link, "1", "ws", "s-b", "bob");
    EXPECT_NE(bobs, alices);
    EXPECT_FALSE(tasks.find(alices).has_value());
    ASSERT_TRUE(tasks.find(bobs).has_value());
    EXPECT_EQ(tasks.find(bobs)->agent, "bob");
    EXPECT_EQ(tasks.crankId(link, "1")->first, bobs);
}

TEST(UpstreamTasksTest, OneWaiterPerTask) {
    UpstreamTasks tasks;
    {
        const UpstreamTasks::Wait first(tasks, "up-1");
        EXPECT_TRUE(first.held());
        const UpstreamTasks::Wait second(tasks, "up-1");
        EXPECT_FALSE(second.held());
        EXPECT_TRUE(UpstreamTasks::Wait(tasks, "up-2").held());
    }
    EXPECT_TRUE(UpstreamTasks::Wait(tasks, "up-1").held());  // free again once the first went
}

}  // namespace
}  // namespace crank::federation
