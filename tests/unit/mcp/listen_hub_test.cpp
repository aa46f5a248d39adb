// subscriptions/listen: the filter a listen asks with, its acknowledgement, and the tag every
// notification on it carries.

#include "mcp/modern/listen_hub.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace crank::mcp::test {
namespace {

rapidjson::Document parsed(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.c_str());
    EXPECT_FALSE(doc.HasParseError()) << json;
    return doc;
}

TEST(ListenHubTest, ReadsTheKindsAskedFor) {
    auto filter =
        parseListenFilter(R"({"notifications":{"toolsListChanged":true,"promptsListChanged":false,)"
                          R"("resourceSubscriptions":["file:///a"],"taskIds":["x"]},"_meta":{}})");
    ASSERT_TRUE(filter);
    EXPECT_TRUE(filter->tools_list_changed);
    EXPECT_FALSE(filter->prompts_list_changed);
    EXPECT_FALSE(filter->resources_list_changed);
    EXPECT_EQ(filter->task_ids, std::vector<std::string>{"x"});
    EXPECT_EQ(filter->resource_uris, std::vector<std::string>{"file:///a"});
    for (const char* none : {"", "{}", R"({"notifications":null})", R"({"notifications":{}})"}) {
        auto empty = parseListenFilter(none);
        ASSERT_TRUE(empty) << none;
        EXPECT_FALSE(empty->tools_list_changed || empty->prompts_list_changed ||
                     empty->resources_list_changed);
    }
}

TEST(ListenHubTest, RefusesAMalformedFilterNamingTheMember) {
    const struct {
        const char* params;
        const char* names;
    } cases[] = {
        {R"({"notifications":[]})", "params.notifications must be an object"},
        {R"({"notifications":"all"})", "params.notifications must be an object"},
        {R"({"notifications":{"toolsListChanged":"yes"}})",
         "params.notifications.toolsListChanged must be a boolean"},
        {R"({"notifications":{"resourcesListChanged":1}})",
         "params.notifications.resourcesListChanged must be a boolean"},
        {R"({"notifications":{"taskIds":"t1"}})", "params.notifications.taskIds must be an array"},
        {R"({"notifications":{"taskIds":[1]}})", "params.notifications.taskIds must be an array"},
        {R"({"notifications":{"taskIds":[""]}})", "params.notifications.taskIds must be an array"},
        {R"({"notifications":{"resourceSubscriptions":{}}})",
         "params.notifications.resourceSubscriptions must be an array of at most 64 resource URIs"},
        {R"({"notifications":{"resourceSubscriptions":[null]}})",
         "params.notifications.resourceSubscriptions must be an array"},
        {R"({"notifications":{"resourceSubscriptions":["file:///a",""]}})",
         "params.notifications.resourceSubscriptions must be an array"},
        {"[1]", "params"},
        {R"({"notifications":{"toolsListChanged":true)", "params"},
    };
    for (const auto& c : cases) {
        auto filter = parseListenFilter(c.params);
        ASSERT_FALSE(filter) << c.params;
        EXPECT_NE(filter.error().message.find(c.names), std::string::npos)
            << filter.error().message;
    }
}

TEST(ListenHubTest, TaskIdsAreBoundedInCountAndLengthAndKeptOnce) {
    std::string ids;
    for (std::size_t i = 0; i <= kMaxListenTaskIds; ++i) {
        ids += (i == 0 ? "" : ",") + std::string("\"t") + std::to_string(i) + "\"";
    }
    EXPECT_FALSE(parseListenFilter(R"({"notifications":{"taskIds":[)" + ids + "]}}"));
    EXPECT_FALSE(
        parseListenFilter(R"({"notifications":{"taskIds":[")" + std::string(257, 'x') + R"("]}})"));
    auto repeated = parseListenFilter(R"({"notifications":{"taskIds":["a","b","a"]}})");
    ASSERT_TRUE(repeated);
    EXPECT_EQ(repeated->task_ids, (std::vector<std::string>{"a", "b"}));
}

TEST(ListenHubTest, ResourceSubscriptionsAreBoundedInCountAndLengthAndKeptOnce) {
    std::string uris;
    for (std::size_t i = 0; i <= kMaxListenResources; ++i) {
        uris += (i == 0 ? "" : ",") + std::string("\"file:///") + std::to_string(i) + "\"";
    }
    EXPECT_FALSE(
        parseListenFilter(R"({"notifications":{"resourceSubscriptions":[)" + uris + "]}}"));
    EXPECT_FALSE(parseListenFilter(R"({"notifications":{"resourceSubscriptions":[")" +
                                   std::string(kMaxListenUriBytes + 1, 'x') + R"("]}})"));
    EXPECT_TRUE(parseListenFilter(R"({"notifications":{"resourceSubscriptions":[")" +
                                  std::string(kMaxListenUriBytes, 'x') + R"("]}})"));
    auto repeated = parseListenFilter(
        R"({"notifications":{"resourceSubscriptions":["file:///a","file:///\u0061","x:b"]}})");
    ASSERT_TRUE(repeated);
    EXPECT_EQ(repeated->resource_uris, (std::vector<std::string>{"file:///a", "x:b"}));
}

