// compileOperations against plugins loaded by the real loader: the aggregators plugin, the
// synthetic fixture, and (for the refusal hints) a broken fixture directory.

#include "runtime/operation_compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/config_loader.h"
#include "plugins/plugin_registry.h"

namespace crank::runtime {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> errorsOf(const std::string& operations,
                                  std::vector<std::string> enabled = {}) {
    const std::string text = R"({"operations": [)" + operations + "]}";
    config::LoadResult loaded = config::loadConfigText(text, "test");
    EXPECT_TRUE(loaded.config) << (loaded.errors.empty() ? "" : loaded.errors[0].toString());
    if (!loaded.config) {
        return {"config did not load"};
    }
    plugins::LoadPluginsOptions options;
    options.directories = {CRANK_PLUGIN_DIR, CRANK_TEST_PLUGIN_DIR};
    options.enabled = std::move(enabled);
    const plugins::PluginRegistry registry = plugins::loadPlugins(options);
    const CompiledOperations compiled = compileOperations(*loaded.config, registry);
    std::vector<std::string> errors;
    for (const config::ConfigError& e : compiled.errors) {
        errors.push_back(e.toString());
    }
    if (errors.empty()) {
        EXPECT_EQ(compiled.operations.size(), loaded.config->operations.size());
    }
    return errors;
}

std::string op(const std::string& name, const std::string& protocol, const std::string& rest) {
    return R"({"name": ")" + name + R"(", "description": "d", "protocol": ")" + protocol + "\"" +
           (rest.empty() ? "" : ", " + rest) + "}";
}

TEST(OperationCompiler, AValidWindowAndUnaryCompile) {
    EXPECT_THAT(errorsOf(op("w", "synthetic",
                            R"("config": {"items": "{{n}}"}, "execution": {"mode": "window",
                               "transport_behavior": "server_stream", "aggregation_mode": "stats",
                               "aggregation": {"numeric_paths": ["latency_ms"]}})") +
                         "," + op("u", "synthetic", "")),
                ElementsAre());
}

TEST(OperationCompiler, AnUnknownProtocolSuggestsTheClosestLoadedOne) {
    EXPECT_THAT(
        errorsOf(op("a", "synthetik", "")),
        ElementsAre(
            R"(operations[0].protocol: no loaded plugin provides the protocol "synthetik" (did you mean "synthetic"?))"));
}

TEST(OperationCompiler, ADisabledPluginIsNamed) {
    const auto errors = errorsOf(op("a", "synthetic", ""), {"aggregators"});
    ASSERT_EQ(errors.size(), 1U);
    EXPECT_THAT(errors[0], HasSubstr(R"(the plugin "synthetic" at )"));
    EXPECT_THAT(errors[0], HasSubstr("is disabled: add it to plugins.enabled"));
}

TEST(OperationCompiler, AnUnknownAggregatorIsAnError) {
    EXPECT_THAT(
        errorsOf(op("a", "synthetic", R"("execution": {"mode": "window",
                    "transport_behavior": "server_stream", "aggregation_mode": "stat"})")),
        ElementsAre(
            R"(operations[0].execution.aggregation_mode: no loaded plugin provides the aggregator "stat" (did you mean "stats"?))"));
}

TEST(OperationCompiler, TheAggregatorConfigIsCheckedAgainstItsSchema) {
    const auto errors = errorsOf(op("a", "synthetic", R"("execution": {"mode": "window",
        "transport_behavior": "server_stream", "aggregation_mode": "stats",
        "aggregation": {"numeric_pathz": ["x"]}})"));
    ASSERT_FALSE(errors.empty());
    EXPECT_THAT(errors[0], HasSubstr("operations[0].execution.aggregation"));
    EXPECT_THAT(errors[0], HasSubstr("numeric_pathz"));
}

