// Sections, defaults and syntax extensions of a configuration that loads.

#include "config/config_loader.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_test_support.h"
#include "full_config.h"

namespace crank::config::test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

/// Loads text that must be valid and returns the config.
Config loadValid(std::string_view text, EnvMap env = {}) {
    LoadResult result = load(text, std::move(env));
    EXPECT_THAT(messages(result), IsEmpty());
    if (!result.config) {
        ADD_FAILURE() << "the config did not load";
        return {};
    }
    return std::move(*result.config);
}

class ConfigFullTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() { config_ = new Config(loadValid(kFullConfig, fullConfigEnv())); }
    static void TearDownTestSuite() {
        delete config_;
        config_ = nullptr;
    }
    static const Config& config() { return *config_; }

private:
    static Config* config_;
};

Config* ConfigFullTest::config_ = nullptr;

TEST_F(ConfigFullTest, SourceIsTheNameGiven) {
    EXPECT_EQ(config().source, "crank.json");
}

TEST_F(ConfigFullTest, Server) {
    const ServerConfig& s = config().server;
    EXPECT_EQ(s.listen.host, "127.0.0.1");
    EXPECT_EQ(s.listen.port, 9090);
    EXPECT_EQ(s.threads, 8);
    EXPECT_EQ(s.max_calls_per_upstream, 3);
    EXPECT_EQ(s.effectiveMaxCallsPerUpstream(), 3);
    EXPECT_EQ(s.queue, 128);
    EXPECT_EQ(s.backlog, 256);
    EXPECT_EQ(s.max_request_body_bytes, 2097152);
    EXPECT_EQ(s.shutdown_grace_ms, 5000);
    EXPECT_EQ(s.idle_connection_timeout_ms, 15000);
    EXPECT_THAT(s.allowed_origins, ElementsAre("https://app.example.com", "http://localhost:3000"));
    EXPECT_THAT(s.allowed_hosts, ElementsAre("crank.example.com", "crank.example.com:8443"));
}

TEST_F(ConfigFullTest, StoreAndPlugins) {
    const StoreConfig& store = config().store;
    EXPECT_EQ(store.backend, "sqlite");
    EXPECT_EQ(store.path, ":memory:");
    EXPECT_EQ(store.busy_timeout_ms, 250);
    EXPECT_EQ(store.pool_size, 2);
    EXPECT_THAT(config().plugins.directories, ElementsAre("/opt/crank/plugins", "./plugins"));
    EXPECT_THAT(config().plugins.enabled, ElementsAre("rest", "grpc", "websocket"));
}

TEST_F(ConfigFullTest, AuthWorkspacesPutDefaultFirst) {
    const AuthConfig& auth = config().auth;
    EXPECT_EQ(auth.mode, AuthConfig::Mode::api_key);
    ASSERT_EQ(auth.workspaces.size(), 2U);
    EXPECT_EQ(auth.workspaces[0].id, "default");
    EXPECT_EQ(auth.workspaces[0].limits.max_concurrent_calls, 32);
    EXPECT_EQ(auth.workspaces[0].limits.max_sessions, 100);
    EXPECT_EQ(auth.workspaces[0].limits.max_jobs, 100);
    EXPECT_EQ(auth.workspaces[1].id, "team-a");
    EXPECT_EQ(auth.workspaces[1].description, "Team A");
    EXPECT_EQ(auth.workspaces[1].limits.max_concurrent_calls, 4);
    EXPECT_EQ(auth.workspaces[1].limits.max_sessions, 10);
    EXPECT_EQ(auth.workspaces[1].limits.max_jobs, 0);
}

