// RateLimits: token buckets per workspace, agent and tool, on a clock the test moves.
#include "mcp/rate_limits.h"

#include <chrono>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "mcp/tool_registry.h"

namespace crank::mcp {
namespace {

using namespace std::chrono_literals;

class RateLimitsTest : public ::testing::Test {
protected:
    RateLimits::Clock::time_point now{std::chrono::seconds(1000)};
    RateLimits::Now clock() {
        return [this] { return now; };
    }

    static config::AuthConfig auth(std::optional<config::RateLimit> workspace,
                                   std::optional<config::RateLimit> agent) {
        config::AuthConfig a;
        config::Workspace ws;
        ws.id = "default";
        ws.limits.rate = workspace;
        a.workspaces.push_back(ws);
        config::Agent ag;
        ag.id = "bot";
        ag.workspace = "default";
        ag.limits.rate = agent;
        a.agents.push_back(ag);
        return a;
    }

    /// How many of `n` calls are let through now.
    static int through(RateLimits& rates, const Caller& caller, int n, std::string_view tool = "t",
                       std::optional<config::RateLimit> rate = std::nullopt) {
        int ok = 0;
        for (int i = 0; i < n; ++i) {
            ok += rates.take(caller, tool, rate) ? 0 : 1;
        }
        return ok;
    }
};

TEST_F(RateLimitsTest, ABurstThenTheRate) {
    RateLimits rates(auth(config::RateLimit{5, 5}, std::nullopt), clock());
    const Caller caller{"default", ""};
    EXPECT_EQ(through(rates, caller, 20), 5);  // the burst
    now += 1s;
    EXPECT_EQ(through(rates, caller, 20), 5);  // five a second
    now += 200ms;
    EXPECT_EQ(through(rates, caller, 20), 1);
    now += 100ms;
    EXPECT_EQ(through(rates, caller, 20), 0);  // half a call: not yet
    now += 100ms;
    EXPECT_EQ(through(rates, caller, 20), 1);
    now += 1h;
    EXPECT_EQ(through(rates, caller, 20), 5);  // never more than the burst
}

TEST_F(RateLimitsTest, AReloadsRatesApplyToTheBucketsThereAndToNewOnes) {
    RateLimits rates(auth(config::RateLimit{1, 2}, std::nullopt), clock());
    const Caller bot{"default", "bot"};
    EXPECT_EQ(through(rates, bot, 5), 2);
    // The workspace's rate goes; the agent gets one.
    rates.setRates(auth(std::nullopt, config::RateLimit{10, 3}));
    now += 1s;
    EXPECT_EQ(through(rates, bot, 20), 3);  // the agent's burst, the workspace's bucket unused
    now += 100ms;
    EXPECT_EQ(through(rates, bot, 20), 1);  // ten a second
    rates.setRates(auth(std::nullopt, std::nullopt));
    EXPECT_EQ(through(rates, bot, 20), 20);  // no rate any more
}

TEST_F(RateLimitsTest, TheRefusalNamesTheLimitAndWhenToRetry) {
    RateLimits rates(auth(std::nullopt, config::RateLimit{2, 1}), clock());
    const Caller bot{"default", "bot"};
    EXPECT_FALSE(rates.take(bot, "t", std::nullopt));
    const std::optional<std::string> refusal = rates.take(bot, "t", std::nullopt);
    ASSERT_TRUE(refusal);
    EXPECT_NE(refusal->find("agent bot's rate limit"), std::string::npos) << *refusal;
    EXPECT_NE(refusal->find("2 calls a second, 1 at once"), std::string::npos) << *refusal;
    EXPECT_NE(refusal->find("retry in 500 ms"), std::string::npos) << *refusal;
    now += 300ms;
    EXPECT_NE(rates.take(bot, "t", std::nullopt)->find("retry in 200 ms"), std::string::npos);
}

TEST_F(RateLimitsTest, EveryBucketOrNone) {
    // The agent's bucket is spent: the workspace's is not charged for the refused calls.
    RateLimits rates(auth(config::RateLimit{1, 3}, config::RateLimit{1, 1}), clock());
    const Caller bot{"default", "bot"};
    const Caller other{"default", "other"};  // no rate of its own
    EXPECT_EQ(through(rates, bot, 10), 1);
    EXPECT_EQ(through(rates, other, 10), 2);  // what the workspace had left
    now += 1s;
    const std::optional<std::string> refusal = rates.take(other, "t", std::nullopt);
    EXPECT_FALSE(refusal);
    EXPECT_NE(rates.take(bot, "t", std::nullopt)->find("workspace default's rate limit"),
              std::string::npos);
}

TEST_F(RateLimitsTest, EachToolItsOwnBucketPerWorkspace) {
    RateLimits rates(config::AuthConfig{}, clock());
    const config::RateLimit two{2, 2};
    const Caller a{"default", "a"};
    const Caller b{"default", "b"};
    const Caller elsewhere{"other", "a"};
    EXPECT_EQ(through(rates, a, 5, "x", two), 2);
    EXPECT_EQ(through(rates, b, 5, "x", two), 0);  // every caller of the workspace together
    EXPECT_EQ(through(rates, a, 5, "y", two), 2);
    EXPECT_EQ(through(rates, elsewhere, 5, "x", two), 2);
    EXPECT_EQ(through(rates, a, 5, "z", std::nullopt), 5);  // no rate: no bucket
    EXPECT_EQ(rates.buckets(), 3U);
}

TEST_F(RateLimitsTest, NoRateNoBucket) {
    RateLimits rates(auth(std::nullopt, std::nullopt), clock());
    EXPECT_EQ(through(rates, Caller{"default", "bot"}, 1000), 1000);
    EXPECT_EQ(rates.buckets(), 0U);
}

TEST_F(RateLimitsTest, RefilledBucketsAreDroppedOnceTheTableHasGrown) {
    RateLimits rates(config::AuthConfig{}, clock());
    const config::RateLimit one{1, 1};
    const Caller caller{"default", ""};
    for (std::size_t i = 0; i < RateLimits::kMaxIdleBuckets; ++i) {
        EXPECT_FALSE(rates.take(caller, "tool" + std::to_string(i), one));
    }
    // Every one spent: nothing could be dropped, the table grows.
    EXPECT_FALSE(rates.take(caller, "late", one));
    EXPECT_EQ(rates.buckets(), RateLimits::kMaxIdleBuckets + 1);
    now += 2s;  // every bucket refilled: dropped at the next look, once the table has doubled
    std::size_t before = rates.buckets();
    std::size_t added = 0;
    for (; added < 2 * RateLimits::kMaxIdleBuckets && rates.buckets() >= before; ++added) {
        before = rates.buckets();
        EXPECT_FALSE(rates.take(caller, "new" + std::to_string(added), one));
    }
    // The refilled ones went; the new ones (spent) stay.
    EXPECT_EQ(rates.buckets(), added) << "after " << added << " new buckets";
    EXPECT_LE(before, 2 * RateLimits::kMaxIdleBuckets);
    // A dropped bucket comes back full: nothing is let through twice.
    EXPECT_FALSE(rates.take(caller, "tool0", one));
    EXPECT_TRUE(rates.take(caller, "tool0", one));
}

TEST_F(RateLimitsTest, NeverMoreThanTheHardBoundOfBuckets) {
    RateLimits rates(config::AuthConfig{}, clock());
    const config::RateLimit one{1, 1};
    const Caller caller{"default", ""};
    for (std::size_t i = 0; i < RateLimits::kMaxBuckets + 100; ++i) {
        EXPECT_FALSE(rates.take(caller, std::to_string(i), one));
        if (i % 1024 == 0) {
            now += 1ms;  // the least recently used are the oldest
        }
    }
    EXPECT_LE(rates.buckets(), RateLimits::kMaxBuckets);
    EXPECT_GE(rates.buckets(), RateLimits::kMaxBuckets / 2);
    // The newest are kept (still spent); the oldest were dropped (full again).
    EXPECT_TRUE(rates.take(caller, std::to_string(RateLimits::kMaxBuckets + 99), one));
    EXPECT_FALSE(rates.take(caller, "0", one));
}

TEST_F(RateLimitsTest, ABucketThatAPruneDropsIsStillCharged) {
    // The workspace's bucket is full when a new tool's bucket makes the table prune: it is dropped
    // and made again before any bucket is held, and the call is charged to it all the same.
    RateLimits rates(auth(config::RateLimit{0.001, 2}, std::nullopt), clock());
    const config::RateLimit spent{0.001, 1};
    const Caller caller{"default", ""};
    const Caller elsewhere{"other", ""};  // no workspace rate there
    for (std::size_t i = 0; i + 1 < RateLimits::kMaxIdleBuckets; ++i) {
        EXPECT_FALSE(rates.take(elsewhere, "t" + std::to_string(i), spent));
    }
    EXPECT_FALSE(rates.take(caller, "first", std::nullopt));  // 2 -> 1; table at the bound
    EXPECT_FALSE(rates.take(caller, "fresh", spent));         // a prune; 1 -> 0
    const std::optional<std::string> third = rates.take(caller, "fresh2", std::nullopt);
    ASSERT_TRUE(third);
    EXPECT_NE(third->find("workspace default's rate limit"), std::string::npos) << *third;
}

TEST_F(RateLimitsTest, ATimeReadBeforeALaterOneCountsNothingTwice) {
    // Threads read the clock in any order: a bucket's time never moves back, else the time
    // between would be refilled twice.
    RateLimits rates(config::AuthConfig{}, clock());
    const config::RateLimit one{1, 1};
    const Caller caller{"default", ""};
    const auto start = now;
    EXPECT_FALSE(rates.take(caller, "t", one));
    now = start + 1s;
    EXPECT_FALSE(rates.take(caller, "t", one));
    now = start + 500ms;  // an earlier reading, late
    EXPECT_TRUE(rates.take(caller, "t", one));
    now = start + 1500ms;
    EXPECT_TRUE(rates.take(caller, "t", one));  // half a call since start + 1 s
    now = start + 2s;
    EXPECT_FALSE(rates.take(caller, "t", one));
}

TEST_F(RateLimitsTest, TheRetryIsTheLongestWaitOfTheEmptyBuckets) {
    RateLimits rates(auth(config::RateLimit{10, 1}, config::RateLimit{1, 1}), clock());
    const Caller bot{"default", "bot"};
    EXPECT_FALSE(rates.take(bot, "t", std::nullopt));
    const std::optional<std::string> refusal = rates.take(bot, "t", std::nullopt);
    ASSERT_TRUE(refusal);
    EXPECT_NE(refusal->find("agent bot's rate limit"), std::string::npos) << *refusal;
    EXPECT_NE(refusal->find("retry in 1000 ms"), std::string::npos) << *refusal;
}

TEST_F(RateLimitsTest, ARegistryRefusesACallOverItsToolsRate) {
    auto rates = std::make_shared<RateLimits>(config::AuthConfig{}, clock());
    FunctionToolRegistry registry;
    registry.limitRates(rates);
    int ran = 0;
    ToolDefinition limited;
    limited.name = "limited";
    limited.rate = config::RateLimit{1, 2};
    registry.add(limited, [&ran](std::string_view, ToolCall&) -> Result<ToolResult> {
        ++ran;
        return ToolResult{};
    });
    class Call final : public ToolCall {
    public:
        bool cancelled() const override { return false; }
        void progress(double, std::optional<double>, std::string_view) override {}
        void log(LogLevel, std::string_view, std::string_view) override {}
        Caller caller() const override { return {"default", "a"}; }
    } call;
    for (int i = 0; i < 5; ++i) {
        Result<ToolResult> result = registry.call("limited", "{}", call);
        ASSERT_TRUE(result);
        EXPECT_EQ(result->is_error, i >= 2) << i;
        if (i >= 2) {
            EXPECT_NE(result->content_json.find("tool limited's rate limit"), std::string::npos)
                << result->content_json;
        }
    }
    EXPECT_EQ(ran, 2);
}

}  // namespace
}  // namespace crank::mcp
