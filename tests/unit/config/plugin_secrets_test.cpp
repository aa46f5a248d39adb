// Secrets a plugin takes in its own config (config/plugin_secrets.h): every {"env": NAME} object
// found, at any depth, resolved with the given lookup; nothing else taken for one.

#include "config/plugin_secrets.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace crank::config {
namespace {

std::optional<std::string> fakeEnv(const std::string& name) {
    static const std::map<std::string, std::string> kEnv{
        {"TOKEN", "t0ken-1"}, {"DEEP", "deep-2"}, {"EMPTY", ""}};
    const auto it = kEnv.find(name);
    return it == kEnv.end() ? std::nullopt : std::optional<std::string>(it->second);
}

TEST(ConfigPluginSecrets, EveryEnvReferenceIsResolved) {
    const std::vector<std::string> values = pluginConfigSecretValues(
        R"({"url": "http://h/mcp", "headers": {"Authorization": {"env": "TOKEN"}, "X-Plain": "p"},
            "nested": [{"a": {"env": "DEEP"}}]})",
        fakeEnv);
    EXPECT_EQ(values, (std::vector<std::string>{"t0ken-1", "deep-2"}));
    const std::vector<Secret> secrets =
        pluginConfigSecrets(R"({"headers": {"A": {"env": "TOKEN"}}})", fakeEnv);
    ASSERT_EQ(secrets.size(), 1U);
    EXPECT_EQ(secrets[0].source(), "env:TOKEN");
}

TEST(ConfigPluginSecrets, OnlyExactReferencesOfSetVariablesCount) {
    // A stdio server's `env` map, a reference with more members, a non-string name, unset and
    // empty variables, text that is not JSON: none is a secret.
    EXPECT_TRUE(pluginConfigSecretValues(
                    R"({"command": "x", "env": {"TOKEN": "literal"},
                        "h": {"env": "TOKEN", "other": 1}, "i": {"env": 5},
                        "j": {"env": "UNSET"}, "k": {"env": "EMPTY"}, "l": {"env": ""}})",
                    fakeEnv)
                    .empty());
    EXPECT_TRUE(pluginConfigSecretValues("not json", fakeEnv).empty());
}

}  // namespace
}  // namespace crank::config