TEST_F(ConfigFullTest, AuthAgents) {
    const auto& agents = config().auth.agents;
    ASSERT_EQ(agents.size(), 2U);
    EXPECT_EQ(agents[0].id, "bot-1");
    EXPECT_EQ(agents[0].workspace, "team-a");
    ASSERT_TRUE(agents[0].api_key.has_value());
    EXPECT_EQ(agents[0].api_key->reveal(), kSha256OfBotKey);  // the clear key is not kept
    EXPECT_EQ(agents[0].api_key->source(), "env:BOT1_KEY");
    EXPECT_EQ(agents[0].limits.max_concurrent_calls, 2);
    EXPECT_EQ(agents[0].limits.max_sessions, 3);
    EXPECT_EQ(agents[0].limits.max_jobs, 5);

    EXPECT_EQ(agents[1].id, "bot-2");
    EXPECT_EQ(agents[1].workspace, "default");
    ASSERT_TRUE(agents[1].api_key.has_value());
    EXPECT_EQ(agents[1].api_key->reveal(), kSha256OfEmpty);  // lower-cased
    EXPECT_EQ(agents[1].api_key->source(), "sha256");
    EXPECT_EQ(agents[1].api_key->ref().kind, SecretRef::Kind::sha256);
    EXPECT_EQ(agents[1].limits.max_concurrent_calls, 8);  // agent defaults
    EXPECT_EQ(agents[1].limits.max_sessions, 20);
    EXPECT_EQ(agents[1].limits.max_jobs, 20);
}

TEST_F(ConfigFullTest, AuthProfiles) {
    const auto& profiles = config().auth_profiles;
    ASSERT_EQ(profiles.size(), 4U);

    const AuthProfile& github = profiles.at("github");
    EXPECT_EQ(github.name, "github");
    EXPECT_EQ(github.type, AuthProfile::Type::bearer);
    ASSERT_TRUE(github.token.has_value());
    EXPECT_EQ(github.token->reveal(), "ghp-full-config-token");
    EXPECT_EQ(github.token->source(), "env:GITHUB_TOKEN");
    EXPECT_FALSE(github.password.has_value());
    EXPECT_FALSE(github.key.has_value());
    EXPECT_THAT(github.headers,
                ElementsAre(std::pair<const std::string, std::string>("Accept", "application/json"),
                            std::pair<const std::string, std::string>("X-GitHub-Api-Version",
                                                                      "2022-11-28")));

    const AuthProfile& legacy = profiles.at("legacy");
    EXPECT_EQ(legacy.type, AuthProfile::Type::basic);
    EXPECT_EQ(legacy.username, "svc");
    ASSERT_TRUE(legacy.password.has_value());
    EXPECT_EQ(legacy.password->reveal(), "legacy-full-config-password");
    EXPECT_FALSE(legacy.token.has_value());

    const AuthProfile& weather = profiles.at("weather");
    EXPECT_EQ(weather.type, AuthProfile::Type::api_key);
    EXPECT_EQ(weather.placement, AuthProfile::Placement::query);
    EXPECT_EQ(weather.key_name, "appid");
    ASSERT_TRUE(weather.key.has_value());
    EXPECT_EQ(weather.key->reveal(), "weather-full-config-key");

    const AuthProfile& open = profiles.at("public");
    EXPECT_EQ(open.type, AuthProfile::Type::none);
    EXPECT_EQ(open.placement, AuthProfile::Placement::header);
    EXPECT_TRUE(open.headers.empty());
}

