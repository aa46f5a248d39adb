// `tools` of an upstream: its allow and deny patterns and renames, read and refused by path.
#include <string>

#include <gtest/gtest.h>

#include "config/config_loader.h"

namespace crank::config {
namespace {

LoadResult loadUpstream(const std::string& tools) {
    return loadConfigText(
        R"({"upstreams": [{"name": "u", "config": {"command": "/bin/true"}, "tools": )" + tools +
            "}]}",
        "test.json", {});
}

std::string firstError(const LoadResult& result) {
    return result.errors.empty() ? "" : result.errors[0].toString();
}

TEST(ToolPolicyConfig, AllowDenyAndRenameAreRead) {
    const LoadResult result = loadUpstream(
        R"({"allow": ["get_*", "search"], "deny": ["get_secret*"], "rename": {"search": "find"}})");
    ASSERT_TRUE(result.errors.empty()) << firstError(result);
    ASSERT_EQ(result.config->upstreams.size(), 1U);
    const UpstreamConfig& u = result.config->upstreams[0];
    EXPECT_EQ(u.tools.allow, (std::vector<std::string>{"get_*", "search"}));
    EXPECT_EQ(u.tools.deny, (std::vector<std::string>{"get_secret*"}));
    EXPECT_EQ(u.tools.rename.at("search"), "find");
    EXPECT_EQ(u.publishedToolName("search"), "find");
    EXPECT_EQ(u.publishedToolName("get_user"), "u_get_user");
    EXPECT_EQ(u.toolFiltered("get_user"), "");
    EXPECT_NE(u.toolFiltered("get_secret"), "");
    EXPECT_NE(u.toolFiltered("other"), "");
}

TEST(ToolPolicyConfig, NoPolicyPublishesEveryTool) {
    const LoadResult result = loadUpstream("{}");
    ASSERT_TRUE(result.errors.empty()) << firstError(result);
    const UpstreamConfig& u = result.config->upstreams[0];
    EXPECT_EQ(u.toolFiltered("anything"), "");
    EXPECT_EQ(u.publishedToolName("anything"), "u_anything");
}

TEST(ToolPolicyConfig, ABadPolicyIsNamedByItsPath) {
    const struct {
        std::string tools;
        const char* says;
    } cases[] = {
        {R"("all")", "upstreams[0].tools"},
        {R"({"allow": "get_*"})", "upstreams[0].tools.allow"},
        {R"({"deny": [""]})", "upstreams[0].tools.deny[0]: expected a non-empty string"},
        {R"({"deny": [")" + std::string(300, 'x') + R"("]})", "upstreams[0].tools.deny[0]"},
        {R"({"deny": [7]})", "upstreams[0].tools.deny[0]"},
        {R"({"rename": ["a"]})", "upstreams[0].tools.rename: expected an object"},
        {R"({"rename": {"a": 1}})", "upstreams[0].tools.rename.a: expected the published name"},
        {R"({"rename": {"a": "has space"}})", "upstreams[0].tools.rename.a: a tool name"},
        {R"({"rename": {"a": "x", "b": "x"}})",
         "upstreams[0].tools.rename.b: \"x\" is the published name of another tool"},
        {R"({"alow": ["x"]})", "alow"},
    };
    for (const auto& c : cases) {
        const LoadResult result = loadUpstream(c.tools);
        ASSERT_FALSE(result.errors.empty()) << c.tools;
        EXPECT_NE(firstError(result).find(c.says), std::string::npos)
            << c.tools << ": " << firstError(result);
    }
}

TEST(ToolPolicyConfig, ListsAreBounded) {
    std::string many = "[";
    for (int i = 0; i < 257; ++i) {
        many += (i == 0 ? "\"p" : ",\"p") + std::to_string(i) + "\"";
    }
    many += "]";
    const LoadResult result = loadUpstream(R"({"allow": )" + many + "}");
    ASSERT_FALSE(result.errors.empty());
    EXPECT_NE(firstError(result).find("upstreams[0].tools.allow"), std::string::npos)
        << firstError(result);
}

}  // namespace
}  // namespace crank::config
