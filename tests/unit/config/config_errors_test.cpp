// Every kind of configuration error, with its exact path and message.

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_test_support.h"

namespace crank::config::test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// ---------------------------------------------------------------------------------------------
// The example of the issue, and numbers.

TEST(ConfigErrorsTest, NegativeMaxItemsOfTheThirdOperation) {
    const std::string text =
        withOperations({operation("a"), operation("b"), operation("c", R"({"max_items": -5})")});
    EXPECT_THAT(
        errorsOf(text),
        ElementsAre("operations[2].execution.max_items: expected a positive integer, got -5"));
}

TEST(ConfigErrorsTest, ErrorKeepsPathAndMessageApart) {
    const LoadResult r = load(withOperations({operation("a", R"({"max_items": 0})")}));
    ASSERT_EQ(r.errors.size(), 1U);
    EXPECT_EQ(r.errors[0].path, "operations[0].execution.max_items");
    EXPECT_EQ(r.errors[0].message, "expected a positive integer, got 0");
    EXPECT_FALSE(r.config.has_value());
}

TEST(ConfigErrorsTest, ExecutionIntegersOutOfRange) {
    const std::string text = withOperations({operation("a", R"({"mode": "window",
        "max_items": 1000000001, "max_bytes": 1099511627777, "window_duration_ms": 0,
        "poll_interval_ms": 86400001, "upstream_timeout_ms": -1, "max_field_length": 1048577,
        "max_result_bytes": 16777217})")});
    EXPECT_THAT(
        errorsOf(text),
        ElementsAre(
            "operations[0].execution.window_duration_ms: expected a positive integer, got 0",
            "operations[0].execution.poll_interval_ms: must be at most 86400000, got 86400001",
            "operations[0].execution.upstream_timeout_ms: expected a positive integer, got -1",
            "operations[0].execution.max_items: must be at most 1000000000, got 1000000001",
            "operations[0].execution.max_bytes: must be at most 1099511627776, got 1099511627777",
            "operations[0].execution.max_result_bytes: must be at most 16777216, got 16777217",
            "operations[0].execution.max_field_length: must be at most 1048576, got 1048577"));
}

TEST(ConfigErrorsTest, ExecutionIntegersOfTheWrongType) {
    const std::string text = withOperations({operation("a", R"({"max_items": "10",
        "max_bytes": 5.5, "idle_timeout_ms": true, "poll_interval_ms": null,
        "window_duration_ms": 18446744073709551615})")});
    EXPECT_THAT(
        errorsOf(text),
        ElementsAre(
            "operations[0].execution.window_duration_ms: expected a positive integer, got "
            "18446744073709551615",
            "operations[0].execution.poll_interval_ms: expected a positive integer, got null",
            "operations[0].execution.idle_timeout_ms: expected a positive integer, got true",
            R"(operations[0].execution.max_items: expected a positive integer, got "10")",
            "operations[0].execution.max_bytes: expected a positive integer, got 5.5"));
}

TEST(ConfigErrorsTest, WholeNumberWrittenAsADecimalSaysSo) {
    // "got 5" for the input 5.0 would contradict itself.
    EXPECT_THAT(
        errorsOf(withOperations({operation("a", R"({"max_items": 5.0})")})),
        ElementsAre("operations[0].execution.max_items: expected a positive integer, got 5.0"));
}

TEST(ConfigErrorsTest, ServerNumbers) {
    EXPECT_THAT(
        errorsOf(R"({"server": {"threads": 0, "queue": 100001, "backlog": "64",
            "max_request_body_bytes": 268435457, "shutdown_grace_ms": -1,
            "idle_connection_timeout_ms": 99, "memory_trim_interval_ms": -5}})"),
        ElementsAre("server.threads: expected an integer from 1 to 1024, got 0",
                    "server.queue: expected an integer from 1 to 100000, got 100001",
                    R"(server.backlog: expected an integer from 1 to 65535, got "64")",
                    "server.max_request_body_bytes: must be at most 268435456, got 268435457",
                    "server.shutdown_grace_ms: expected an integer from 0 to 600000, got -1",
                    "server.idle_connection_timeout_ms: expected an integer from 100 to 3600000, "
                    "got 99",
                    "server.memory_trim_interval_ms: expected an integer from 0 to 86400000, got "
                    "-5"));
}

// ---------------------------------------------------------------------------------------------
// Wrong types, section by section.

TEST(ConfigErrorsTest, SectionsThatAreNotObjects) {
    EXPECT_THAT(
        errorsOf(R"({"server": [], "store": "sqlite", "plugins": 1, "auth": null,
                            "auth_profiles": [], "operations": {}})"),
        ElementsAre("server: expected an object, got an array",
                    R"(store: expected an object, got "sqlite")",
                    "plugins: expected an object, got 1", "auth: expected an object, got null",
                    "auth_profiles: expected an object of named profiles, got an array",
                    "operations: expected an array of operations, got an object"));
}

TEST(ConfigErrorsTest, ServerTypes) {
    EXPECT_THAT(
        errorsOf(R"({"server": {"listen": 8080, "allowed_origins": "https://a.example.com",
                            "allowed_hosts": [1, ""]}})"),
        ElementsAre(
            "server.listen: expected a string, got 8080",
            R"(server.allowed_origins: expected an array of strings, got "https://a.example.com")",
            "server.allowed_hosts[0]: expected a non-empty string, got 1",
            R"(server.allowed_hosts[1]: expected a non-empty string, got "")"));
}