TEST_F(ConfigFullTest, UnaryOperation) {
    ASSERT_EQ(config().operations.size(), 4U);
    const OperationConfig& op = config().operations[0];
    EXPECT_EQ(op.name, "get_issue");
    EXPECT_EQ(op.title, "Get an issue");
    EXPECT_EQ(op.description, "Reads one GitHub issue.");
    EXPECT_EQ(op.protocol, "rest");
    EXPECT_EQ(op.auth_profile, "github");
    EXPECT_EQ(op.upstream, "github-api");
    EXPECT_EQ(
        op.config_json,
        R"({"url":"https://api.github.com/repos/{owner}/{repo}/issues/{number}","method":"GET"})");
    EXPECT_EQ(op.input_schema_json,
              R"({"type":"object","required":["owner"],"properties":{"owner":{"type":"string"}}})");
    EXPECT_EQ(op.execution.mode, ExecutionMode::unary);
    EXPECT_EQ(op.execution.transport_behavior, TransportBehavior::request_response);
    EXPECT_THAT(op.toolNames(), ElementsAre("get_issue"));
}

TEST_F(ConfigFullTest, SessionOperationHasEveryExecutionField) {
    ASSERT_EQ(config().operations.size(), 4U);
    const OperationConfig& op = config().operations[1];
    EXPECT_EQ(op.name, "watch_prices");
    EXPECT_EQ(op.protocol, "websocket");
    EXPECT_EQ(op.title, "");
    EXPECT_EQ(op.auth_profile, "");
    EXPECT_EQ(op.config_json, "{}");
    EXPECT_EQ(op.input_schema_json, R"({"type":"object"})");
    const ExecutionConfig& e = op.execution;
    EXPECT_EQ(e.mode, ExecutionMode::session);
    EXPECT_EQ(e.transport_behavior, TransportBehavior::server_stream);
    EXPECT_EQ(e.window_duration_ms, 2000);
    EXPECT_EQ(e.poll_interval_ms, 250);
    EXPECT_EQ(e.upstream_timeout_ms, 7000);
    EXPECT_EQ(e.idle_timeout_ms, 60000);
    EXPECT_EQ(e.max_session_lifetime_ms, 600000);
    EXPECT_EQ(e.max_items, 500);
    EXPECT_EQ(e.max_bytes, 131072);
    EXPECT_EQ(e.aggregation_mode, "summary_plus_samples");
    EXPECT_EQ(e.items_path, "$.data.ticks");
    EXPECT_EQ(e.summary_path, "$.summary");
    EXPECT_EQ(e.cursor_path, "$.next");
    EXPECT_EQ(e.status_path, "$.state");
    EXPECT_EQ(e.done_path, "$.finished");
    EXPECT_TRUE(e.truncate_item_fields);
    EXPECT_EQ(e.max_field_length, 512);
    EXPECT_THAT(e.redacted_paths, ElementsAre("$.account", "$.owner.email"));
    EXPECT_TRUE(e.drop_duplicates);
    EXPECT_DOUBLE_EQ(e.sampling_rate, 0.25);
    EXPECT_EQ(e.start_tool_name, "prices_open");
    EXPECT_EQ(e.poll_tool_name, "prices_next");
    EXPECT_EQ(e.stop_tool_name, "prices_close");
    EXPECT_EQ(e.status_tool_name, "");
    EXPECT_THAT(op.toolNames(), ElementsAre("prices_open", "prices_next", "prices_close"));
}

TEST_F(ConfigFullTest, AsyncJobOperationMixesDefaultAndCustomToolNames) {
    ASSERT_EQ(config().operations.size(), 4U);
    const OperationConfig& op = config().operations[2];
    EXPECT_EQ(op.auth_profile, "weather");
    EXPECT_EQ(op.execution.mode, ExecutionMode::async_job);
    EXPECT_EQ(op.execution.start_tool_name, "");
    EXPECT_THAT(op.toolNames(),
                ElementsAre("export_start", "export_progress", "export_fetch", "export_abort"));
}

TEST_F(ConfigFullTest, WindowOperation) {
    ASSERT_EQ(config().operations.size(), 4U);
    const OperationConfig& op = config().operations[3];
    EXPECT_EQ(op.execution.mode, ExecutionMode::window);
    EXPECT_EQ(op.execution.transport_behavior, TransportBehavior::server_stream);
    EXPECT_EQ(op.execution.aggregation_mode, "stats");
    EXPECT_EQ(op.execution.max_items, ExecutionDefaults::max_items);
    EXPECT_THAT(op.toolNames(), ElementsAre("tail_logs"));
}

TEST(ConfigDefaultsTest, EmptyObjectGivesDocumentedDefaults) {
    const Config c = loadValid("{}");
    EXPECT_EQ(c.server.listen.toString(), "127.0.0.1:8080");
    EXPECT_EQ(c.server.threads, 16);
    // 16 threads: 12 call slots, 9 of them for one upstream at most.
    EXPECT_EQ(c.server.effectiveMaxConcurrentCalls(), 12);
    EXPECT_EQ(c.server.max_calls_per_upstream, 0);
    EXPECT_EQ(c.server.effectiveMaxCallsPerUpstream(), 9);
    EXPECT_EQ(c.server.keep_alive_wait_us, 2'000);
    EXPECT_EQ(c.server.queue, 64);
    EXPECT_EQ(c.server.backlog, 64);
    EXPECT_EQ(c.server.max_request_body_bytes, 1024 * 1024);
    EXPECT_EQ(c.server.shutdown_grace_ms, 10'000);
    EXPECT_EQ(c.server.idle_connection_timeout_ms, 30'000);
    EXPECT_EQ(c.server.memory_trim_interval_ms, 60'000);
    EXPECT_THAT(c.server.allowed_origins, IsEmpty());
    EXPECT_THAT(c.server.allowed_hosts, IsEmpty());
    EXPECT_EQ(c.store.backend, "sqlite");
    EXPECT_EQ(c.store.path, "./crank.db");
    EXPECT_EQ(c.store.busy_timeout_ms, 5'000);
    EXPECT_EQ(c.store.pool_size, 4);
    EXPECT_EQ(c.store.cache_kib, 2'000);
    EXPECT_THAT(c.plugins.directories, IsEmpty());
    EXPECT_THAT(c.plugins.enabled, IsEmpty());
    EXPECT_EQ(c.auth.mode, AuthConfig::Mode::none);
    ASSERT_EQ(c.auth.workspaces.size(), 1U);
    EXPECT_EQ(c.auth.workspaces[0].id, "default");
    EXPECT_THAT(c.auth.agents, IsEmpty());
    EXPECT_TRUE(c.auth_profiles.empty());
    EXPECT_THAT(c.operations, IsEmpty());
}

TEST(ConfigDefaultsTest, EmptySectionsGiveDefaultsToo) {
    const Config c = loadValid(
        R"({"server": {}, "store": {}, "plugins": {}, "auth": {}, "auth_profiles": {},
            "operations": []})");
    EXPECT_EQ(c.server.listen.toString(), "127.0.0.1:8080");
    EXPECT_EQ(c.store.path, "./crank.db");
    EXPECT_EQ(c.auth.mode, AuthConfig::Mode::none);
    ASSERT_EQ(c.auth.workspaces.size(), 1U);
    EXPECT_TRUE(c.auth_profiles.empty());
}

TEST(ConfigDefaultsTest, OperationExecutionDefaults) {
    const Config c = loadValid(withOperations({R"({"name": "ping", "description": "Pings.",
                                                  "protocol": "rest"})"}));
    ASSERT_EQ(c.operations.size(), 1U);
    const OperationConfig& op = c.operations[0];
    EXPECT_EQ(op.config_json, "{}");
    EXPECT_EQ(op.input_schema_json, R"({"type":"object"})");
    const ExecutionConfig& e = op.execution;
    EXPECT_EQ(e.mode, ExecutionMode::unary);
    EXPECT_EQ(e.transport_behavior, TransportBehavior::request_response);
    EXPECT_EQ(e.window_duration_ms, 10'000);
    EXPECT_EQ(e.poll_interval_ms, 1'000);
    EXPECT_EQ(e.upstream_timeout_ms, 30'000);
    EXPECT_EQ(e.idle_timeout_ms, 300'000);
    EXPECT_EQ(e.max_session_lifetime_ms, 3'600'000);
    EXPECT_EQ(e.max_items, 100);
    EXPECT_EQ(e.max_bytes, 256 * 1024);
    EXPECT_EQ(e.aggregation_mode, "raw_items");
    EXPECT_EQ(e.aggregation_config_json, "{}");
    EXPECT_EQ(e.max_result_bytes, ExecutionDefaults::max_result_bytes);
    EXPECT_FALSE(e.items_path.has_value());
    EXPECT_FALSE(e.summary_path.has_value());
    EXPECT_FALSE(e.cursor_path.has_value());
    EXPECT_FALSE(e.status_path.has_value());
    EXPECT_FALSE(e.done_path.has_value());
    EXPECT_FALSE(e.truncate_item_fields);
    EXPECT_EQ(e.max_field_length, 2'048);
    EXPECT_THAT(e.redacted_paths, IsEmpty());
    EXPECT_FALSE(e.drop_duplicates);
    EXPECT_DOUBLE_EQ(e.sampling_rate, 1.0);
    EXPECT_THAT(op.toolNames(), ElementsAre("ping"));
}

TEST(ConfigDefaultsTest, DefaultFamilyToolNames) {
    const Config c = loadValid(withOperations({operation("feed", R"({"mode": "session"})"),
                                               operation("build", R"({"mode": "async_job"})")}));
    ASSERT_EQ(c.operations.size(), 2U);
    EXPECT_THAT(c.operations[0].toolNames(), ElementsAre("feed_start", "feed_poll", "feed_stop"));
    EXPECT_THAT(c.operations[1].toolNames(),
                ElementsAre("build_start", "build_status", "build_result", "build_cancel"));
}

TEST(ConfigDefaultsTest, ExplicitDefaultWorkspaceIsNotDuplicated) {
    const Config c = loadValid(R"({"auth": {"workspaces": [{"id": "other"}, {"id": "default",
        "limits": {"max_jobs": 7}}]}})");
    ASSERT_EQ(c.auth.workspaces.size(), 2U);
    EXPECT_EQ(c.auth.workspaces[0].id, "other");
    EXPECT_EQ(c.auth.workspaces[1].id, "default");
    EXPECT_EQ(c.auth.workspaces[1].limits.max_jobs, 7);
}

TEST(ConfigDefaultsTest, BoundaryValuesAreAccepted) {
    const Config c = loadValid(withOperations({operation("edge", R"({"mode": "window",
        "max_items": 100000, "max_bytes": 67108864, "window_duration_ms": 86400000,
        "max_field_length": 1048576, "sampling_rate": 1})")}));
    ASSERT_EQ(c.operations.size(), 1U);
    EXPECT_EQ(c.operations[0].execution.max_items, 100'000);
    EXPECT_EQ(c.operations[0].execution.max_bytes, 64LL * 1024 * 1024);
    EXPECT_EQ(c.operations[0].execution.window_duration_ms, 86'400'000);
    EXPECT_DOUBLE_EQ(c.operations[0].execution.sampling_rate, 1.0);
}

TEST(ConfigSyntaxTest, CommentsAndTrailingCommasAreAccepted) {
    const Config c = loadValid(R"(/* leading block comment */
        {
          // line comment before a key
          "server": {
            "threads": 3, /* after a value */
            "allowed_hosts": ["a.example.com", "b.example.com",],  // trailing comma in an array
          },  // trailing comma in an object
          "plugins": {"enabled": ["rest",],},
        }
        // trailing line comment
        /* trailing block comment */)");
    EXPECT_EQ(c.server.threads, 3);
    EXPECT_THAT(c.server.allowed_hosts, ElementsAre("a.example.com", "b.example.com"));
    EXPECT_THAT(c.plugins.enabled, ElementsAre("rest"));
}

TEST(ConfigSyntaxTest, SchemaKeyIsAcceptedAtTheRootOnly) {
    EXPECT_THAT(errorsOf(R"({"$schema": "x"})"), IsEmpty());
    EXPECT_THAT(errorsOf(R"({"server": {"$schema": "x"}})"),
                ElementsAre(R"(server["$schema"]: unknown key)"));
}

TEST(ConfigSectionsTest, EachTopLevelMemberIsKeptAsWrittenForAReloadToCompare) {
    const LoadResult r = loadConfigText(
        "{\n  // the listener\n  \"server\": {\"threads\": 9, },\n  \"upstreams\": []\n}", "c.json",
        optionsWith({}));
    ASSERT_TRUE(r.config.has_value()) << ::testing::PrintToString(messages(r));
    EXPECT_EQ(r.config->sections.at("server"), R"({"threads":9})");  // comments and commas gone
    EXPECT_EQ(r.config->sections.at("upstreams"), "[]");
    EXPECT_EQ(r.config->sections.count("store"), 0U);  // not written: not there
}

TEST(ConfigListenOverrideTest, ReplacesTheConfiguredAddress) {
    LoadOptions options = optionsWith({});
    options.listen_override = ListenAddress{"::1", 0};
    const LoadResult r =
        loadConfigText(R"({"server": {"listen": "127.0.0.1:9000"}})", "c.json", options);
    ASSERT_TRUE(r.config.has_value()) << ::testing::PrintToString(messages(r));
    EXPECT_EQ(r.config->server.listen.toString(), "[::1]:0");
}

TEST(ConfigListenOverrideTest, AppliesWithoutAServerSection) {
    LoadOptions options = optionsWith({});
    options.listen_override = ListenAddress{"127.0.0.2", 7000};
    const LoadResult r = loadConfigText("{}", "c.json", options);
    ASSERT_TRUE(r.config.has_value()) << ::testing::PrintToString(messages(r));
    EXPECT_EQ(r.config->server.listen.toString(), "127.0.0.2:7000");
}

TEST(ConfigListenOverrideTest, IsCheckedAgainstAuthModeNone) {
    // A loopback listen in the file does not excuse a public --listen without authentication.
    LoadOptions options = optionsWith({});
    options.listen_override = ListenAddress{"0.0.0.0", 8080};
    const LoadResult r =
        loadConfigText(R"({"server": {"listen": "127.0.0.1:8080"}})", "c.json", options);
    EXPECT_FALSE(r.config.has_value());
    EXPECT_THAT(messages(r),
                ElementsAre(R"(auth.mode: "none" is only allowed while server.listen is a )"
                            R"(loopback address (it is 0.0.0.0:8080); set auth.mode to )"
                            R"("api_key" and define agents)"));
}

TEST(ConfigListenOverrideTest, LoopbackOverrideRescuesAPublicListen) {
    LoadOptions options = optionsWith({});
    options.listen_override = ListenAddress{"127.0.0.1", 0};
    const LoadResult r =
        loadConfigText(R"({"server": {"listen": "0.0.0.0:80"}})", "c.json", options);
    ASSERT_TRUE(r.config.has_value()) << ::testing::PrintToString(messages(r));
    EXPECT_EQ(r.config->server.listen.toString(), "127.0.0.1:0");
}

TEST(ConfigEnumNamesTest, ToStringMatchesTheConfigSpelling) {
    EXPECT_EQ(toString(ExecutionMode::unary), "unary");
    EXPECT_EQ(toString(ExecutionMode::window), "window");
    EXPECT_EQ(toString(ExecutionMode::session), "session");
    EXPECT_EQ(toString(ExecutionMode::async_job), "async_job");
    EXPECT_EQ(toString(TransportBehavior::request_response), "request_response");
    EXPECT_EQ(toString(TransportBehavior::server_stream), "server_stream");
}

TEST(ConfigEnumNamesTest, AggregatorNameAndConfigAreKept) {
    const Config c = loadValid(withOperations({operation(
        "w", R"({"mode": "window", "aggregation_mode": "my_sketch", "max_result_bytes": 4096,
                 "aggregation": {"numeric_paths": ["latency_ms"], "top_k": 5}})")}));
    ASSERT_EQ(c.operations.size(), 1U);
    EXPECT_EQ(c.operations[0].execution.aggregation_mode, "my_sketch");
    EXPECT_EQ(c.operations[0].execution.aggregation_config_json,
              R"({"numeric_paths":["latency_ms"],"top_k":5})");
    EXPECT_EQ(c.operations[0].execution.max_result_bytes, 4096);
}

}  // namespace
}  // namespace crank::config::test

namespace crank::config::test {

TEST(ConfigMcpSectionTest, DefaultsWhenAbsent) {
    const LoadResult result = load("{}");
    ASSERT_TRUE(result.config) << ::testing::PrintToString(messages(result));
    const McpConfig& m = result.config->mcp;
    EXPECT_EQ(m.path, "/mcp");
    EXPECT_EQ(m.max_sessions, 10'000);
    EXPECT_EQ(m.session_idle_timeout_ms, 1'800'000);
    EXPECT_EQ(m.heartbeat_interval_ms, 15'000);
    EXPECT_EQ(m.max_streams, 10'000);
    EXPECT_EQ(m.stream_buffer_bytes, 4 * 1024 * 1024);
    EXPECT_EQ(m.stream_stall_timeout_ms, 60'000);
    EXPECT_EQ(m.replay_events, 256);
    EXPECT_EQ(m.replay_bytes, 1024 * 1024);
    EXPECT_EQ(m.replay_streams, 64);
    EXPECT_EQ(m.tools_page_size, 100);
    EXPECT_EQ(m.sse_retry_ms, 1'000);
}

TEST(ConfigMcpSectionTest, EveryKeyIsRead) {
    const LoadResult result = load(R"({"mcp": {"path": "/gateway/mcp", "max_sessions": 5,
        "session_idle_timeout_ms": 60000, "heartbeat_interval_ms": 250, "max_streams": 7,
        "stream_buffer_bytes": 4096, "stream_stall_timeout_ms": 0, "replay_events": 0, "replay_bytes": 0,
        "replay_streams": 3, "tools_page_size": 2, "sse_retry_ms": 50}})");
    ASSERT_TRUE(result.config) << ::testing::PrintToString(messages(result));
    const McpConfig& m = result.config->mcp;
    EXPECT_EQ(m.path, "/gateway/mcp");
    EXPECT_EQ(m.max_sessions, 5);
    EXPECT_EQ(m.session_idle_timeout_ms, 60'000);
    EXPECT_EQ(m.heartbeat_interval_ms, 250);
    EXPECT_EQ(m.max_streams, 7);
    EXPECT_EQ(m.stream_buffer_bytes, 4096);
    EXPECT_EQ(m.stream_stall_timeout_ms, 0);
    EXPECT_EQ(m.replay_events, 0);
    EXPECT_EQ(m.replay_bytes, 0);
    EXPECT_EQ(m.replay_streams, 3);
    EXPECT_EQ(m.tools_page_size, 2);
    EXPECT_EQ(m.sse_retry_ms, 50);
}

TEST(ConfigMcpSectionTest, ToolTaskLimitsHaveDefaultsAndBounds) {
    const McpConfig defaults = loadValid("{}").mcp;
    EXPECT_EQ(defaults.max_tool_tasks, 1'000);
    EXPECT_EQ(defaults.max_tool_tasks_per_agent, 100);
    EXPECT_EQ(defaults.max_running_tool_tasks, 64);
    EXPECT_EQ(defaults.tool_task_ttl_ms, 3'600'000);
    const McpConfig set = loadValid(R"({"mcp": {"max_tool_tasks": 10, "max_tool_tasks_per_agent": 2,
        "max_running_tool_tasks": 3, "tool_task_ttl_ms": 5000}})")
                              .mcp;
    EXPECT_EQ(set.max_tool_tasks, 10);
    EXPECT_EQ(set.max_tool_tasks_per_agent, 2);
    EXPECT_EQ(set.max_running_tool_tasks, 3);
    EXPECT_EQ(set.tool_task_ttl_ms, 5'000);
    EXPECT_THAT(
        errorsOf(R"({"mcp": {"max_running_tool_tasks": 0}})"),
        ::testing::ElementsAre("mcp.max_running_tool_tasks: expected a positive integer, got 0"));
}

TEST(ConfigMcpSectionTest, ErrorsNameTheKey) {
    EXPECT_THAT(errorsOf(R"({"mcp": {"path": "mcp", "max_session": 3, "tools_page_size": 0}})"),
                ::testing::UnorderedElementsAre(
                    R"(mcp.path: expected an absolute URL path such as "/mcp", got "mcp")",
                    R"(mcp.max_session: unknown key (did you mean "max_sessions"?))",
                    "mcp.tools_page_size: expected a positive integer, got 0"));
}

TEST(ConfigLog, TheLevelIsReadAndAnUnknownOneIsRefused) {
    const LoadResult set = load(R"({"log": {"level": "debug"}})");
    ASSERT_TRUE(set.config.has_value()) << messages(set)[0];
    EXPECT_EQ(set.config->log_level, "debug");
    EXPECT_EQ(load("{}").config->log_level, "") << "unset: the command line's, else info";
    const std::vector<std::string> bad = errorsOf(R"({"log": {"level": "loud", "colour": 1}})");
    ASSERT_EQ(bad.size(), 2U);
    EXPECT_NE(bad[0].find("log.level"), std::string::npos) << bad[0];
    EXPECT_NE(bad[1].find("log.colour"), std::string::npos) << bad[1];
}

}  // namespace crank::config::test

namespace crank::config::test {

TEST(ConfigUpstreamsTest, ReadsEveryMemberWithItsDefaults) {
    const Config c = loadValid(R"({"upstreams": [
        {"name": "docs", "config": {"command": "node", "args": ["server.mjs"]}},
        {"name": "git", "protocol": "mcp", "naming": "keep", "prefix": "g", "separator": "__",
         "request_timeout_ms": 1000, "client_request_timeout_ms": 2000, "max_list_items": 5,
         "config": {}}]})");
    ASSERT_EQ(c.upstreams.size(), 2U);
    const UpstreamConfig& docs = c.upstreams[0];
    EXPECT_EQ(docs.protocol, "mcp");
    EXPECT_EQ(docs.workspace, "default");
    EXPECT_EQ(docs.naming, UpstreamConfig::Naming::prefix);
    EXPECT_EQ(docs.prefix, "docs");
    EXPECT_EQ(docs.separator, "_");
    EXPECT_EQ(docs.config_json, R"({"command":"node","args":["server.mjs"]})");
    EXPECT_EQ(docs.request_timeout_ms, 300'000);
    EXPECT_EQ(docs.publishedName("search"), "docs_search");
    const UpstreamConfig& git = c.upstreams[1];
    EXPECT_EQ(git.naming, UpstreamConfig::Naming::keep);
    EXPECT_EQ(git.publishedName("log"), "log");
    EXPECT_EQ(git.separator, "__");
    EXPECT_EQ(git.request_timeout_ms, 1000);
    EXPECT_EQ(git.client_request_timeout_ms, 2000);
    EXPECT_EQ(git.max_list_items, 5);
}

TEST(ConfigUpstreamsTest, ErrorsNameTheUpstreamAndTheKey) {
    EXPECT_THAT(
        errorsOf(R"({"upstreams": [
            {"name": "a b", "naming": "rename", "separator": "/", "config": [],
             "workspace": "nowhere", "protocol": "MCP", "timeout": 5},
            {"config": {}},
            {"name": "dup"}, {"name": "dup"}, 7]})"),
        ::testing::UnorderedElementsAre(
            R"(upstreams[0].name: an upstream name has 1 to 64 letters, digits, '_', '-' or '.', got "a b")",
            R"(upstreams[0].naming: expected "prefix" or "keep", got "rename")",
            R"(upstreams[0].separator: expected "_", "__", "." or "-", got "/" (did you mean "_"?))",
            "upstreams[0].config: expected an object (the adapter's config), got an array",
            R"(upstreams[0].protocol: an adapter name has 1 to 64 lowercase letters, digits or '_', got "MCP")",
            R"(upstreams[0].timeout: unknown key)",
            R"(upstreams[0].prefix: a prefix has letters, digits, '_', '-' or '.', got "a b")",
            R"(upstreams[0].workspace: no workspace "nowhere" is defined in auth.workspaces)",
            "upstreams[1].name: is required (a non-empty string)",
            R"(upstreams[3].name: upstream "dup" is already defined at upstreams[2])",
            "upstreams[4]: expected an object, got 7"));
    EXPECT_THAT(errorsOf(R"({"upstreams": {"name": "x"}})"),
                ElementsAre("upstreams: expected an array of upstreams, got an object"));
}

}  // namespace crank::config::test
