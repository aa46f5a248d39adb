// A 2026-era upstream's lists kept by their ttlMs (list_refresh.h): each list fetched is due
// again once its ttlMs ran out, never sooner than the upstream's min_list_refresh_ms, and a list
// without ttlMs (or a 2025 upstream's) only when the upstream says it changed.

#include <chrono>
#include <optional>

#include <gtest/gtest.h>

#include "federation/list_refresh.h"
#include "federation/upstream_link.h"

namespace crank::federation {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

TEST(ListTtlTest, AListIsDueOnceItsTtlRanOutButNeverBeforeTheFloor) {
    UpstreamLink link;
    link.config.min_list_refresh_ms = 60'000;
    FetchedLists fetched;
    fetched.fetched = kTools | kResources | kPrompts;
    fetched.tools.emplace();
    fetched.ttl_ms[ttlIndex(kTools)] = 5'000;  // below the floor: 60 s
    fetched.ttl_ms[ttlIndex(kPrompts)] = 120'000;
    const Clock::time_point before = Clock::now();
    fetched.apply(link);

    std::optional<Clock::time_point> next;
    EXPECT_EQ(staleLists(link, before + milliseconds(59'000), next), 0);
    ASSERT_TRUE(next.has_value());
    EXPECT_GE(*next, before + milliseconds(60'000));
    EXPECT_LT(*next, before + milliseconds(61'000));

    next.reset();
    EXPECT_EQ(staleLists(link, before + milliseconds(61'000), next), kTools);
    ASSERT_TRUE(next.has_value());  // the prompts, later
    EXPECT_GE(*next, before + milliseconds(120'000));

    next.reset();
    EXPECT_EQ(staleLists(link, before + milliseconds(121'000), next), kPrompts);
    EXPECT_FALSE(next.has_value());  // resources had no ttlMs: never due by time
    EXPECT_EQ(staleLists(link, before + milliseconds(999'000), next), 0);
}

TEST(ListTtlTest, AListFetchedAgainWithoutTtlIsNoLongerDue) {
    UpstreamLink link;
    link.config.min_list_refresh_ms = 1'000;
    FetchedLists first;
    first.fetched = kTools;
    first.ttl_ms[ttlIndex(kTools)] = 2'000;
    first.apply(link);
    FetchedLists second;  // the upstream stopped saying how long
    second.fetched = kTools;
    second.apply(link);
    std::optional<Clock::time_point> next;
    EXPECT_EQ(staleLists(link, Clock::now() + milliseconds(10'000), next), 0);
    EXPECT_FALSE(next.has_value());
}

TEST(ListTtlTest, AnUpstreamRunsTasksWhenItsStatusSays2026AndTheExtension) {
    EXPECT_TRUE(runsTasks(
        R"({"era":"2026","capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}})"));
    EXPECT_FALSE(runsTasks(
        R"({"era":"2025","capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}})"));
    EXPECT_FALSE(runsTasks(R"({"era":"2026","capabilities":{"tasks":{}}})"));
    EXPECT_FALSE(runsTasks(R"({"era":"2026","capabilities":null})"));
    EXPECT_FALSE(runsTasks(R"({"era":"2026","capabilities":{"extensions":[]}})"));
    EXPECT_FALSE(runsTasks("not json"));
}

}  // namespace
}  // namespace crank::federation