TEST(ConfigErrorsTest, ServerListenThatDoesNotParse) {
    EXPECT_THAT(
        errorsOf(R"({"server": {"listen": "example.com:80"}})"),
        ElementsAre(R"(server.listen: expected HOST:PORT (e.g. 127.0.0.1:8080 or [::1]:8080), got )"
                    R"("example.com:80": the host must be an IP address or localhost)"));
    EXPECT_THAT(
        errorsOf(R"({"server": {"listen": "127.0.0.1"}})"),
        ElementsAre(R"(server.listen: expected HOST:PORT (e.g. 127.0.0.1:8080 or [::1]:8080), got )"
                    R"("127.0.0.1": the port is missing)"));
}

TEST(ConfigErrorsTest, AllowedOriginsFormat) {
    const std::string expected =
        R"(expected an origin such as "https://app.example.com" (scheme://host[:port], no path), got )";
    EXPECT_THAT(
        errorsOf(R"({"server": {"allowed_origins": ["https://ok.example.com",
        "http://ok.example.com:8080", "app.example.com", "https://x.example.com/path", "://x",
        "https://"]}})"),
        ElementsAre("server.allowed_origins[2]: " + expected + R"("app.example.com")",
                    "server.allowed_origins[3]: " + expected + R"("https://x.example.com/path")",
                    "server.allowed_origins[4]: " + expected + R"("://x")",
                    "server.allowed_origins[5]: " + expected + R"("https://")"));
}

TEST(ConfigErrorsTest, AllowedHostsFormat) {
    const std::string expected =
        R"(expected a host name or host:port such as "crank.example.com", got )";
    EXPECT_THAT(errorsOf(R"({"server": {"allowed_hosts": ["ok.example.com", "ok.example.com:443",
        "bad host", "a/b", "user@host", "tab\there"]}})"),
                ElementsAre("server.allowed_hosts[2]: " + expected + R"("bad host")",
                            "server.allowed_hosts[3]: " + expected + R"("a/b")",
                            "server.allowed_hosts[4]: " + expected + R"("user@host")",
                            "server.allowed_hosts[5]: " + expected + R"("tab\u0009here")"));
}

TEST(ConfigErrorsTest, StoreErrors) {
    EXPECT_THAT(
        errorsOf(R"({"store": {"backend": "sqlit", "path": "", "busy_timeout_ms": -1,
                            "pool_size": 65, "cache_kib": 8}})"),
        ElementsAre(R"(store.backend: expected "sqlite", got "sqlit" (did you mean "sqlite"?))",
                    R"(store.path: must not be empty (use ":memory:" for a store in memory))",
                    "store.busy_timeout_ms: expected an integer from 0 to 600000, got -1",
                    "store.pool_size: expected an integer from 1 to 64, got 65",
                    "store.cache_kib: expected an integer from 16 to 1048576, got 8"));
    EXPECT_THAT(errorsOf(R"({"store": {"backend": "postgres", "path": 3}})"),
                ElementsAre(R"(store.backend: expected "sqlite", got "postgres")",
                            "store.path: expected a string, got 3"));
}

TEST(ConfigErrorsTest, PluginsErrors) {
    EXPECT_THAT(errorsOf(R"({"plugins": {"directories": "/opt", "enabled": "rest"}})"),
                ElementsAre(R"(plugins.directories: expected an array of strings, got "/opt")",
                            R"(plugins.enabled: expected an array of strings, got "rest")"));
    EXPECT_THAT(
        errorsOf(R"({"plugins": {"enabled": ["rest", "rest", "my plugin", "", 7]}})"),
        ElementsAre(
            R"(plugins.enabled[1]: "rest" is listed twice)",
            R"(plugins.enabled[2]: expected a plugin name (letters, digits, '_', '-', '.'), got "my plugin")",
            R"(plugins.enabled[3]: expected a non-empty string, got "")",
            "plugins.enabled[4]: expected a non-empty string, got 7"));
}

TEST(ConfigErrorsTest, ArrayEntriesAreNumberedAsInTheFile) {
    // An invalid entry early in the array must not shift the index of later ones.
    EXPECT_THAT(
        errorsOf(R"({"plugins": {"enabled": [1, "rest", "rest"]},
                            "server": {"allowed_origins": [5, "app.example.com"],
                                       "allowed_hosts": [null, "a b"]}})"),
        ElementsAre(
            "server.allowed_origins[0]: expected a non-empty string, got 5",
            R"(server.allowed_origins[1]: expected an origin such as "https://app.example.com" (scheme://host[:port], no path), got "app.example.com")",
            "server.allowed_hosts[0]: expected a non-empty string, got null",
            R"(server.allowed_hosts[1]: expected a host name or host:port such as "crank.example.com", got "a b")",
            "plugins.enabled[0]: expected a non-empty string, got 1",
            R"(plugins.enabled[2]: "rest" is listed twice)"));
}

TEST(ConfigErrorsTest, TooManyPluginDirectories) {
    std::string dirs;
    for (int i = 0; i < 65; ++i) {
        dirs += (i == 0 ? "\"/d" : ", \"/d") + std::to_string(i) + "\"";
    }
    EXPECT_THAT(errorsOf(R"({"plugins": {"directories": [)" + dirs + "]}}"),
                ElementsAre("plugins.directories: must have at most 64 entries, got 65"));
}