TEST(OperationCompiler, TheProtocolConfigIsCheckedAgainstTheAdaptersSchemaAndValidate) {
    const auto schema = errorsOf(op("a", "synthetic", R"("config": {"items": true})"));
    ASSERT_FALSE(schema.empty());
    EXPECT_THAT(schema[0], HasSubstr("operations[0].config.items"));
    const auto semantic =
        errorsOf(op("a", "synthetic", R"("config": {"fail_on_open": true, "hang_on_open": true})"));
    ASSERT_FALSE(semantic.empty());
    EXPECT_THAT(semantic[0], HasSubstr("operations[0].config"));
}

TEST(OperationCompiler, AggregationIsForWindowsOnly) {
    EXPECT_THAT(errorsOf(op("a", "synthetic", R"("execution": {"aggregation_mode": "stats"})")),
                ElementsAre("operations[0].execution.aggregation_mode: aggregation applies to "
                            "windows (and streaming async jobs) only; a request/response call "
                            "returns its response"));
}

TEST(OperationCompiler, JobsAndSessionsCompileInBothTransports) {
    EXPECT_TRUE(errorsOf(op("a", "synthetic", R"("execution": {"mode": "async_job"})")).empty());
    // A streaming job aggregates like a window: its aggregator is checked.
    EXPECT_THAT(errorsOf(op("a", "synthetic",
                            R"("execution": {"mode": "async_job",
                                             "transport_behavior": "server_stream",
                                             "aggregation_mode": "no_such_aggregator"})")),
                Contains(HasSubstr("operations[0].execution.aggregation_mode: no loaded plugin "
                                   "provides the aggregator \"no_such_aggregator\"")));
    // A session over a request/response upstream: the host polls it (PolledStream).
    EXPECT_TRUE(errorsOf(op("a", "synthetic",
                            R"("execution": {"mode": "session", "items_path": "items",
                                             "cursor_path": "next_cursor", "done_path": "done"})"))
                    .empty());
    EXPECT_TRUE(errorsOf(op("a", "synthetic",
                            R"("execution": {"mode": "session",
                                             "transport_behavior": "server_stream"})"))
                    .empty());
}

TEST(OperationCompiler, BadTemplatesSchemasAndPathsNameTheirPlace) {
    const auto errors = errorsOf(op("a", "synthetic",
                                    R"("config": {"items": "{{ n "},
                                       "input_schema": {"type": "object", "propertes": {}},
                                       "execution": {"items_path": "a..b",
                                                     "redacted_paths": ["x."]})"));
    ASSERT_EQ(errors.size(), 4U) << ::testing::PrintToString(errors);
    EXPECT_THAT(errors[0], HasSubstr("operations[0].input_schema.propertes"));
    EXPECT_THAT(errors[1], HasSubstr("operations[0].config.items"));
    EXPECT_THAT(errors[2], HasSubstr("operations[0].execution.items_path"));
    EXPECT_THAT(errors[3], HasSubstr("operations[0].execution.redacted_paths[0]"));
}

/// An operation as compiled, with the plugins it runs on (loaded for as long as this lives: a
/// library is loaded once per process at a time).
struct Compiled {
    plugins::PluginRegistry registry;
    OperationPtr op;
};

std::unique_ptr<Compiled> compiledOne(const std::string& operation) {
    plugins::LoadPluginsOptions options;
    options.directories = {CRANK_PLUGIN_DIR, CRANK_TEST_PLUGIN_DIR};
    auto out = std::unique_ptr<Compiled>(new Compiled{plugins::loadPlugins(options), nullptr});
    config::LoadResult loaded =
        config::loadConfigText(R"({"operations": [)" + operation + "]}", "test");
    EXPECT_TRUE(loaded.config) << (loaded.errors.empty() ? "" : loaded.errors[0].toString());
    if (!loaded.config) {
        return out;
    }
    CompiledOperations compiled = compileOperations(*loaded.config, out->registry);
    EXPECT_TRUE(compiled.errors.empty())
        << (compiled.errors.empty() ? "" : compiled.errors[0].toString());
    if (!compiled.operations.empty()) {
        out->op = compiled.operations[0];
    }
    return out;
}

// ABI 1.3: what the adapter's describe() says completes what the operation leaves out.
TEST(OperationCompiler, TheAdaptersDescriptionFillsWhatTheOperationLeavesOut) {
    const auto compiled = compiledOne(R"({"name": "a", "protocol": "synthetic", "config": {
        "describe": {"input_schema": {"type": "object", "properties": {"n": {"type": "integer"}},
                                      "additionalProperties": false},
                     "transport_behavior": "server_stream", "description": "from the adapter"}},
        "execution": {"mode": "window"}})");
    const OperationPtr op = compiled->op;
    ASSERT_NE(op, nullptr);
    EXPECT_THAT(op->config.input_schema_json, HasSubstr(R"("n":{"type":"integer"})"));
    EXPECT_EQ(op->config.execution.transport_behavior, config::TransportBehavior::server_stream);
    EXPECT_EQ(op->config.description, "from the adapter");
    // The derived schema is the one the tool input is checked against.
    EXPECT_FALSE(op->input_schema->validate(R"({"n": "x"})", "input").ok());
    EXPECT_FALSE(op->input_schema->validate(R"({"m": 1})", "input").ok());
    EXPECT_TRUE(op->input_schema->validate(R"({"n": 1})", "input").ok());
}

TEST(OperationCompiler, WhatTheOperationGivesWinsOverTheDescription) {
    const auto compiled =
        compiledOne(R"({"name": "a", "protocol": "synthetic", "description": "mine",
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "config": {"describe": {"input_schema": {"type": "object", "properties": {}},
                                "description": "from the adapter"}}})");
    const OperationPtr op = compiled->op;
    ASSERT_NE(op, nullptr);
    EXPECT_THAT(op->config.input_schema_json, HasSubstr(R"("q")"));
    EXPECT_EQ(op->config.description, "mine");
}

