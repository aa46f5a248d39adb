// Secrets: where they come from, how they fail, and that they never show up in text.

#include <cstdlib>
#include <sstream>
#include <string>

#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/secret.h"
#include "config_test_support.h"
#include "full_config.h"

namespace crank::config::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

/// A bearer profile named "p" whose token is `secretJson`.
std::string bearerProfile(const std::string& secretJson) {
    return R"({"auth_profiles": {"p": {"type": "bearer", "token": )" + secretJson + "}}}";
}

/// The token of profile "p", or the errors when the load failed.
std::optional<Secret> tokenOf(const LoadResult& r) {
    if (!r.config) {
        ADD_FAILURE() << ::testing::PrintToString(messages(r));
        return std::nullopt;
    }
    return r.config->auth_profiles.at("p").token;
}

/// Escapes a path for a JSON string literal (temporary paths have no quotes, but be safe).
std::string jsonString(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out.push_back('\\');
        }
        out.push_back(c);
    }
    return out + "\"";
}

const std::string kLiteralExpected =
    R"(secrets are not written in the config file; expected {"env": "VARIABLE"} or {"file": "/path"}, got a string)";

// ---------------------------------------------------------------------------------------------
// Environment variables.

TEST(ConfigSecretsTest, EnvVariableThatIsSet) {
    const auto token =
        tokenOf(load(bearerProfile(R"({"env": "GH_TOKEN"})"), {{"GH_TOKEN", "t0k3n"}}));
    ASSERT_TRUE(token.has_value());
    EXPECT_EQ(token->reveal(), "t0k3n");
    EXPECT_EQ(token->source(), "env:GH_TOKEN");
    EXPECT_EQ(token->ref().kind, SecretRef::Kind::env);
    EXPECT_EQ(token->ref().name, "GH_TOKEN");
}

TEST(ConfigSecretsTest, EnvVariableThatIsNotSet) {
    EXPECT_THAT(errorsOf(bearerProfile(R"({"env": "GH_TOKEN"})")),
                ElementsAre("auth_profiles.p.token.env: environment variable GH_TOKEN is not set"));
}

TEST(ConfigSecretsTest, EnvVariableThatIsEmpty) {
    EXPECT_THAT(errorsOf(bearerProfile(R"({"env": "GH_TOKEN"})"), {{"GH_TOKEN", ""}}),
                ElementsAre("auth_profiles.p.token.env: environment variable GH_TOKEN is empty"));
}

TEST(ConfigSecretsTest, EnvVariableWithoutAName) {
    EXPECT_THAT(
        errorsOf(bearerProfile(R"({"env": ""})")),
        ElementsAre("auth_profiles.p.token.env: expected the name of an environment variable"));
}

TEST(ConfigSecretsTest, ProcessEnvironmentIsTheDefault) {
    // Each gtest case runs in its own process under ctest, so this variable stays local.
    ASSERT_EQ(::setenv("CRANK_CONFIG_TEST_SECRET", "from-process-env", 1), 0);
    const LoadResult r =
        loadConfigText(bearerProfile(R"({"env": "CRANK_CONFIG_TEST_SECRET"})"), "c.json");
    ::unsetenv("CRANK_CONFIG_TEST_SECRET");
    const auto token = tokenOf(r);
    ASSERT_TRUE(token.has_value());
    EXPECT_EQ(token->reveal(), "from-process-env");
}

// ---------------------------------------------------------------------------------------------
// Files.

TEST(ConfigSecretsTest, FileWithTrailingNewline) {
    const TempDir dir;
    const std::string path = dir.write("token", "s3cr3t-from-file\n");
    const auto token = tokenOf(load(bearerProfile(R"({"file": )" + jsonString(path) + "}")));
    ASSERT_TRUE(token.has_value());
    EXPECT_EQ(token->reveal(), "s3cr3t-from-file");
    EXPECT_EQ(token->source(), "file:" + path);
    EXPECT_EQ(token->ref().kind, SecretRef::Kind::file);
}

