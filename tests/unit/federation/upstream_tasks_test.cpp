// Upstream tasks under crank's own ids: registered once, found only by crank's id, bounded, and
// never shown to a client under the upstream's id, even when an answer cannot be read.

#include "federation/upstream_tasks.h"

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
    EXPECT_EQ(tasks.add(link, "t1", "ws", "session-1", "alice"), id);  // once
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
    const std::string first = tasks.add(link, "t0", "ws", "s", "a");
    for (std::size_t i = 1; i <= UpstreamTasks::kMaxTasks; ++i) {
        tasks.add(link, "t" + std::to_string(i), "ws", "s", "a");
    }
    EXPECT_FALSE(tasks.find(first).has_value());
    EXPECT_FALSE(tasks.crankId(link, "t0").has_value());
    EXPECT_TRUE(tasks.crankId(link, "t1").has_value());
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
    EXPECT_EQ(tasks.toClientIds(link, params),
              R"({"message":"?","_meta":{"io.modelcontextprotocol/related-task":{"taskId":")" + id +
                  R"("}}})");
    EXPECT_EQ(tasks.toClientIds(link, R"({"message":"no task"})"), R"({"message":"no task"})");
}

}  // namespace
}  // namespace crank::federation
