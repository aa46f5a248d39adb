// `crankd plugins` (formatPluginTable) and the admin JSON (formatPluginJson).
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "fixture_paths.h"
#include "plugins/plugin_registry.h"

namespace crank::plugins {
namespace {

using testing::scenario;

PluginRegistry mixedRegistry() {
    LoadPluginsOptions options;
    options.directories = {scenario("good"), scenario("init_fails"), scenario("wrong_major"),
                           scenario("old_build")};
    options.enabled = {"good", "init_fails", "rest"};
    return loadPlugins(options);
}

TEST(PluginTable, ListsEveryLibraryWithReasonsAndRegistrations) {
    const PluginRegistry registry = mixedRegistry();
    const std::string table = formatPluginTable(registry);
    const std::string good_path = CRANK_GOOD_PLUGIN_PATH;
    const std::string expected_start = "NAME                   VERSION  ABI  STATUS    PATH\n";
    EXPECT_EQ(table.substr(0, expected_start.size()), expected_start) << table;
    const std::string abi = "1." + std::to_string(CRANK_ABI_MINOR);
    EXPECT_NE(table.find("good                   1.2.0    " + abi + "  loaded    " + good_path +
                         "\n"
                         "    adapters: echo\n"
                         "    aggregators: count\n"),
              std::string::npos)
        << table;
    EXPECT_NE(table.find("init_fails             0.1.0    " + abi + "  rejected  "),
              std::string::npos)
        << table;
    EXPECT_NE(table.find("    reason: init failed: cannot find libupstream.so.3; install it\n"),
              std::string::npos)
        << table;
    EXPECT_NE(table.find("libbroken_wrong_major  -        2.0  rejected  "), std::string::npos)
        << table;
    EXPECT_NE(table.find("    reason: built for ABI 2.x; this crankd speaks 1.x\n"),
              std::string::npos)
        << table;
    EXPECT_NE(table.find("old                    0.9.0    1.0  disabled  "), std::string::npos)
        << table;
    EXPECT_NE(table.find("rest                   -        -    missing   -\n    reason: listed "
                         "in plugins.enabled"),
              std::string::npos)
        << table;
}

TEST(PluginTable, EmptyRegistry) {
    EXPECT_EQ(formatPluginTable(PluginRegistry()), "no plugins found\n");
    EXPECT_EQ(formatPluginJson(PluginRegistry()), R"({"plugins":[],"all_loaded":true})");
}

TEST(PluginTable, JsonRendering) {
    const PluginRegistry registry = mixedRegistry();
    const std::string json = formatPluginJson(registry);
    rapidjson::Document document;
    document.Parse(json.c_str());
    ASSERT_FALSE(document.HasParseError()) << json;
    EXPECT_FALSE(document["all_loaded"].GetBool());
    const auto& plugins = document["plugins"];
    ASSERT_EQ(plugins.Size(), 5U);
    const auto& good = plugins[0];
    EXPECT_STREQ(good["name"].GetString(), "good");
    EXPECT_STREQ(good["version"].GetString(), "1.2.0");
    EXPECT_EQ(std::string(good["abi"].GetString()), "1." + std::to_string(CRANK_ABI_MINOR));
    EXPECT_STREQ(good["status"].GetString(), "loaded");
    EXPECT_STREQ(good["path"].GetString(), CRANK_GOOD_PLUGIN_PATH);
    EXPECT_STREQ(good["reason"].GetString(), "");
    ASSERT_EQ(good["adapters"].Size(), 1U);
    EXPECT_STREQ(good["adapters"][0].GetString(), "echo");
    EXPECT_STREQ(good["aggregators"][0].GetString(), "count");
    EXPECT_STREQ(plugins[1]["status"].GetString(), "rejected");
    EXPECT_STREQ(plugins[1]["reason"].GetString(),
                 "init failed: cannot find libupstream.so.3; install it");
    EXPECT_STREQ(plugins[3]["status"].GetString(), "disabled");
    EXPECT_STREQ(plugins[4]["status"].GetString(), "missing");
}

}  // namespace
}  // namespace crank::plugins