TEST(ListenHubTest, ListensAreSubscribersByTheirKey) {
    EXPECT_EQ(listenSubscriber(42), "listen:42");
    EXPECT_NE(listenSubscriber(1), listenSubscriber(11));
}

TEST(ListenHubTest, AcknowledgesTheHonouredKindsWithTheListensId) {
    ListenFilter honoured;
    honoured.tools_list_changed = true;
    honoured.resources_list_changed = true;
    const auto doc = parsed(acknowledgement(honoured, R"("L-1")"));
    EXPECT_TRUE(doc["notifications"]["toolsListChanged"].GetBool());
    EXPECT_TRUE(doc["notifications"]["resourcesListChanged"].GetBool());
    EXPECT_FALSE(doc["notifications"].HasMember("promptsListChanged"));
    EXPECT_STREQ(doc["_meta"]["io.modelcontextprotocol/subscriptionId"].GetString(), "L-1");
    EXPECT_EQ(parsed(acknowledgement(ListenFilter{}, "7"))["notifications"].MemberCount(), 0U);
    ListenFilter tasks;
    tasks.task_ids = {"job_1", "job_2"};
    const auto withTasks = parsed(acknowledgement(tasks, "8"));
    ASSERT_TRUE(withTasks["notifications"]["taskIds"].IsArray());
    EXPECT_EQ(withTasks["notifications"]["taskIds"].Size(), 2U);
    EXPECT_STREQ(withTasks["notifications"]["taskIds"][1].GetString(), "job_2");
    ListenFilter resources;
    resources.resource_uris = {"file:///a", "x:\"b\""};
    const auto withResources = parsed(acknowledgement(resources, "9"));
    ASSERT_TRUE(withResources["notifications"]["resourceSubscriptions"].IsArray());
    EXPECT_STREQ(withResources["notifications"]["resourceSubscriptions"][1].GetString(), "x:\"b\"");
}

TEST(ListenHubTest, TagsNotificationsWithTheSubscriptionId) {
    const char* tag = "io.modelcontextprotocol/subscriptionId";
    const auto bare = parsed(tagged("notifications/tools/list_changed", "", "9"));
    EXPECT_STREQ(bare["method"].GetString(), "notifications/tools/list_changed");
    EXPECT_EQ(bare["params"]["_meta"][tag].GetInt(), 9);
    const auto withParams =
        parsed(tagged("notifications/resources/updated", R"({"uri":"file:///a"})", "9"));
    EXPECT_STREQ(withParams["params"]["uri"].GetString(), "file:///a");
    EXPECT_EQ(withParams["params"]["_meta"][tag].GetInt(), 9);
    const auto withMeta = parsed(tagged("n", R"({"_meta":{"k":1},"a":2})", R"("s")"));
    EXPECT_EQ(withMeta["params"]["_meta"]["k"].GetInt(), 1);
    EXPECT_STREQ(withMeta["params"]["_meta"][tag].GetString(), "s");
    EXPECT_EQ(withMeta["params"]["a"].GetInt(), 2);
    const auto emptyMeta = parsed(tagged("n", R"({"_meta":{}})", "1"));
    EXPECT_EQ(emptyMeta["params"]["_meta"][tag].GetInt(), 1);
}

}  // namespace
}  // namespace crank::mcp::test