// ---------------------------------------------------------------------------------------------
// Enumerations.

TEST(ConfigErrorsTest, EnumTyposSuggestTheClosestName) {
    const std::string text = withOperations({operation("a", R"({"mode": "windw",
        "transport_behavior": "server-stream"})")});
    EXPECT_THAT(
        errorsOf(text),
        ElementsAre(
            R"(operations[0].execution.mode: expected "unary", "window", "session" or "async_job", got "windw" (did you mean "window"?))",
            R"(operations[0].execution.transport_behavior: expected "request_response" or "server_stream", got "server-stream" (did you mean "server_stream"?))"));
}

TEST(ConfigErrorsTest, EnumValuesFarFromAnyNameGetNoSuggestion) {
    EXPECT_THAT(
        errorsOf(
            withOperations({operation("a", R"({"mode": "streaming", "aggregation_mode": 3})")})),
        ElementsAre(
            R"(operations[0].execution.mode: expected "unary", "window", "session" or "async_job", got "streaming")",
            "operations[0].execution.aggregation_mode: expected a string, got 3"));
}

TEST(ConfigErrorsTest, AuthModeTypo) {
    EXPECT_THAT(
        errorsOf(R"({"auth": {"mode": "apikey"}})"),
        ElementsAre(
            R"(auth.mode: expected "none" or "api_key", got "apikey" (did you mean "api_key"?))"));
}

TEST(ConfigErrorsTest, ModeTypoDoesNotCascadeIntoModeSpecificErrors) {
    // The mode is unknown, so checks that depend on the mode would only add noise.
    const std::string text = withOperations({operation("a", R"({"mode": "sesion",
        "transport_behavior": "server_stream", "start_tool_name": "a_open"})")});
    EXPECT_THAT(
        errorsOf(text),
        ElementsAre(
            R"(operations[0].execution.mode: expected "unary", "window", "session" or "async_job", got "sesion" (did you mean "session"?))"));
}

// ---------------------------------------------------------------------------------------------
// Unknown and duplicate keys.

TEST(ConfigErrorsTest, UnknownKeysWithSuggestionsAtSeveralDepths) {
    const std::string text = R"({
        "operation": [],
        "server": {"thread": 4},
        "auth": {"agents": [{"id": "a", "limits": {"max_job": 1}}],
                 "workspaces": [{"id": "w", "descripton": "x"}]},
        "auth_profiles": {"p": {"type": "none", "header": {}}},
        "operations": [{"name": "o", "description": "d", "protocol": "rest", "inputschema": {},
                        "execution": {"max_item": 1}}]
    })";
    EXPECT_THAT(
        errorsOf(text),
        ElementsAre(R"(server.thread: unknown key (did you mean "threads"?))",
                    R"(auth.workspaces[0].descripton: unknown key (did you mean "description"?))",
                    R"(auth.agents[0].limits.max_job: unknown key (did you mean "max_jobs"?))",
                    R"(auth_profiles.p.header: unknown key (did you mean "headers"?))",
                    R"(operations[0].execution.max_item: unknown key (did you mean "max_items"?))",
                    R"(operations[0].inputschema: unknown key (did you mean "input_schema"?))",
                    R"(operation: unknown key (did you mean "operations"?))"));
}

TEST(ConfigErrorsTest, UnknownKeysWithoutSuggestions) {
    EXPECT_THAT(errorsOf(R"({"listeners": 1, "store": {"engine": "x"},
                            "server": {"odd key": 1, "tls": {}}})"),
                ElementsAre(R"(server["odd key"]: unknown key)", "server.tls: unknown key",
                            "store.engine: unknown key", "listeners: unknown key"));
}

TEST(ConfigErrorsTest, DuplicateKeys) {
    const std::string text = R"({
        "server": {"threads": 1, "threads": 2},
        "store": {},
        "store": {},
        "auth_profiles": {"p": {"type": "none"}, "p": {"type": "none"}},
        "operations": [{"name": "o", "description": "d", "protocol": "rest",
                        "execution": {"max_items": 1, "max_items": 2}}]
    })";
    EXPECT_THAT(errorsOf(text), ElementsAre("store: duplicate key", "server.threads: duplicate key",
                                            "auth_profiles.p: duplicate key",
                                            "operations[0].execution.max_items: duplicate key"));
}

// ---------------------------------------------------------------------------------------------
// Operations.

TEST(ConfigErrorsTest, RequiredOperationFieldsMissing) {
    EXPECT_THAT(errorsOf(R"({"operations": [{}, {"name": "", "description": "", "protocol": 5}]})"),
                // A missing description is checked against the plugin (which may describe the
                // operation itself): operation_compiler_test.cpp.
                ElementsAre("operations[0].name: is required (a non-empty string)",
                            "operations[0].protocol: is required (a non-empty string)",
                            "operations[1].name: must not be empty",
                            "operations[1].protocol: expected a string, got 5"));
}

TEST(ConfigErrorsTest, OperationThatIsNotAnObject) {
    EXPECT_THAT(errorsOf(R"({"operations": [5, "op"]})"),
                ElementsAre("operations[0]: expected an object, got 5",
                            R"(operations[1]: expected an object, got "op")"));
}

