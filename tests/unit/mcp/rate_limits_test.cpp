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

TEST_F(RateLimitsTest, RefilledBucketsAreDroppedBeyondTheBound) {
    RateLimits rates(config::AuthConfig{}, clock());
    const config::RateLimit one{1, 1};
    const Caller caller{"default", ""};
    for (std::size_t i = 0; i < RateLimits::kMaxIdleBuckets; ++i) {
        EXPECT_FALSE(rates.take(caller, "tool" + std::to_string(i), one));
    }
    EXPECT_EQ(rates.buckets(), RateLimits::kMaxIdleBuckets);
    // Still spent: nothing to drop, the table grows by one.
    EXPECT_FALSE(rates.take(caller, "late", one));
    EXPECT_EQ(rates.buckets(), RateLimits::kMaxIdleBuckets + 1);
    now += 2s;  // every bucket refilled: dropped when the next one is made
    EXPECT_FALSE(rates.take(caller, "later", one));
    EXPECT_EQ(rates.buckets(), 1U);
    // A dropped bucket comes back full: nothing is let through twice.
    EXPECT_FALSE(rates.take(caller, "tool0", one));
    EXPECT_TRUE(rates.take(caller, "tool0", one));
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
