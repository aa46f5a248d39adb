// The auth JSON a plugin receives for each profile type, the secrets scrubbed for it, and the
// operation compiler handing both to the operation.

#include "runtime/auth_json.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "config/config_loader.h"
#include "plugins/plugin_registry.h"
#include "runtime/operation_compiler.h"

namespace crank::runtime {
namespace {

using config::AuthProfile;
using config::Secret;
using config::SecretRef;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

Secret secret(std::string value) {
    return Secret(SecretRef{SecretRef::Kind::env, "TEST_SECRET"}, std::move(value));
}

rapidjson::Document parsed(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    EXPECT_FALSE(doc.HasParseError()) << json;
    EXPECT_TRUE(doc.IsObject()) << json;
    return doc;
}

std::vector<std::string> memberNames(const rapidjson::Value& object) {
    std::vector<std::string> names;
    for (const auto& member : object.GetObject()) {
        names.emplace_back(member.name.GetString(), member.name.GetStringLength());
    }
    return names;
}

TEST(AuthJson, Bearer) {
    AuthProfile p;
    p.type = AuthProfile::Type::bearer;
    p.token = secret("t0k3n-abc");
    p.headers = {{"X-Tenant", "acme"}};
    const std::string json = authJson(p);
    EXPECT_EQ(json, R"({"type":"bearer","token":"t0k3n-abc","headers":{"X-Tenant":"acme"}})");
    const rapidjson::Document doc = parsed(json);
    EXPECT_STREQ(doc["token"].GetString(), "t0k3n-abc");
    EXPECT_THAT(authSecrets(p), UnorderedElementsAre("t0k3n-abc"));
}

TEST(AuthJson, Basic) {
    AuthProfile p;
    p.type = AuthProfile::Type::basic;
    p.username = "user";
    p.password = secret("pass");
    const rapidjson::Document doc = parsed(authJson(p));
    EXPECT_THAT(memberNames(doc),
                ::testing::ElementsAre("type", "username", "password", "headers"));
    EXPECT_STREQ(doc["type"].GetString(), "basic");
    EXPECT_STREQ(doc["username"].GetString(), "user");
    EXPECT_STREQ(doc["password"].GetString(), "pass");
    EXPECT_TRUE(doc["headers"].IsObject());
    EXPECT_EQ(doc["headers"].MemberCount(), 0U);
    // The password and the Authorization header's value, base64("user:pass").
    EXPECT_THAT(authSecrets(p), UnorderedElementsAre("pass", "dXNlcjpwYXNz"));
}

TEST(AuthJson, ApiKeyInAHeaderOrTheQuery) {
    AuthProfile p;
    p.type = AuthProfile::Type::api_key;
    p.key_name = "X-Api-Key";
    p.key = secret("k3y-value");
    p.headers = {{"X-A", "1"}, {"X-B", "2"}};
    EXPECT_EQ(authJson(p),
              R"({"type":"api_key","in":"header","name":"X-Api-Key","key":"k3y-value",)"
              R"("headers":{"X-A":"1","X-B":"2"}})");
    p.placement = AuthProfile::Placement::query;
    p.key_name = "api_key";
    const rapidjson::Document doc = parsed(authJson(p));
    EXPECT_STREQ(doc["in"].GetString(), "query");
    EXPECT_STREQ(doc["name"].GetString(), "api_key");
    EXPECT_STREQ(doc["key"].GetString(), "k3y-value");
    EXPECT_THAT(authSecrets(p), UnorderedElementsAre("k3y-value"));
}

TEST(AuthJson, NoneHasOnlyItsHeaders) {
    AuthProfile p;
    p.headers = {{"X-Tenant", "acme"}};
    EXPECT_EQ(authJson(p), R"({"type":"none","headers":{"X-Tenant":"acme"}})");
    EXPECT_TRUE(authSecrets(p).empty());
}

TEST(AuthJson, SecretsWithQuotesAndBackslashesStayExact) {
    const std::string tricky = "a\"b\\c\nd/\x01";
    AuthProfile p;
    p.type = AuthProfile::Type::basic;
    p.username = "u\"ser";
    p.password = secret(tricky);
    const rapidjson::Document doc = parsed(authJson(p));
    EXPECT_EQ(std::string(doc["password"].GetString(), doc["password"].GetStringLength()), tricky);
    EXPECT_STREQ(doc["username"].GetString(), "u\"ser");
    EXPECT_THAT(authSecrets(p), UnorderedElementsAre(tricky, base64("u\"ser:" + tricky)));
}

TEST(AuthJson, Base64) {
    EXPECT_EQ(base64(""), "");
    EXPECT_EQ(base64("f"), "Zg==");
    EXPECT_EQ(base64("fo"), "Zm8=");
    EXPECT_EQ(base64("foo"), "Zm9v");
    EXPECT_EQ(base64("foob"), "Zm9vYg==");
    EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
    EXPECT_EQ(base64("\xff\xfe"), "//4=");
}

// compileOperations builds the auth JSON once per operation, from config.auth_profiles.
class AuthJsonCompiled : public ::testing::Test {
protected:
    /// The operations point into registry_, which the fixture keeps for the test's length.
    CompiledOperations compile(const config::Config& cfg) {
        plugins::LoadPluginsOptions options;
        options.directories = {CRANK_PLUGIN_DIR, CRANK_TEST_PLUGIN_DIR};
        registry_ = plugins::loadPlugins(options);
        return compileOperations(cfg, registry_);
    }

    static config::Config twoOperations() {
        config::LoadResult loaded = config::loadConfigText(
            R"({"operations": [{"name": "with", "description": "d", "protocol": "synthetic"},
                {"name": "without", "description": "d", "protocol": "synthetic"}]})",
            "test");
        EXPECT_TRUE(loaded.config);
        return loaded.config ? *loaded.config : config::Config{};
    }

    plugins::PluginRegistry registry_;
};

TEST_F(AuthJsonCompiled, AnOperationWithAProfileCarriesItsJsonAndScrubber) {
    config::Config cfg = twoOperations();
    AuthProfile p;
    p.name = "p";
    p.type = AuthProfile::Type::bearer;
    p.token = secret("t0k3n-abc");
    cfg.auth_profiles["p"] = p;
    cfg.operations[0].auth_profile = "p";
    const CompiledOperations compiled = compile(cfg);
    ASSERT_TRUE(compiled.errors.empty()) << compiled.errors[0].toString();
    ASSERT_EQ(compiled.operations.size(), 2U);
    const Operation& with = *compiled.operations[0];
    EXPECT_EQ(with.auth_json, authJson(p));
    EXPECT_FALSE(with.scrubber.empty());
    EXPECT_EQ(with.scrubber.scrub("Bearer t0k3n-abc"), "Bearer [redacted]");
    const Operation& without = *compiled.operations[1];
    EXPECT_TRUE(without.auth_json.empty());
    EXPECT_TRUE(without.scrubber.empty());
}

TEST_F(AuthJsonCompiled, AnUnknownProfileIsAnError) {
    config::Config cfg = twoOperations();
    cfg.operations[1].auth_profile = "missing";
    const CompiledOperations compiled = compile(cfg);
    ASSERT_EQ(compiled.errors.size(), 1U);
    EXPECT_THAT(compiled.errors[0].toString(),
                HasSubstr(R"(operations[1].auth_profile: no auth profile "missing")"));
}

}  // namespace
}  // namespace crank::runtime