TEST(ConfigErrorsTest, OperationNamesAndProtocol) {
    EXPECT_THAT(
        errorsOf(withOperations({operation("get issue"), operation(std::string(129, 'n')),
                                 R"({"name": "p", "description": "d", "protocol": "Rest API"})"})),
        ElementsAre(
            R"(operations[0].name: a tool name has 1 to 128 letters, digits, '_', '-' or '.', got "get issue")",
            "operations[1].name: must be at most 128 characters long, got 129",
            R"(operations[2].protocol: expected a protocol adapter's name (1 to 64 lowercase letters, digits or '_'), got "Rest API")"));
}

TEST(ConfigErrorsTest, OperationConfigMustBeAnObject) {
    EXPECT_THAT(
        errorsOf(withOperations({operation("a", "{}", R"(, "config": ["GET"])")})),
        ElementsAre("operations[0].config: expected an object (the rest plugin's settings), "
                    "got an array"));
}

TEST(ConfigErrorsTest, DuplicateOperationNames) {
    EXPECT_THAT(
        errorsOf(withOperations({operation("a"), operation("b"), operation("a")})),
        ElementsAre(R"(operations[2].name: operation "a" is already defined at operations[0])"));
}

TEST(ConfigErrorsTest, SessionFamilyNameCollidesWithAnotherOperation) {
    EXPECT_THAT(
        errorsOf(withOperations({operation("x", R"({"mode": "session"})"), operation("x_start")})),
        ElementsAre(
            R"(operations[1]: publishes the tool "x_start", which operations[0] publishes too)"));
}

TEST(ConfigErrorsTest, AsyncJobFamilyNameCollidesWithAnEarlierOperation) {
    EXPECT_THAT(
        errorsOf(withOperations(
            {operation("job_result"), operation("job", R"({"mode": "async_job"})")})),
        ElementsAre(
            R"(operations[1]: publishes the tool "job_result", which operations[0] publishes too)"));
}

TEST(ConfigErrorsTest, OneOperationPublishingTheSameToolTwiceIsNamedOnce) {
    EXPECT_THAT(
        errorsOf(withOperations({operation(
            "s", R"({"mode": "session", "start_tool_name": "s_go", "stop_tool_name": "s_go"})")})),
        ElementsAre(
            R"(operations[0]: publishes the tool "s_go" twice; give its tools distinct names)"));
}

TEST(ConfigErrorsTest, CustomFamilyNamesCollide) {
    const std::string text = withOperations(
        {operation("search"), operation("s", R"({"mode": "session", "poll_tool_name": "search"})"),
         operation("j", R"({"mode": "async_job", "start_tool_name": "s_start"})")});
    EXPECT_THAT(
        errorsOf(text),
        ElementsAre(
            R"(operations[1]: publishes the tool "search", which operations[0] publishes too)",
            R"(operations[2]: publishes the tool "s_start", which operations[1] publishes too)"));
}

TEST(ConfigErrorsTest, FamilyNamesUsedInTheWrongMode) {
    const std::string text = withOperations(
        {operation("u", R"({"start_tool_name": "u_go", "cancel_tool_name": "u_x"})"),
         operation("s", R"({"mode": "session", "status_tool_name": "s_st"})"),
         operation("j",
                   R"({"mode": "async_job", "poll_tool_name": "j_p", "stop_tool_name": "j_s"})"),
         operation("w", R"({"mode": "window", "result_tool_name": "w_r"})")});
    EXPECT_THAT(
        errorsOf(text),
        ElementsAre(
            R"(operations[0].execution.start_tool_name: is only used with mode "session" or "async_job", not "unary")",
            R"(operations[0].execution.cancel_tool_name: is only used with mode "async_job", not "unary")",
            R"(operations[1].execution.status_tool_name: is only used with mode "async_job", not "session")",
            R"(operations[2].execution.poll_tool_name: is only used with mode "session", not "async_job")",
            R"(operations[2].execution.stop_tool_name: is only used with mode "session", not "async_job")",
            R"(operations[3].execution.result_tool_name: is only used with mode "async_job", not "window")"));
}

TEST(ConfigErrorsTest, InvalidFamilyToolName) {
    EXPECT_THAT(
        errorsOf(withOperations(
            {operation("s", R"({"mode": "session", "stop_tool_name": "stop now"})")})),
        ElementsAre(
            R"(operations[0].execution.stop_tool_name: a tool name has 1 to 128 letters, digits, '_', '-' or '.', got "stop now")"));
}

TEST(ConfigErrorsTest, DerivedToolNamesLongerThanTheLimit) {
    const std::string name(124, 'n');  // fits alone, not with "_start" / "_poll" / "_stop"
    EXPECT_THAT(errorsOf(withOperations({operation(name, R"({"mode": "session"})")})),
                ElementsAre("operations[0].name: the tool name \"" + name +
                                "_start\" is longer than 128 characters",
                            "operations[0].name: the tool name \"" + name +
                                "_poll\" is longer than 128 characters",
                            "operations[0].name: the tool name \"" + name +
                                "_stop\" is longer than 128 characters"));
    EXPECT_THAT(errorsOf(withOperations({operation(name, R"({"mode": "window"})")})), IsEmpty());
}

