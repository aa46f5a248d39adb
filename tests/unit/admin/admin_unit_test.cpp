#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "admin/json_diff.h"
#include "config/config_loader.h"
#include "http/router.h"
#include "util/sha256.h"

namespace crank::admin {
namespace {

rapidjson::Document parse(const char* text) {
    rapidjson::Document doc;
    doc.Parse(text);
    EXPECT_FALSE(doc.HasParseError()) << text;
    return doc;
}

std::string describe(const std::vector<JsonChange>& changes) {
    std::string out;
    for (const JsonChange& c : changes) {
        out += std::string(changeName(c.kind)) + " " + c.path + ";";
    }
    return out;
}

TEST(JsonDiff, NestedMembersAreComparedOneByOneAndArraysAsWholeValues) {
    const auto from = parse(
        R"({"name": "n", "execution": {"max_items": 100, "mode": "window"},
            "config": {"headers": {"X-Key": "a"}, "tags": [1, 2]}, "title": "t"})");
    const auto to = parse(
        R"({"name": "n", "execution": {"max_items": 200, "mode": "window", "max_bytes": 5},
            "config": {"headers": {"X-Key": "a", "X Odd": "b"}, "tags": [1, 3]}})");
    const auto changes = diffJson(from, to);
    EXPECT_EQ(describe(changes),
              "changed execution.max_items;added execution.max_bytes;"
              "added config.headers[\"X Odd\"];changed config.tags;removed title;");
    ASSERT_EQ(changes.size(), 5U);
    EXPECT_EQ(changes[0].from->GetInt(), 100);
    EXPECT_EQ(changes[0].to->GetInt(), 200);
    EXPECT_EQ(changes[1].from, nullptr);
    EXPECT_EQ(changes[4].to, nullptr);
    EXPECT_STREQ(changes[4].from->GetString(), "t");
}

TEST(JsonDiff, EqualValuesHaveNoChangesAndATypeChangeIsOneChange) {
    const auto a = parse(R"({"a": {"b": [1, {"c": 2}]}})");
    EXPECT_TRUE(diffJson(a, a).empty());
    const auto b = parse(R"({"a": 5})");
    EXPECT_EQ(describe(diffJson(a, b)), "changed a;");
    const auto scalar = parse("3");
    EXPECT_EQ(describe(diffJson(a, scalar)), "changed ;");
}

TEST(Router, ExactRoutesWinAndTheLongestPrefixTakesTheRest) {
    http::Router router;
    router.add("/ui", [](auto&, auto&) {});
    router.addPrefix("/ui/", [](auto&, auto&) {});
    router.addPrefix("/admin/api/", [](auto&, auto&) {});
    router.addPrefix("/admin/api/operations/", [](auto&, auto&) {});
    // find() returns the stored handler: the same pointer means the same route.
    const http::Handler* exactUi = router.find("/ui");
    const http::Handler* ui = router.find("/ui/");
    const http::Handler* api = router.find("/admin/api/plugins");
    const http::Handler* operations = router.find("/admin/api/operations/op_1");
    ASSERT_NE(exactUi, nullptr);
    ASSERT_NE(ui, nullptr);
    ASSERT_NE(api, nullptr);
    ASSERT_NE(operations, nullptr);
    EXPECT_NE(exactUi, ui);
    EXPECT_NE(api, operations);
    EXPECT_EQ(router.find("/ui/app.js"), ui);
    EXPECT_EQ(router.find("/admin/api/"), api);
    EXPECT_EQ(router.find("/admin/api/operations/"), operations);
    EXPECT_EQ(router.find("/admin/ap"), nullptr);
    EXPECT_EQ(router.find("/uix"), nullptr);
    EXPECT_EQ(router.find(""), nullptr);
}

config::LoadResult load(const std::string& text) {
    config::LoadOptions options;
    options.env = [](const std::string& name) -> std::optional<std::string> {
        if (name == "ADMIN_TOKEN") {
            return std::string("s3cret-admin-0123456789");
        }
        return std::nullopt;
    };
    return config::loadConfigText(text, "test.json", options);
}

std::string errors(const config::LoadResult& r) {
    std::string out;
    for (const auto& e : r.errors) {
        out += e.toString() + "\n";
    }
    return out;
}