TEST(ConfigSecretsTest, FileWithWindowsLineEndingAndInnerNewlineKept) {
    const TempDir dir;
    const std::string path = dir.write("token", "line1\nline2\r\n\r\n");
    const auto token = tokenOf(load(bearerProfile(R"({"file": )" + jsonString(path) + "}")));
    ASSERT_TRUE(token.has_value());
    EXPECT_EQ(token->reveal(), "line1\nline2");
}

TEST(ConfigSecretsTest, FileWithoutTrailingNewlineIsTakenAsIs) {
    const TempDir dir;
    const std::string path = dir.write("token", " spaced ");
    const auto token = tokenOf(load(bearerProfile(R"({"file": )" + jsonString(path) + "}")));
    ASSERT_TRUE(token.has_value());
    EXPECT_EQ(token->reveal(), " spaced ");
}

TEST(ConfigSecretsTest, MissingFile) {
    const TempDir dir;
    const std::string path = dir.file("absent");
    EXPECT_THAT(
        errorsOf(bearerProfile(R"({"file": )" + jsonString(path) + "}")),
        ElementsAre("auth_profiles.p.token.file: cannot read secret file \"" + path + "\""));
}

TEST(ConfigSecretsTest, FileWithoutAPath) {
    EXPECT_THAT(errorsOf(bearerProfile(R"({"file": ""})")),
                ElementsAre(R"(auth_profiles.p.token.file: cannot read secret file "")"));
}

TEST(ConfigSecretsTest, DirectoryIsNotASecretFile) {
    const TempDir dir;
    const std::string path = dir.path();
    EXPECT_THAT(
        errorsOf(bearerProfile(R"({"file": )" + jsonString(path) + "}")),
        ElementsAre("auth_profiles.p.token.file: cannot read secret file \"" + path + "\""));
}

TEST(ConfigSecretsTest, EmptyFile) {
    const TempDir dir;
    const std::string empty = dir.write("empty", "");
    const std::string newline = dir.write("newline", "\r\n\n");
    EXPECT_THAT(
        errorsOf(R"({"auth_profiles": {"a": {"type": "bearer", "token": {"file": )" +
                 jsonString(empty) + R"(}}, "b": {"type": "bearer", "token": {"file": )" +
                 jsonString(newline) + "}}}}"),
        ElementsAre("auth_profiles.a.token.file: secret file \"" + empty + "\" is empty",
                    "auth_profiles.b.token.file: secret file \"" + newline + "\" is empty"));
}

TEST(ConfigSecretsTest, FileOverTheLimit) {
    const TempDir dir;
    const std::string big = dir.write("big", std::string(kMaxSecretFileBytes + 1, 'k'));
    EXPECT_THAT(errorsOf(bearerProfile(R"({"file": )" + jsonString(big) + "}")),
                ElementsAre("auth_profiles.p.token.file: secret file \"" + big +
                            "\" is larger than 65536 bytes"));
}

TEST(ConfigSecretsTest, FileExactlyAtTheLimit) {
    const TempDir dir;
    const std::string path = dir.write("max", std::string(kMaxSecretFileBytes, 'k'));
    const auto token = tokenOf(load(bearerProfile(R"({"file": )" + jsonString(path) + "}")));
    ASSERT_TRUE(token.has_value());
    EXPECT_EQ(token->reveal().size(), kMaxSecretFileBytes);
}