TEST(ConfigErrorsTest, UnaryWithServerStream) {
    EXPECT_THAT(
        errorsOf(withOperations({operation("a", R"({"transport_behavior": "server_stream"})")})),
        ElementsAre(
            R"(operations[0].execution.transport_behavior: "server_stream" needs mode "window", "session" or "async_job"; unary returns one response)"));
}

TEST(ConfigErrorsTest, IdleTimeoutLongerThanSessionLifetime) {
    EXPECT_THAT(errorsOf(withOperations({operation("s", R"({"mode": "session",
                    "idle_timeout_ms": 2000, "max_session_lifetime_ms": 1000})")})),
                ElementsAre("operations[0].execution.idle_timeout_ms: must not exceed "
                            "max_session_lifetime_ms (1000), got 2000"));
    // The default idle timeout (300000) against a shorter lifetime.
    EXPECT_THAT(errorsOf(withOperations({operation("s", R"({"mode": "session",
                    "max_session_lifetime_ms": 60000})")})),
                ElementsAre("operations[0].execution.idle_timeout_ms: must not exceed "
                            "max_session_lifetime_ms (60000), got 300000"));
    // Equal is fine.
    EXPECT_THAT(errorsOf(withOperations({operation("s", R"({"mode": "session",
                    "idle_timeout_ms": 1000, "max_session_lifetime_ms": 1000})")})),
                IsEmpty());
}

TEST(ConfigErrorsTest, ExecutionPathsBooleansAndArrays) {
    EXPECT_THAT(
        errorsOf(withOperations({operation("a", R"({"items_path": "", "cursor_path": 1,
            "truncate_item_fields": "yes", "drop_duplicates": 0, "redacted_paths": "$.a"})")})),
        ElementsAre(
            "operations[0].execution.items_path: must not be empty (leave it out instead)",
            "operations[0].execution.cursor_path: expected a string, got 1",
            R"(operations[0].execution.truncate_item_fields: expected true or false, got "yes")",
            R"(operations[0].execution.redacted_paths: expected an array of strings, got "$.a")",
            "operations[0].execution.drop_duplicates: expected true or false, got 0"));
}

TEST(ConfigErrorsTest, ExecutionThatIsNotAnObject) {
    EXPECT_THAT(errorsOf(withOperations({operation("a", R"("window")")})),
                ElementsAre(R"(operations[0].execution: expected an object, got "window")"));
}

TEST(ConfigErrorsTest, SamplingRateBounds) {
    const auto rate = [](const std::string& value) {
        return errorsOf(withOperations({operation("a", R"({"sampling_rate": )" + value + "}")}));
    };
    const std::string prefix =
        "operations[0].execution.sampling_rate: expected a number greater than 0 and at most 1, "
        "got ";
    EXPECT_THAT(rate("0"), ElementsAre(prefix + "0"));
    EXPECT_THAT(rate("0.0"), ElementsAre(prefix + "0.0"));
    EXPECT_THAT(rate("-0.1"), ElementsAre(prefix + "-0.1"));
    EXPECT_THAT(rate("1.0001"), ElementsAre(prefix + "1.0001"));
    EXPECT_THAT(rate("2"), ElementsAre(prefix + "2"));
    EXPECT_THAT(rate(R"("0.5")"), ElementsAre(prefix + R"("0.5")"));
    EXPECT_THAT(rate("1e-9"), IsEmpty());
    EXPECT_THAT(rate("0.5"), IsEmpty());
    EXPECT_THAT(rate("1"), IsEmpty());
}

TEST(ConfigErrorsTest, InputSchemaMustBeAnObjectSchema) {
    EXPECT_THAT(
        errorsOf(withOperations(
            {operation("a", "{}", R"(, "input_schema": "object")"),
             operation("b", "{}", R"(, "input_schema": {"properties": {}})"),
             operation("c", "{}", R"(, "input_schema": {"type": "array"})"),
             operation("d", "{}", R"(, "input_schema": {"type": ["object"]})"),
             operation("e", "{}", R"(, "input_schema": {"type": "object\u0000x"})")})),
        ElementsAre(
            R"(operations[0].input_schema: expected a JSON Schema object, got "object")",
            R"(operations[1].input_schema.type: a tool's input schema must have "type": "object")",
            R"(operations[2].input_schema.type: a tool's input schema must have "type": "object")",
            R"(operations[3].input_schema.type: a tool's input schema must have "type": "object")",
            R"(operations[4].input_schema.type: a tool's input schema must have "type": "object")"));
}

TEST(ConfigErrorsTest, UnknownAuthProfileReference) {
    EXPECT_THAT(
        errorsOf(R"({"auth_profiles": {"github": {"type": "none"}},
                    "operations": [{"name": "a", "description": "d", "protocol": "rest",
                                    "auth_profile": "gh"}]})"),
        ElementsAre(
            R"(operations[0].auth_profile: no auth profile "gh" is defined in auth_profiles)"));
}

// Whether a protocol or aggregator is loaded (and enabled) is checked when the runtime compiles
// the operations against the loaded plugins (tests/unit/runtime); the loader checks the shape.
TEST(ConfigErrorsTest, PluginNamesHaveThePluginShape) {
    EXPECT_THAT(
        errorsOf(withOperations(
            {R"({"name": "a", "description": "d", "protocol": "Rest"})",
             operation("b",
                       R"({"mode": "window", "aggregation_mode": "Stats", "aggregation": 3})")})),
        ElementsAre(
            R"(operations[0].protocol: expected a protocol adapter's name (1 to 64 lowercase letters, digits or '_'), got "Rest")",
            R"(operations[1].execution.aggregation_mode: an aggregator name has 1 to 64 lowercase letters, digits or '_', got "Stats")",
            "operations[1].execution.aggregation: expected an object (the aggregator's config), "
            "got 3"));
    // With no enabled list, every plugin found is loaded, so any protocol name is acceptable here.
    EXPECT_THAT(
        errorsOf(withOperations({R"({"name": "a", "description": "d", "protocol": "graphql"})"})),
        IsEmpty());
}

// ---------------------------------------------------------------------------------------------
// Auth.

TEST(ConfigErrorsTest, AuthNoneOnAPublicAddress) {
    EXPECT_THAT(
        errorsOf(R"({"server": {"listen": "0.0.0.0:8080"}})"),
        ElementsAre(R"(auth.mode: "none" is only allowed while server.listen is a loopback )"
                    R"(address (it is 0.0.0.0:8080); set auth.mode to "api_key" and define )"
                    R"(agents)"));
    EXPECT_THAT(
        errorsOf(R"({"server": {"listen": "[::]:8080"}, "auth": {"mode": "none"}})"),
        ElementsAre(R"(auth.mode: "none" is only allowed while server.listen is a loopback )"
                    R"(address (it is [::]:8080); set auth.mode to "api_key" and define )"
                    R"(agents)"));
    EXPECT_THAT(errorsOf(R"({"server": {"listen": "localhost:8080"}})"), IsEmpty());
    EXPECT_THAT(errorsOf(R"({"server": {"listen": "[::1]:8080"}})"), IsEmpty());
}

TEST(ConfigErrorsTest, ApiKeyModeWithoutAgents) {
    EXPECT_THAT(
        errorsOf(R"({"auth": {"mode": "api_key"}})"),
        ElementsAre(
            R"(auth.agents: auth.mode "api_key" needs at least one agent with an api_key)"));
    EXPECT_THAT(
        errorsOf(R"({"auth": {"mode": "api_key", "agents": []}})"),
        ElementsAre(
            R"(auth.agents: auth.mode "api_key" needs at least one agent with an api_key)"));
}

TEST(ConfigErrorsTest, ApiKeyModeAgentWithoutKey) {
    EXPECT_THAT(errorsOf(R"({"auth": {"mode": "api_key", "agents": [{"id": "a"}]}})"),
                ElementsAre(R"(auth.agents[0].api_key: is required when auth.mode is "api_key")"));
}

TEST(ConfigErrorsTest, ApiKeyModeOnAPublicAddressIsFine) {
    EXPECT_THAT(errorsOf(R"({"server": {"listen": "0.0.0.0:8080"}, "auth": {"mode": "api_key",
                            "agents": [{"id": "a", "api_key": {"env": "K"}}]}})",
                         {{"K", "public-key-0123456789"}}),
                IsEmpty());
}

TEST(ConfigErrorsTest, WorkspacesAndAgents) {
    const std::string text = R"({"auth": {
        "workspaces": {"id": "x"},
        "agents": [{"id": "a", "workspace": "team-b"}, {"id": "a"}, {"workspace": "default"},
                   {"id": "bad id"}, 5]}})";
    EXPECT_THAT(
        errorsOf(text),
        ElementsAre(
            "auth.workspaces: expected an array of workspaces, got an object",
            R"(auth.agents[0].workspace: no workspace "team-b" is defined in auth.workspaces)",
            R"(auth.agents[1].id: agent "a" is defined twice)",
            "auth.agents[2].id: is required (a non-empty string)",
            R"(auth.agents[3].id: expected letters, digits, '_', '-' or '.', got "bad id")",
            "auth.agents[4]: expected an object, got 5"));
    EXPECT_THAT(
        errorsOf(R"({"auth": {"workspaces": [{"id": "w"}, {"id": "w"}, {},
                            {"id": "a b"}, {"id": "x", "limits": {"max_concurrent_calls": 0,
                            "max_sessions": -1, "max_jobs": 1000001}}]}})"),
        ElementsAre(
            R"(auth.workspaces[1].id: workspace "w" is defined twice)",
            "auth.workspaces[2].id: is required (a non-empty string)",
            R"(auth.workspaces[3].id: expected letters, digits, '_', '-' or '.', got "a b")",
            "auth.workspaces[4].limits.max_concurrent_calls: expected a positive "
            "integer, got 0",
            "auth.workspaces[4].limits.max_sessions: expected an integer from 0 to "
            "1000000, got -1",
            "auth.workspaces[4].limits.max_jobs: expected an integer from 0 to "
            "1000000, got 1000001"));
}

