// `rate` of workspaces' and agents' limits and of operations: read, defaulted, and refused with
// the path and the reason.
#include <string>

#include <gtest/gtest.h>

#include "config/config_loader.h"

namespace crank::config {
namespace {

LoadResult loadText(const std::string& text) {
    return loadConfigText(text, "test.json", {});
}

std::string firstError(const LoadResult& result) {
    return result.errors.empty() ? "" : result.errors[0].toString();
}

TEST(RateLimitConfig, WorkspacesAgentsAndOperationsReadTheirRates) {
    const LoadResult result = loadText(R"({
        "auth": {"workspaces": [{"id": "w", "limits": {"rate": {"calls_per_second": 5,
                                                                  "burst": 10}}}],
                 "agents": [{"id": "a", "workspace": "w",
                             "limits": {"rate": {"calls_per_second": 0.5}}}]},
        "operations": [{"name": "op", "workspace": "w", "protocol": "rest",
                        "description": "d", "config": {"url": "http://127.0.0.1:1/"},
                        "rate": {"calls_per_second": 2.5}}],
        "upstreams": [{"name": "u", "config": {"command": "/bin/true"},
                       "rate": {"calls_per_second": 1, "burst": 4}}]})");
    ASSERT_TRUE(result.errors.empty()) << firstError(result);
    const Config& c = *result.config;
    const auto ws = std::find_if(c.auth.workspaces.begin(), c.auth.workspaces.end(),
                                 [](const Workspace& w) { return w.id == "w"; });
    ASSERT_NE(ws, c.auth.workspaces.end());
    ASSERT_TRUE(ws->limits.rate);
    EXPECT_EQ(ws->limits.rate->calls_per_second, 5);
    EXPECT_EQ(ws->limits.rate->burst, 10);
    ASSERT_EQ(c.auth.agents.size(), 1U);
    ASSERT_TRUE(c.auth.agents[0].limits.rate);
    EXPECT_EQ(c.auth.agents[0].limits.rate->calls_per_second, 0.5);
    EXPECT_EQ(c.auth.agents[0].limits.rate->burst, 1);  // the rate rounded up, at least 1
    ASSERT_EQ(c.operations.size(), 1U);
    ASSERT_TRUE(c.operations[0].rate);
    EXPECT_EQ(c.operations[0].rate->burst, 3);
    ASSERT_EQ(c.upstreams.size(), 1U);
    ASSERT_TRUE(c.upstreams[0].rate);
    EXPECT_EQ(c.upstreams[0].rate->burst, 4);
}

TEST(RateLimitConfig, NoRateIsNoBound) {
    const LoadResult result = loadText("{}");
    ASSERT_TRUE(result.errors.empty()) << firstError(result);
    for (const Workspace& ws : result.config->auth.workspaces) {
        EXPECT_FALSE(ws.limits.rate) << ws.id;
    }
}

TEST(RateLimitConfig, ABadRateIsNamedByItsPath) {
    const struct {
        const char* rate;
        const char* says;
    } cases[] = {
        {R"({"burst": 5})", "limits.rate.calls_per_second: is required"},
        {R"({"calls_per_second": 0})", "limits.rate.calls_per_second: expected a number"},
        {R"({"calls_per_second": -1})", "limits.rate.calls_per_second: expected a number"},
        {R"({"calls_per_second": "5"})", "limits.rate.calls_per_second: expected a number"},
        {R"({"calls_per_second": 5, "burst": 0})", "limits.rate.burst"},
        {R"({"calls_per_second": 5, "burst": 2.5})", "limits.rate.burst"},
        {R"({"calls_per_second": 5, "brust": 2})", "brust"},
        {R"(5)", "limits.rate"},
    };
    for (const auto& c : cases) {
        const LoadResult result =
            loadText(R"({"auth": {"workspaces": [{"id": "w", "limits": {"rate": )" +
                     std::string(c.rate) + "}}]}}");
        ASSERT_FALSE(result.errors.empty()) << c.rate;
        EXPECT_NE(firstError(result).find(c.says), std::string::npos)
            << c.rate << ": " << firstError(result);
    }
}

}  // namespace
}  // namespace crank::config