TEST(ConfigSecretsTest, EverySecretFieldResolves) {
    const TempDir dir;
    const std::string password = dir.write("password", "pw-from-file\n");
    const LoadResult r = load(R"({"auth_profiles": {
        "basic": {"type": "basic", "username": "u", "password": {"file": )" +
                                  jsonString(password) + R"(}},
        "key": {"type": "api_key", "name": "X-Api-Key", "key": {"env": "API_KEY"}}}})",
                              {{"API_KEY", "key-from-env"}});
    ASSERT_TRUE(r.config.has_value()) << ::testing::PrintToString(messages(r));
    EXPECT_EQ(r.config->auth_profiles.at("basic").password->reveal(), "pw-from-file");
    EXPECT_EQ(r.config->auth_profiles.at("key").key->reveal(), "key-from-env");
    EXPECT_EQ(r.config->auth_profiles.at("key").key_name, "X-Api-Key");
    EXPECT_EQ(r.config->auth_profiles.at("key").placement, AuthProfile::Placement::header);
}

// ---------------------------------------------------------------------------------------------
// Agents' API keys: kept as SHA-256 digests only.

TEST(ConfigSecretsTest, AgentKeyFromEnvIsStoredAsItsDigest) {
    const LoadResult r = load(R"({"auth": {"mode": "api_key",
                                  "agents": [{"id": "a", "api_key": {"env": "KEY"}}]}})",
                              {{"KEY", "abc-key-0123456789"}});
    ASSERT_TRUE(r.config.has_value()) << ::testing::PrintToString(messages(r));
    const Agent& agent = r.config->auth.agents.at(0);
    ASSERT_TRUE(agent.api_key.has_value());
    EXPECT_EQ(agent.api_key->reveal(), kSha256OfBotKey);
    EXPECT_EQ(agent.api_key->source(), "env:KEY");
}

TEST(ConfigSecretsTest, AgentKeyFromFileIsStoredAsItsDigest) {
    const TempDir dir;
    const std::string path = dir.write("key", "abc-key-0123456789\n");
    const LoadResult r = load(R"({"auth": {"mode": "api_key",
                                  "agents": [{"id": "a", "api_key": {"file": )" +
                              jsonString(path) + "}}]}}");
    ASSERT_TRUE(r.config.has_value()) << ::testing::PrintToString(messages(r));
    EXPECT_EQ(r.config->auth.agents.at(0).api_key->reveal(), kSha256OfBotKey);
}

TEST(ConfigSecretsTest, AgentKeyGivenAsDigest) {
    const LoadResult r = load(R"({"auth": {"mode": "api_key", "agents": [{"id": "a",
        "api_key": {"sha256": "7430377A1F8322805068DA3E9618A72B3FB4A0552D5A59B42D7DD6161E514BCE"}}]}})");
    ASSERT_TRUE(r.config.has_value()) << ::testing::PrintToString(messages(r));
    const Secret& key = *r.config->auth.agents.at(0).api_key;
    EXPECT_EQ(key.reveal(), kSha256OfBotKey);
    EXPECT_EQ(key.source(), "sha256");
}

TEST(ConfigSecretsTest, BadDigests) {
    const std::string bad63(63, 'a');
    const std::string badChar = std::string(63, 'a') + "g";
    EXPECT_THAT(
        errorsOf(R"({"auth": {"agents": [{"id": "a", "api_key": {"sha256": ")" + bad63 +
                 R"("}}, {"id": "b", "api_key": {"sha256": ")" + badChar + R"("}}]}})"),
        ElementsAre(
            "auth.agents[0].api_key.sha256: expected 64 hexadecimal digits (a SHA-256 digest)",
            "auth.agents[1].api_key.sha256: expected 64 hexadecimal digits (a SHA-256 digest)"));
}

TEST(ConfigSecretsTest, DigestIsOnlyForAgentKeys) {
    EXPECT_THAT(
        errorsOf(bearerProfile(R"({"sha256": ")" + std::string(kSha256OfBotKey) + R"("})")),
        ElementsAre(
            R"(auth_profiles.p.token.sha256: unknown secret source; expected {"env": "VARIABLE"} or {"file": "/path"})"));
}

// ---------------------------------------------------------------------------------------------
// Malformed references, and literals where a secret belongs.