TEST(ConfigErrorsTest, TwoAgentsWithTheSameClearKey) {
    EXPECT_THAT(errorsOf(R"({"auth": {"mode": "api_key", "agents": [
                    {"id": "a", "api_key": {"env": "KEY_A"}},
                    {"id": "b", "api_key": {"env": "KEY_B"}}]}})",
                         {{"KEY_A", "same-key-0123456789"}, {"KEY_B", "same-key-0123456789"}}),
                ElementsAre("auth.agents[1].api_key: the same key as auth.agents[0].api_key"));
}

TEST(ConfigErrorsTest, AShortClearKeyOrAnAdminTokenEqualToAnAgentsKeyIsRefused) {
    EXPECT_THAT(errorsOf(R"({"admin": {"token": {"env": "ADMIN"}},
                "auth": {"mode": "api_key", "agents": [
                    {"id": "a", "api_key": {"env": "KEY_A"}},
                    {"id": "b", "api_key": {"env": "KEY_B"}}]}})",
                         {{"ADMIN", "shared-key-0123456789"},
                          {"KEY_A", "short"},
                          {"KEY_B", "shared-key-0123456789"}}),
                ElementsAre("auth.agents[0].api_key: the key is 5 characters long; a key needs "
                            "at least 16 (e.g. openssl rand -hex 32)",
                            "auth.agents[1].api_key: the same key as admin.token: the admin "
                            "token must differ from every agent's key"));
    EXPECT_THAT(errorsOf(R"({"admin": {"token": {"env": "ADMIN"}},
                             "server": {"metrics_token": {"env": "METRICS"}}})",
                         {{"ADMIN", "tiny"}, {"METRICS", "0123456789abcde"}}),
                ElementsAre("server.metrics_token: the metrics token is 15 characters long; a "
                            "key needs at least 16 (e.g. openssl rand -hex 32)",
                            "admin.token: the admin token is 4 characters long; a key needs at "
                            "least 16 (e.g. openssl rand -hex 32)"));
}

