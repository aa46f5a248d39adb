// reservedCalls and isolationWarnings: call slots kept per workspace, and the limits that cannot
// keep workspaces apart.
#include "config/isolation_check.h"

#include <string>

#include <gtest/gtest.h>

#include "config/config_loader.h"

namespace crank::config {
namespace {

Config load(const std::string& text) {
    LoadResult result = loadConfigText(text, "test.json", {});
    EXPECT_TRUE(result.errors.empty())
        << (result.errors.empty() ? "" : result.errors[0].toString());
    return result.config.value_or(Config{});
}

TEST(IsolationCheck, OneWorkspaceReservesNothingAndNeedsNoWarning) {
    const Config c = load("{}");
    EXPECT_EQ(reservedCalls(c).at("default"), 0);
    EXPECT_TRUE(isolationWarnings(c).empty());
}

TEST(IsolationCheck, SeveralWorkspacesReserveEqualSharesOfHalfTheSlots) {
    // 16 threads: 12 call slots; 3 workspaces reserve 12 / 6 = 2 each.
    const Config c = load(R"({"auth": {"workspaces": [{"id": "a"}, {"id": "b"}]}})");
    const auto reserved = reservedCalls(c);
    EXPECT_EQ(reserved.at("default"), 2);
    EXPECT_EQ(reserved.at("a"), 2);
    EXPECT_EQ(reserved.at("b"), 2);
    EXPECT_TRUE(isolationWarnings(c).empty());
}

TEST(IsolationCheck, TooManyWorkspacesForTheSlotsReserveNothingAndAreWarnedAbout) {
    const Config c = load(R"({"server": {"threads": 4},
        "auth": {"workspaces": [{"id": "a"}, {"id": "b"}]}})");  // 2 slots, 3 workspaces
    EXPECT_EQ(reservedCalls(c).at("a"), 0);
    const auto warnings = isolationWarnings(c);
    ASSERT_EQ(warnings.size(), 3u);
    EXPECT_NE(warnings[0].find("reserves no call slots"), std::string::npos) << warnings[0];
}

TEST(IsolationCheck, ExplicitReservationsBeyondTheSlotsAreWarnedAbout) {
    const Config c = load(R"({"auth": {"workspaces": [
        {"id": "a", "limits": {"reserved_calls": 10}},
        {"id": "b", "limits": {"reserved_calls": 5}}]}})");
    const auto warnings = isolationWarnings(c);
    ASSERT_FALSE(warnings.empty());
    EXPECT_NE(warnings[0].find("reserve 17 call slots in all"), std::string::npos) << warnings[0];
}

TEST(IsolationCheck, AnAgentCannotReserveCalls) {
    const LoadResult result = loadConfigText(
        R"({"auth": {"agents": [{"id": "x", "limits": {"reserved_calls": 1}}]}})", "t.json", {});
    ASSERT_FALSE(result.errors.empty());
    EXPECT_NE(result.errors[0].toString().find("reserved_calls"), std::string::npos);
}

}  // namespace
}  // namespace crank::config