TEST(ConfigSecretsTest, MalformedReferences) {
    EXPECT_THAT(
        errorsOf(R"({"auth_profiles": {
            "a": {"type": "bearer", "token": {"vault": "kv/gh"}},
            "b": {"type": "bearer", "token": {"env": "A", "file": "/b"}},
            "c": {"type": "bearer", "token": {"env": 5}},
            "d": {"type": "bearer", "token": {}},
            "e": {"type": "bearer", "token": null},
            "f": {"type": "bearer", "token": ["x"]}}})"),
        ElementsAre(
            R"(auth_profiles.a.token.vault: unknown secret source; expected {"env": "VARIABLE"} or {"file": "/path"})",
            R"(auth_profiles.b.token: expected {"env": "VARIABLE"} or {"file": "/path"}, got an object)",
            R"(auth_profiles.c.token: expected {"env": "VARIABLE"} or {"file": "/path"}, got an object)",
            R"(auth_profiles.d.token: expected {"env": "VARIABLE"} or {"file": "/path"}, got an object)",
            R"(auth_profiles.e.token: expected {"env": "VARIABLE"} or {"file": "/path"}, got null)",
            R"(auth_profiles.f.token: expected {"env": "VARIABLE"} or {"file": "/path"}, got an array)"));
}

TEST(ConfigSecretsTest, LiteralStringIsRefusedWithoutBeingEchoed) {
    const LoadResult r = load(bearerProfile(R"("ghp_LITERAL_SECRET_0123456789")"));
    EXPECT_FALSE(r.config.has_value());
    EXPECT_THAT(messages(r), ElementsAre("auth_profiles.p.token: " + kLiteralExpected));
    for (const std::string& m : messages(r)) {
        EXPECT_THAT(m, Not(HasSubstr("LITERAL_SECRET")));
    }
}

TEST(ConfigSecretsTest, LiteralInEverySecretFieldIsRefusedWithoutBeingEchoed) {
    const std::string text = R"({
        "auth": {"mode": "api_key", "agents": [{"id": "a", "api_key": "agent-literal-XYZZY"}]},
        "auth_profiles": {
            "b": {"type": "basic", "username": "u", "password": "password-literal-XYZZY"},
            "k": {"type": "api_key", "name": "X-Key", "key": "key-literal-XYZZY"}}})";
    const std::vector<std::string> errors = errorsOf(text);
    EXPECT_THAT(
        errors,
        ElementsAre(
            R"(auth.agents[0].api_key: secrets are not written in the config file; expected {"env": "VARIABLE"}, {"file": "/path"} or {"sha256": "HEX"}, got a string)",
            "auth_profiles.b.password: " + kLiteralExpected,
            "auth_profiles.k.key: " + kLiteralExpected));
    for (const std::string& m : errors) {
        EXPECT_THAT(m, Not(HasSubstr("XYZZY")));
    }
}

TEST(ConfigSecretsTest, NumericLiteralIsNotEchoedEither) {
    const std::vector<std::string> errors = errorsOf(
        R"({"auth": {"agents": [{"id": "a", "api_key": 8675309123}]},
            "auth_profiles": {"p": {"type": "bearer", "token": 4242424242}}})");
    EXPECT_THAT(
        errors,
        ElementsAre(
            R"(auth.agents[0].api_key: expected {"env": "VARIABLE"}, {"file": "/path"} or {"sha256": "HEX"}, got a number)",
            R"(auth_profiles.p.token: expected {"env": "VARIABLE"} or {"file": "/path"}, got a number)"));
    for (const std::string& m : errors) {
        EXPECT_THAT(m, Not(HasSubstr("8675309123")));
        EXPECT_THAT(m, Not(HasSubstr("4242424242")));
    }
}