TEST(ConfigErrorsTest, TwoAgentsWithTheSameKeyOnceAsDigest) {
    // sha256("abc-key-0123456789") in upper case, and that key in clear.
    EXPECT_THAT(errorsOf(R"({"auth": {"mode": "api_key", "agents": [
            {"id": "a", "api_key": {"sha256": "7430377A1F8322805068DA3E9618A72B3FB4A0552D5A59B42D7DD6161E514BCE"}},
            {"id": "b", "api_key": {"env": "KEY_B"}}]}})",
                         {{"KEY_B", "abc-key-0123456789"}}),
                ElementsAre("auth.agents[1].api_key: the same key as auth.agents[0].api_key"));
}

// ---------------------------------------------------------------------------------------------
// Auth profiles.

TEST(ConfigErrorsTest, AuthProfileTypeMissingOrMistyped) {
    EXPECT_THAT(
        errorsOf(R"({"auth_profiles": {"p": {}, "q": {"type": "bearr", "token": {"env": "T"}},
                            "r": "bearer"}})",
                 {{"T", "t"}}),
        ElementsAre(
            R"(auth_profiles.p.type: is required: "none", "bearer", "basic" or "api_key")",
            R"(auth_profiles.q.type: expected "none", "bearer", "basic" or "api_key", got "bearr" (did you mean "bearer"?))",
            R"(auth_profiles.r: expected an object, got "bearer")"));
}

TEST(ConfigErrorsTest, AuthProfileFieldsOfAnotherType) {
    EXPECT_THAT(
        errorsOf(R"({"auth_profiles": {
            "b": {"type": "bearer"},
            "c": {"type": "basic", "token": {"env": "T"}},
            "d": {"type": "api_key", "in": "body", "name": "bad name", "key": {"env": "T"}},
            "e": {"type": "bearer", "token": {"env": "T"}, "in": "query"},
            "f": {"type": "basic", "username": "", "password": {"env": "T"}}}})",
                 {{"T", "t"}}),
        ElementsAre(
            R"(auth_profiles.b.token: is required with type "bearer")",
            R"(auth_profiles.c.token: is only used with type "bearer")",
            R"(auth_profiles.c.username: is required with type "basic")",
            R"(auth_profiles.c.password: is required with type "basic")",
            R"(auth_profiles.d.name: expected a header or query parameter name, got "bad name")",
            R"(auth_profiles.d.in: expected "header" or "query", got "body")",
            R"(auth_profiles.e.in: is only used with type "api_key")",
            R"(auth_profiles.f.username: expected a non-empty string, got "")"));
}

TEST(ConfigErrorsTest, AuthProfileNames) {
    EXPECT_THAT(
        errorsOf(R"({"auth_profiles": {"my profile": {"type": "none"},
                            "ok.name-1_x": {"type": "none"}}})"),
        ElementsAre(
            R"(auth_profiles["my profile"]: a profile name uses letters, digits, '_', '-' or '.' (at most 64))"));
}

TEST(ConfigErrorsTest, AuthProfileHeaders) {
    EXPECT_THAT(
        errorsOf(R"({"auth_profiles": {
            "p": {"type": "none", "headers": ["X-A: 1"]},
            "q": {"type": "none", "headers": {"X Bad": "1", "X-Crlf\r\nInjected": "1", "": "1",
                  "X-Num": 5, "X-Split": "a\r\nInjected: 1", "X-Lf": "a\nb", "X-Nul": "a\u0000b",
                  "X-Tab": "a\tb"}}}})"),
        ElementsAre(
            R"(auth_profiles.p.headers: expected an object of header names to values, got an array)",
            R"(auth_profiles.q.headers["X Bad"]: not a valid HTTP header name)",
            R"(auth_profiles.q.headers["X-Crlf\u000d\u000aInjected"]: not a valid HTTP header name)",
            R"(auth_profiles.q.headers[""]: not a valid HTTP header name)",
            "auth_profiles.q.headers.X-Num: expected a string, got 5",
            "auth_profiles.q.headers.X-Split: a header value must not contain line breaks or other "
            "control characters",
            "auth_profiles.q.headers.X-Lf: a header value must not contain line breaks or other "
            "control characters",
            "auth_profiles.q.headers.X-Nul: a header value must not contain line breaks or other "
            "control characters"));
}

