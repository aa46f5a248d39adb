// config::loadUpstream(): one upstream object, as the admin API receives it, read by the config
// file's rules with error paths from the object, and its workspace checked against a base config.
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "config/config_loader.h"

namespace crank::config {
namespace {

UpstreamLoadResult loadObject(const std::string& text) {
    const LoadResult base = loadConfigText(
        R"({"auth": {"mode": "none", "workspaces": [{"id": "default"}, {"id": "team"}]}})",
        "base.json", {});
    EXPECT_TRUE(base.config.has_value());
    rapidjson::Document doc;
    doc.Parse(text.c_str());
    EXPECT_FALSE(doc.HasParseError()) << text;
    return loadUpstream(doc, *base.config);
}

TEST(UpstreamObject, AValidObjectIsReadAsTheFileWouldReadIt) {
    const UpstreamLoadResult r = loadObject(
        R"({"name": "gh", "workspace": "team", "prefix": "git", "separator": ".",
            "tools": {"deny": ["delete_*"]}, "config": {"command": "/bin/true"}})");
    ASSERT_TRUE(r.upstream.has_value()) << (r.errors.empty() ? "" : r.errors[0].toString());
    EXPECT_EQ(r.upstream->name, "gh");
    EXPECT_EQ(r.upstream->workspace, "team");
    EXPECT_EQ(r.upstream->publishedName("search"), "git.search");
    EXPECT_NE(r.upstream->toolFiltered("delete_repo"), "");
    EXPECT_EQ(r.upstream->config_json, R"({"command":"/bin/true"})");
}

TEST(UpstreamObject, ErrorsArePathsFromTheObjectAndEveryOneIsListed) {
    const UpstreamLoadResult r = loadObject(
        R"({"name": "no spaces", "separator": "+", "tools": {"allow": "x"}, "extra": 1,
            "request_timeout_ms": 5})");
    ASSERT_FALSE(r.upstream.has_value());
    std::string paths;
    for (const ConfigError& e : r.errors) {
        paths += e.path + ";";
    }
    for (const char* path :
         {"name;", "separator;", "tools.allow;", "extra;", "request_timeout_ms;"}) {
        EXPECT_NE(paths.find(path), std::string::npos) << path << " in " << paths;
    }
}

TEST(UpstreamObject, AnUnknownWorkspaceAndANonObjectAreRefused) {
    const UpstreamLoadResult unknown = loadObject(R"({"name": "u", "workspace": "nope"})");
    ASSERT_FALSE(unknown.upstream.has_value());
    ASSERT_EQ(unknown.errors.size(), 1U);
    EXPECT_EQ(unknown.errors[0].path, "workspace");
    EXPECT_NE(unknown.errors[0].message.find("nope"), std::string::npos);

    const UpstreamLoadResult array = loadObject("[1, 2]");
    ASSERT_FALSE(array.upstream.has_value());
    ASSERT_EQ(array.errors.size(), 1U);
    EXPECT_NE(array.errors[0].message.find("expected an upstream object"), std::string::npos);
    EXPECT_FALSE(loadObject("{}").upstream.has_value()) << "a name is required";
}

}  // namespace
}  // namespace crank::config