TEST(OperationCompiler, ADescriptionIsRequiredUnlessTheAdapterGivesOne) {
    EXPECT_THAT(errorsOf(R"({"name": "a", "protocol": "synthetic"})"),
                ElementsAre("operations[0].description: is required (a non-empty string): the "
                            "protocol \"synthetic\" does not describe this operation itself"));
}

TEST(OperationCompiler, ADescribedStreamNeedsAStreamingModeAndAgreement) {
    // The adapter says the upstream streams; unary (the default mode) cannot hold it.
    EXPECT_THAT(errorsOf(op("a", "synthetic",
                            R"("config": {"describe": {"transport_behavior": "server_stream"}})")),
                ElementsAre(HasSubstr("operations[0].execution.mode: the protocol \"synthetic\" "
                                      "says this operation's upstream streams")));
    // A behaviour given that contradicts the adapter is named, with the fix.
    EXPECT_THAT(errorsOf(op("a", "synthetic", R"("config": {"describe": {"transport_behavior":
                 "server_stream"}}, "execution": {"mode": "window",
                 "transport_behavior": "request_response"})")),
                ElementsAre(HasSubstr("operations[0].execution.transport_behavior: is "
                                      "\"request_response\", but the upstream's method is "
                                      "\"server_stream\"")));
}

TEST(OperationCompiler, ABadDescriptionIsAConfigErrorNotACrash) {
    EXPECT_THAT(errorsOf(op("a", "synthetic", R"("config": {"describe": "fail"})")),
                ElementsAre("operations[0].config.describe: describe was told to fail"));
    EXPECT_THAT(errorsOf(op("a", "synthetic", R"("config": {"describe": [1]})")),
                ElementsAre(HasSubstr("is not a JSON object")));
    EXPECT_THAT(errorsOf(op("a", "synthetic",
                            R"("config": {"describe": {"input_schema": {"type": "string"}}})")),
                ElementsAre(HasSubstr("input_schema is not an object's schema")));
    EXPECT_THAT(errorsOf(op("a", "synthetic",
                            R"("config": {"describe": {"transport_behavior": "sometimes"}})")),
                ElementsAre(HasSubstr("transport_behavior is neither")));
    EXPECT_THAT(errorsOf(op("a", "synthetic",
                            R"("config": {"describe": {"input_schema": {"type": "object",
                                "properties": {"x": {"type": "nonsense"}}}}})")),
                Contains(HasSubstr("operations[0].input_schema")));
}

}  // namespace
}  // namespace crank::runtime
