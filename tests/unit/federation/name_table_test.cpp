// What a workspace publishes from its upstreams' lists: names as the operator asked, operations
// first, earlier upstreams before later ones, every collision told to the link that lost it, and
// only what changed handed to the tool registry.

#include "federation/name_table.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace crank::federation {
namespace {

std::unique_ptr<UpstreamLink> link(const std::string& name, config::UpstreamConfig::Naming naming) {
    auto l = std::make_unique<UpstreamLink>();
    l->config.name = name;
    l->config.prefix = name;
    l->config.naming = naming;
    return l;
}

Item tool(const std::string& name, const std::string& extra = {}) {
    return Item{{}, name, R"({"name":")" + name + R"(","title":"T )" + name + R"(")" + extra + "}"};
}

TEST(NameTableTest, ToolsArePublishedUnderTheirNamesWithTitleAndTaskSupport) {
    auto a = link("a", config::UpstreamConfig::Naming::prefix);
    a->lists.tools = {tool("echo", R"(,"execution":{"taskSupport":"optional"})")};
    const WorkspacePlan plan = planWorkspace({a.get()}, {}, {});
    ASSERT_EQ(plan.added.size(), 1U);
    EXPECT_EQ(plan.added[0].name, "a_echo");
    EXPECT_EQ(plan.added[0].original, "echo");
    EXPECT_EQ(plan.added[0].title, "T echo");
    EXPECT_EQ(plan.added[0].task_support, "optional");
    EXPECT_EQ(plan.added[0].link, a.get());
    EXPECT_EQ(plan.tools.at("a_echo").json,
              R"({"name":"a_echo","title":"T echo","execution":{"taskSupport":"optional"}})");
    EXPECT_EQ(plan.owners.at("a_echo").second, "echo");
    EXPECT_TRUE(plan.removed.empty());
}

TEST(NameTableTest, OperationsAndEarlierUpstreamsKeepANameAndTheLoserIsTold) {
    auto a = link("a", config::UpstreamConfig::Naming::keep);
    auto b = link("b", config::UpstreamConfig::Naming::keep);
    a->lists.tools = {tool("search"), tool("report")};
    b->lists.tools = {tool("search"), tool("fetch")};
    const WorkspacePlan plan = planWorkspace({a.get(), b.get()}, {}, {"report"});
    EXPECT_EQ(plan.owners.at("search").first, a.get());
    EXPECT_EQ(plan.owners.count("report"), 0U);  // the operation's
    EXPECT_EQ(plan.owners.at("fetch").first, b.get());
    ASSERT_EQ(plan.collisions.size(), 2U);
    ASSERT_EQ(plan.collisions[0].size(), 1U);
    EXPECT_NE(plan.collisions[0][0].find("\"report\" is taken"), std::string::npos);
    ASSERT_EQ(plan.collisions[1].size(), 1U);
    EXPECT_NE(plan.collisions[1][0].find("\"search\" is taken"), std::string::npos);
}

TEST(NameTableTest, OnlyChangedToolsAreAddedAndVanishedOnesRemoved) {
    auto a = link("a", config::UpstreamConfig::Naming::keep);
    a->lists.tools = {tool("same"), tool("changed", R"(,"description":"new")")};
    const std::map<std::string, PublishedEntry> before = {
        {"same", {R"({"name":"same","title":"T same"})", a->serial, "same"}},
        {"changed", {R"({"name":"changed","title":"T changed"})", a->serial, "changed"}},
        {"gone", {R"({"name":"gone"})", a->serial, "gone"}}};
    const WorkspacePlan plan = planWorkspace({a.get()}, before, {});
    ASSERT_EQ(plan.added.size(), 1U);
    EXPECT_EQ(plan.added[0].name, "changed");
    EXPECT_EQ(plan.added[0].description, "new");
    EXPECT_EQ(plan.removed, (std::vector<std::string>{"gone"}));
    EXPECT_EQ(plan.tools.size(), 2U);
}

TEST(NameTableTest, AToolThatMovesToAnotherUpstreamIsAddedAgainEvenWithTheSameJson) {
    // Two upstreams list the same tool; the first stops (its lists are emptied): the name goes
    // to the second, and the registry must get the second's function, JSON unchanged or not.
    auto a = link("a", config::UpstreamConfig::Naming::keep);
    auto b = link("b", config::UpstreamConfig::Naming::keep);
    a->serial = 1;
    b->serial = 2;
    a->lists.tools = {tool("search")};
    b->lists.tools = {tool("search")};
    const WorkspacePlan first = planWorkspace({a.get(), b.get()}, {}, {});
    ASSERT_EQ(first.owners.at("search").first, a.get());
    a->lists.tools.clear();
    const WorkspacePlan second = planWorkspace({a.get(), b.get()}, first.tools, {});
    ASSERT_EQ(second.added.size(), 1U);
    EXPECT_EQ(second.added[0].link, b.get());
    EXPECT_TRUE(second.removed.empty());
    // Nothing changed: nothing is handed to the registry again.
    const WorkspacePlan third = planWorkspace({a.get(), b.get()}, second.tools, {});
    EXPECT_TRUE(third.added.empty());
}

TEST(NameTableTest, ResourcesTemplatesAndPromptsArePublishedOnce) {
    auto a = link("a", config::UpstreamConfig::Naming::prefix);
    auto b = link("b", config::UpstreamConfig::Naming::prefix);
    a->lists.resources = {Item{{}, "file:///x", R"({"uri":"file:///x"})"}};
    b->lists.resources = {Item{{}, "file:///x", R"({"uri":"file:///x","name":"b's"})"},
                          Item{{}, "file:///y", R"({"uri":"file:///y"})"}};
    a->lists.templates = {Item{{}, "file:///{p}", R"({"uriTemplate":"file:///{p}"})"}};
    b->lists.templates = {Item{{}, "file:///{p}", R"({"uriTemplate":"file:///{p}"})"}};
    a->lists.prompts = {Item{{}, "greet", R"({"name":"greet"})"}};
    b->lists.prompts = {Item{{}, "greet", R"({"name":"greet"})"}};
    const WorkspacePlan plan = planWorkspace({a.get(), b.get()}, {}, {});
    ASSERT_EQ(plan.lists.resources.size(), 2U);
    EXPECT_EQ(plan.lists.resources[0].json, R"({"uri":"file:///x"})");  // a's, listed first
    EXPECT_EQ(plan.lists.templates.size(), 1U);
    ASSERT_EQ(plan.lists.prompts.size(), 2U);  // prefixed apart: a_greet, b_greet
    EXPECT_EQ(plan.lists.prompts[0].key, "a_greet");
    EXPECT_EQ(plan.lists.prompts[0].json, R"({"name":"a_greet"})");
    EXPECT_EQ(plan.lists.prompts[1].original, "greet");
    ASSERT_EQ(plan.collisions[1].size(), 2U);  // b's resource and template
    EXPECT_NE(plan.collisions[1][0].find("file:///x is listed by an earlier upstream"),
              std::string::npos);
}

TEST(NameTableTest, TheToolsPolicyKeepsToolsOutAndRenamesOthers) {
    auto a = link("a", config::UpstreamConfig::Naming::prefix);
    a->config.tools.allow = {"get_*", "search"};
    a->config.tools.deny = {"get_secret*"};
    a->config.tools.rename = {{"search", "find"}};
    a->lists.tools = {tool("get_user"), tool("get_secret_key"), tool("search"), tool("delete_all")};
    const WorkspacePlan plan = planWorkspace({a.get()}, {}, {});
    // Published: allowed and not denied; a rename is the published name outright (no prefix).
    EXPECT_EQ(plan.tools.size(), 2U);
    EXPECT_EQ(plan.owners.count("a_get_user"), 1U);
    EXPECT_EQ(plan.owners.at("find").second, "search");  // called by its own name upstream
    EXPECT_EQ(plan.tools.at("find").json, R"({"name":"find","title":"T search"})");
    // Kept out, neither listed nor callable, and told to the link with the reason.
    EXPECT_EQ(plan.owners.count("a_get_secret_key"), 0U);
    EXPECT_EQ(plan.owners.count("a_delete_all"), 0U);
    ASSERT_EQ(plan.filtered.size(), 1U);
    ASSERT_EQ(plan.filtered[0].size(), 2U);
    EXPECT_NE(plan.filtered[0][0].find(R"(tool "get_secret_key" is not published: )"
                                       R"(upstreams[a].tools.deny has "get_secret*")"),
              std::string::npos)
        << plan.filtered[0][0];
    EXPECT_NE(plan.filtered[0][1].find(R"(tool "delete_all" is not published: )"
                                       R"(upstreams[a].tools.allow matches none of its names)"),
              std::string::npos)
        << plan.filtered[0][1];
    EXPECT_TRUE(plan.collisions[0].empty());
}

TEST(NameTableTest, ARenameThatCollidesLosesLikeAnyName) {
    auto a = link("a", config::UpstreamConfig::Naming::keep);
    a->config.tools.rename = {{"lookup", "report"}};
    a->lists.tools = {tool("lookup")};
    const WorkspacePlan plan = planWorkspace({a.get()}, {}, {"report"});
    EXPECT_TRUE(plan.tools.empty());
    ASSERT_EQ(plan.collisions[0].size(), 1U);
    EXPECT_NE(plan.collisions[0][0].find("\"report\" is taken"), std::string::npos);
}

TEST(NameTableTest, GlobPatternsMatchRunsAndSingleCharacters) {
    config::UpstreamConfig c;
    c.name = "u";
    c.tools.allow = {"read_?", "a*", "*_admin_*_write", "exact.name", "**q**"};
    for (const char* name : {"read_1", "alpha", "a", "db_admin_users_write", "_admin__write",
                             "exact.name", "q", "aqa"}) {
        EXPECT_EQ(c.toolFiltered(name), "") << name;
    }
    for (const char* name : {"read_12", "delta", "exact_name", "", "READ_1", "db_admin_write"}) {
        EXPECT_NE(c.toolFiltered(name), "") << name;
    }
}

TEST(NameTableTest, AHostileNameCostsLittleToMatch) {
    // Many stars against a long name that almost matches: linear-ish, not exponential.
    config::UpstreamConfig c;
    c.name = "u";
    c.tools.allow = {"*a*a*a*a*a*a*a*a*a*a*b"};
    const std::string name(128, 'a');
    for (int i = 0; i < 1000; ++i) {
        ASSERT_NE(c.toolFiltered(name), "");
    }
}

TEST(NameTableTest, ANameThatCannotBePublishedIsTold) {
    auto a = link("a", config::UpstreamConfig::Naming::keep);
    a->lists.tools = {tool("ok"), tool(std::string(129, 'x')), tool(std::string("nul\0x", 5))};
    const WorkspacePlan plan = planWorkspace({a.get()}, {}, {});
    EXPECT_EQ(plan.tools.size(), 1U);
    EXPECT_EQ(plan.owners.count("ok"), 1U);
    ASSERT_EQ(plan.collisions[0].size(), 2U);
    EXPECT_NE(plan.collisions[0][0].find("129 bytes"), std::string::npos) << plan.collisions[0][0];
}

}  // namespace
}  // namespace crank::federation