TEST(AdminConfig, DefaultsAreOffAndTheTokenIsKeptAsItsDigestOnly) {
    const auto none = load("{}");
    ASSERT_TRUE(none.config) << errors(none);
    EXPECT_FALSE(none.config->admin.token.has_value());
    EXPECT_TRUE(none.config->admin.ui);
    EXPECT_EQ(none.config->admin.test_run_timeout_ms, 60'000);
    EXPECT_EQ(none.config->admin.max_test_runs, 4);
    EXPECT_EQ(none.config->admin.sync_interval_ms, 5'000);

    const auto on = load(
        R"({"admin": {"token": {"env": "ADMIN_TOKEN"}, "ui": false, "ui_directory": "/srv/ui",
            "test_run_timeout_ms": 5000, "max_test_runs": 2, "sync_interval_ms": 250}})");
    ASSERT_TRUE(on.config) << errors(on);
    ASSERT_TRUE(on.config->admin.token.has_value());
    EXPECT_EQ(on.config->admin.token->reveal(), sha256Hex("s3cret-admin-0123456789"));
    EXPECT_EQ(on.config->admin.token->source(), "env:ADMIN_TOKEN");
    EXPECT_FALSE(on.config->admin.ui);
    EXPECT_EQ(on.config->admin.ui_directory, "/srv/ui");
    EXPECT_EQ(on.config->admin.max_test_runs, 2);

    const std::string digest(64, 'a');
    const auto hashed = load(R"({"admin": {"token": {"sha256": ")" + digest + R"("}}})");
    ASSERT_TRUE(hashed.config) << errors(hashed);
    EXPECT_EQ(hashed.config->admin.token->reveal(), digest);
}

TEST(AdminConfig, BadValuesAreRefusedWithTheirPaths) {
    const auto bad = load(
        R"({"admin": {"token": "inline-secret", "max_test_runs": 0, "sync_interval_ms": 1,
            "test_run_timeout_ms": "long", "extra": 1}})");
    ASSERT_FALSE(bad.config);
    const std::string text = errors(bad);
    EXPECT_NE(text.find("admin.token: secrets are not written in the config file"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("inline-secret"), std::string::npos) << "the secret is never echoed";
    EXPECT_NE(text.find("admin.max_test_runs"), std::string::npos) << text;
    EXPECT_NE(text.find("admin.sync_interval_ms"), std::string::npos) << text;
    EXPECT_NE(text.find("admin.test_run_timeout_ms"), std::string::npos) << text;
    EXPECT_NE(text.find("admin.extra: unknown key"), std::string::npos) << text;
    const auto unset = load(R"({"admin": {"token": {"env": "NOT_SET_ANYWHERE"}}})");
    ASSERT_FALSE(unset.config);
    EXPECT_NE(
        errors(unset).find("admin.token.env: environment variable NOT_SET_ANYWHERE is not set"),
        std::string::npos)
        << errors(unset);
}

TEST(LoadOperation, PathsStartAtTheOperationAndNamesAreCheckedAgainstTheConfig) {
    const auto base = load(R"({"auth_profiles": {"p": {"type": "bearer",
        "token": {"env": "ADMIN_TOKEN"}}}})");
    ASSERT_TRUE(base.config) << errors(base);

    const auto good = parse(
        R"({"name": "feed", "protocol": "synthetic", "description": "d", "auth_profile": "p",
            "execution": {"mode": "session", "max_items": 5}})");
    const auto ok = config::loadOperation(good, *base.config);
    ASSERT_TRUE(ok.operation);
    EXPECT_EQ(ok.operation->toolNames(),
              (std::vector<std::string>{"feed_start", "feed_poll", "feed_stop"}));
    EXPECT_EQ(ok.operation->source_json.find(R"("name":"feed")"), 1U);

    const auto bad = parse(
        R"({"name": "bad name", "protocol": "Rest!", "workspace": "default",
            "execution": {"mode": "forever", "max_items": -1}, "input_schema": {"type": "array"}})");
    const auto refused = config::loadOperation(bad, *base.config);
    ASSERT_FALSE(refused.operation);
    std::vector<std::string> paths;
    for (const auto& e : refused.errors) {
        paths.push_back(e.path);
    }
    for (const char* expected :
         {"name", "protocol", "execution.mode", "execution.max_items", "input_schema.type"}) {
        EXPECT_NE(std::find(paths.begin(), paths.end(), expected), paths.end()) << expected;
    }

    const auto elsewhere = parse(
        R"({"name": "x", "protocol": "rest", "workspace": "nowhere", "auth_profile": "missing"})");
    const auto unknown = config::loadOperation(elsewhere, *base.config);
    ASSERT_FALSE(unknown.operation);
    ASSERT_EQ(unknown.errors.size(), 2U);
    EXPECT_EQ(unknown.errors[0].path, "workspace");
    EXPECT_EQ(unknown.errors[1].path, "auth_profile");

    const auto twice = parse(
        R"({"name": "j", "protocol": "rest", "execution": {"mode": "async_job",
            "status_tool_name": "same", "result_tool_name": "same"}})");
    const auto repeated = config::loadOperation(twice, *base.config);
    ASSERT_FALSE(repeated.operation);
    EXPECT_NE(repeated.errors.front().message.find("publishes the tool \"same\" twice"),
              std::string::npos);

    const auto notObject = parse("[1]");
    const auto array = config::loadOperation(notObject, *base.config);
    ASSERT_FALSE(array.operation);
}

}  // namespace
}  // namespace crank::admin