TEST(ConfigErrorsTest, AuthProfileHeaderGivenTwice) {
    // Header names are case-insensitive: both would be sent.
    EXPECT_THAT(errorsOf(R"({"auth_profiles": {"p": {"type": "none",
                            "headers": {"X-Api-Version": "1", "x-api-version": "2"}}}})"),
                ElementsAre("auth_profiles.p.headers.x-api-version: is given twice (header names "
                            "are case-insensitive)"));
}

// ---------------------------------------------------------------------------------------------
// Many errors at once.

TEST(ConfigErrorsTest, EveryErrorOfTheFileIsReportedAtOnce) {
    const std::string text = R"({
        "server": {"listen": "0.0.0.0:80", "threads": 0, "thread": 1},
        "store": {"backend": "mysql"},
        "plugins": {"enabled": ["rest"]},
        "auth_profiles": {"gh": {"type": "bearer", "token": "ghp_inline"}},
        "operations": [
            {"name": "a", "description": "d", "protocol": "rest",
             "execution": {"max_items": -5, "mode": "session", "idle_timeout_ms": 5,
                           "max_session_lifetime_ms": 1}},
            {"name": "a", "description": "d", "protocol": "rest"},
            {"name": "b", "description": "d", "protocol": "grpc", "auth_profile": "nope"}
        ]
    })";
    const std::vector<std::string> errors = errorsOf(text);
    EXPECT_EQ(errors.size(), 9U);
    EXPECT_THAT(
        errors,
        ElementsAre(
            "server.threads: expected an integer from 1 to 1024, got 0",
            R"(server.thread: unknown key (did you mean "threads"?))",
            R"(store.backend: expected "sqlite", got "mysql")",
            R"(auth_profiles.gh.token: secrets are not written in the config file; expected {"env": "VARIABLE"} or {"file": "/path"}, got a string)",
            "operations[0].execution.max_items: expected a positive integer, got -5",
            "operations[0].execution.idle_timeout_ms: must not exceed max_session_lifetime_ms (1), "
            "got 5",
            R"(operations[1].name: operation "a" is already defined at operations[0])",
            R"(operations[2].auth_profile: no auth profile "nope" is defined in auth_profiles)",
            R"(auth.mode: "none" is only allowed while server.listen is a loopback address (it is 0.0.0.0:80); set auth.mode to "api_key" and define agents)"));
}

TEST(ConfigErrorsTest, OperationNamesAreUniquePerWorkspaceAndTheWorkspaceMustExist) {
    const std::string ok = R"({"auth": {"workspaces": [{"id": "team"}]}, "operations": [)" +
                           operation("a") + "," + operation("a", "{}", R"(, "workspace": "team")") +
                           "]}";
    EXPECT_TRUE(errorsOf(ok).empty());
    EXPECT_THAT(errorsOf(withOperations({operation("a", "{}", R"(, "workspace": "nope")")})),
                ElementsAre(R"(operations[0].workspace: no workspace "nope" is defined in )"
                            R"(auth.workspaces)"));
    const std::string twice = R"({"auth": {"workspaces": [{"id": "team"}]}, "operations": [)" +
                              operation("a", "{}", R"(, "workspace": "team")") + "," +
                              operation("a", "{}", R"(, "workspace": "team")") + "]}";
    EXPECT_THAT(errorsOf(twice),
                ElementsAre(R"(operations[1].name: operation "a" is already defined at )"
                            R"(operations[0])"));
}

TEST(ConfigErrorsTest, JobsSectionAndNodeIdAreChecked) {
    EXPECT_THAT(
        errorsOf(R"({"server": {"node_id": "a b"},
                     "jobs": {"workers": 0, "heartbeat_interval_ms": 5000, "lease_ms": 6000,
                              "max_queued": -1, "poll_intervall_ms": 1}})"),
        ElementsAre(
            R"(server.node_id: a node id has 1 to 64 letters, digits, '_', '-' or '.', got "a b")",
            R"(jobs.workers: expected an integer from 1 to 1024, got 0)",
            R"(jobs.max_queued: expected an integer from 0 to 1000000, got -1)",
            R"(jobs.lease_ms: must be at least twice heartbeat_interval_ms (5000), got 6000)",
            R"(jobs.poll_intervall_ms: unknown key (did you mean "poll_interval_ms"?))"));
}

TEST(ConfigErrorsTest, ResultTtlIsForJobsOnly) {
    EXPECT_THAT(errorsOf(withOperations({operation("a", R"({"result_ttl_ms": 1000})")})),
                ElementsAre(R"(operations[0].execution.result_ttl_ms: is only used with mode )"
                            R"("async_job", not "unary")"));
    EXPECT_TRUE(errorsOf(withOperations(
                             {operation("a", R"({"mode": "async_job", "result_ttl_ms": 1000})")}))
                    .empty());
}

}  // namespace
}  // namespace crank::config::test