TEST(ConfigSecretsTest, ResolvedSecretsNeverAppearInErrors) {
    // Every secret resolves; every other part of the file is wrong in some way, including the
    // errors that talk about the secrets themselves (duplicate agent keys).
    const TempDir dir;
    const std::string file = dir.write("pw", "FILE-SECRET-Q7Z\n");
    const EnvMap env = {{"TOKEN", "ENV-SECRET-TOKEN-Q7Z"},
                        {"KEY_A", "SHARED-AGENT-KEY-Q7Z"},
                        {"KEY_B", "SHARED-AGENT-KEY-Q7Z"}};
    const std::string text = R"({
        "server": {"listen": "0.0.0.0:80", "thread": 2},
        "auth": {"mode": "api_key", "agents": [
            {"id": "a", "api_key": {"env": "KEY_A"}, "workspace": "nowhere"},
            {"id": "b", "api_key": {"env": "KEY_B"}}]},
        "auth_profiles": {
            "gh": {"type": "bearer", "token": {"env": "TOKEN"}, "password": {"env": "TOKEN"},
                   "headers": {"X-Bad": "a\nb"}},
            "basic": {"type": "basic", "username": "u", "password": {"file": )" +
                             jsonString(file) + R"(}, "tokn": 1}},
        "operations": [{"name": "o", "description": "d", "protocol": "rest",
                        "auth_profile": "gh", "execution": {"max_items": -1}}]})";
    const std::vector<std::string> errors = errorsOf(text, env);
    EXPECT_EQ(errors.size(), 7U) << ::testing::PrintToString(errors);
    for (const std::string& m : errors) {
        EXPECT_THAT(m, Not(HasSubstr("Q7Z")));
    }
}

TEST(ConfigSecretsTest, FullConfigErrorsDoNotLeakItsSecrets) {
    // The full config with one break: its secrets resolve, and none may show in the error.
    std::string text(kFullConfig);
    const std::string from = R"("threads": 8)";
    text.replace(text.find(from), from.size(), R"("threads": -8)");
    const std::vector<std::string> errors = errorsOf(text, fullConfigEnv());
    EXPECT_THAT(errors, ElementsAre("server.threads: expected an integer from 1 to 1024, got -8"));
    for (const auto& [name, value] : fullConfigEnv()) {
        for (const std::string& m : errors) {
            EXPECT_THAT(m, Not(HasSubstr(value)));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Secret itself.

TEST(ConfigSecretsTest, FormattingPrintsRedacted) {
    const Secret secret({SecretRef::Kind::env, "TOKEN"}, "hunter2");
    EXPECT_EQ(fmt::format("{}", secret), "[redacted]");
    EXPECT_EQ(fmt::format("token={} again={}", secret, secret),
              "token=[redacted] again=[redacted]");
    EXPECT_EQ(fmt::format("{:>12}", secret), "[redacted]");  // specs cannot reveal anything
    std::ostringstream out;
    out << secret;
    EXPECT_EQ(out.str(), "[redacted]");
    EXPECT_THAT(::testing::PrintToString(secret), Not(HasSubstr("hunter2")));
    EXPECT_EQ(secret.reveal(), "hunter2");
    EXPECT_EQ(secret.source(), "env:TOKEN");
    EXPECT_FALSE(secret.empty());
}

TEST(ConfigSecretsTest, LoadedSecretsPrintRedacted) {
    const auto token =
        tokenOf(load(bearerProfile(R"({"env": "GH_TOKEN"})"), {{"GH_TOKEN", "ghp-value-42"}}));
    ASSERT_TRUE(token.has_value());
    EXPECT_EQ(fmt::format("{}", *token), "[redacted]");
    std::ostringstream out;
    out << *token;
    EXPECT_EQ(out.str(), "[redacted]");
}

TEST(ConfigSecretsTest, DefaultSecretIsEmpty) {
    const Secret secret;
    EXPECT_TRUE(secret.empty());
    EXPECT_EQ(fmt::format("{}", secret), "[redacted]");
}

}  // namespace
}  // namespace crank::config::test
