// The method registry: the one place that knows each MCP method's era, handler, cache hint,
// Mcp-Name member, and whether it may ask the client or is answered from memory.

#include "mcp/wire/method_registry.h"

#include <set>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace crank::mcp {
namespace {

TEST(MethodRegistryTest, KnowsEveryMethodOfBothErasAndNothingElse) {
    for (const char* method : {"initialize",
                               "ping",
                               "logging/setLevel",
                               "server/discover",
                               "subscriptions/listen",
                               "tools/list",
                               "tools/call",
                               "tasks/get",
                               "tasks/list",
                               "tasks/cancel",
                               "tasks/result",
                               "tasks/update",
                               "resources/list",
                               "resources/read",
                               "resources/templates/list",
                               "resources/subscribe",
                               "resources/unsubscribe",
                               "prompts/list",
                               "prompts/get",
                               "completion/complete",
                               "notifications/initialized",
                               "notifications/cancelled",
                               "notifications/progress",
                               "notifications/roots/list_changed"}) {
        const MethodInfo* info = findMethod(method);
        ASSERT_NE(info, nullptr) << method;
        EXPECT_EQ(info->name, method);
        EXPECT_TRUE(info->legacy || info->modern) << method;
    }
    for (const char* unknown : {"", "tools", "tools/call/", "Tools/call", "sampling/createMessage",
                                "elicitation/create", "tasks/foo"}) {
        EXPECT_EQ(findMethod(unknown), nullptr) << unknown;
    }
}

TEST(MethodRegistryTest, TheEraOfEachMethod) {
    for (const char* removed : {"initialize", "ping", "logging/setLevel", "resources/subscribe",
                                "resources/unsubscribe", "tasks/list", "tasks/result",
                                "notifications/initialized", "notifications/roots/list_changed"}) {
        EXPECT_TRUE(findMethod(removed)->legacy) << removed;
        EXPECT_FALSE(findMethod(removed)->modern) << removed;
    }
    for (const char* added : {"server/discover", "subscriptions/listen", "tasks/update"}) {
        EXPECT_FALSE(findMethod(added)->legacy) << added;
        EXPECT_TRUE(findMethod(added)->modern) << added;
    }
}

TEST(MethodRegistryTest, CacheHintsNameMembersAndQuestions) {
    std::set<std::string_view> cacheable;
    std::set<std::string_view> asking;
    std::set<std::string_view> fromMemory;
    for (const char* method :
         {"server/discover", "tools/list", "tools/call", "resources/list", "resources/read",
          "resources/templates/list", "prompts/list", "prompts/get", "completion/complete",
          "tasks/get", "subscriptions/listen"}) {
        const MethodInfo* info = findMethod(method);
        if (info->cache != MethodCache::none) {
            cacheable.insert(info->name);
        }
        if (info->may_ask) {
            asking.insert(info->name);
        }
        if (info->from_memory) {
            fromMemory.insert(info->name);
        }
    }
    EXPECT_EQ(cacheable, (std::set<std::string_view>{"server/discover", "tools/list",
                                                     "resources/list", "resources/read",
                                                     "resources/templates/list", "prompts/list"}));
    EXPECT_EQ(asking, (std::set<std::string_view>{"tools/call", "resources/read", "prompts/get"}));
    EXPECT_EQ(fromMemory, (std::set<std::string_view>{"resources/list", "resources/templates/list",
                                                      "prompts/list"}));
    EXPECT_EQ(findMethod("resources/read")->cache, MethodCache::content);
    EXPECT_EQ(findMethod("server/discover")->cache, MethodCache::list);
    EXPECT_EQ(findMethod("tools/call")->name_member, "name");
    EXPECT_EQ(findMethod("prompts/get")->name_member, "name");
    EXPECT_EQ(findMethod("resources/read")->name_member, "uri");
    EXPECT_EQ(findMethod("tasks/update")->name_member, "taskId");
    EXPECT_EQ(findMethod("tools/list")->name_member, "");
    EXPECT_EQ(findMethod("tools/call")->handler, MethodHandler::tools_call);
    EXPECT_EQ(findMethod("completion/complete")->handler, MethodHandler::catalog);
}

TEST(MethodRegistryTest, TheCapabilityOfEachRequestToAClient) {
    EXPECT_STREQ(clientCapabilityFor("sampling/createMessage"), "sampling");
    EXPECT_STREQ(clientCapabilityFor("elicitation/create"), "elicitation");
    EXPECT_STREQ(clientCapabilityFor("roots/list"), "roots");
    EXPECT_EQ(clientCapabilityFor("tools/call"), nullptr);
    EXPECT_EQ(clientCapabilityFor(""), nullptr);
}

}  // namespace
}  // namespace crank::mcp
