// The aggregators plugin as the host sees it: registration, schemas, config validation, and the
// errors every mode shares (invalid items, writer overflow, bad config at create).

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aggregators_test_support.h"

namespace crank::aggregators::test {
namespace {

const std::vector<std::string> kModes = {"latest_state", "raw_items", "stats", "summary_only",
                                         "summary_plus_samples"};

using AggregatorsPlugin = PluginTest;

TEST_F(AggregatorsPlugin, RegistersTheFiveModes) {
    EXPECT_EQ(host().pluginName(), "aggregators");
    std::vector<std::string> names = host().aggregatorNames();
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, kModes);
    EXPECT_TRUE(host().registrationErrors().empty());
}

TEST_F(AggregatorsPlugin, SchemasAreObjectSchemas) {
    for (const std::string& name : kModes) {
        const crank_aggregator descriptor = host().aggregator(name);
        for (crank_str schema : {descriptor.config_schema_json, descriptor.output_schema_json}) {
            rapidjson::Document document = parse(sdk::toView(schema));
            ASSERT_TRUE(document.IsObject()) << name;
            EXPECT_STREQ(document["type"].GetString(), "object") << name;
            EXPECT_FALSE(document["additionalProperties"].GetBool()) << name;
        }
        EXPECT_FALSE(sdk::toView(descriptor.version).empty());
        EXPECT_FALSE(sdk::toView(descriptor.description).empty());
    }
}

TEST_F(AggregatorsPlugin, OutputSchemasNameTheResultMembers) {
    auto members = [&](const std::string& name) {
        rapidjson::Document schema = parse(sdk::toView(host().aggregator(name).output_schema_json));
        std::vector<std::string> out;
        for (const auto& member : schema["properties"].GetObject()) {
            out.emplace_back(member.name.GetString());
        }
        return out;
    };
    EXPECT_EQ(members("raw_items"), (std::vector<std::string>{"items", "truncated"}));
    EXPECT_EQ(members("summary_only"), (std::vector<std::string>{"summary", "truncated"}));
    EXPECT_EQ(members("summary_plus_samples"),
              (std::vector<std::string>{"summary", "items", "truncated"}));
    EXPECT_EQ(members("stats"), (std::vector<std::string>{"stats", "truncated"}));
    EXPECT_EQ(members("latest_state"), (std::vector<std::string>{"state", "truncated"}));
}

TEST_F(AggregatorsPlugin, EmptyAndDefaultConfigsAreValid) {
    for (const std::string& name : kModes) {
        EXPECT_TRUE(problems(name, "{}").empty()) << name;
        EXPECT_TRUE(problems(name, "").empty()) << name;
    }
}

TEST_F(AggregatorsPlugin, ConfigThatIsNotAnObjectIsRefused) {
    for (const std::string& name : kModes) {
        auto found = problems(name, "[1]");
        ASSERT_EQ(found.size(), 1U) << name;
        EXPECT_EQ(found[0].path, "");
        EXPECT_NE(found[0].message.find("must be an object"), std::string::npos);
        EXPECT_EQ(problems(name, "{").size(), 1U) << name;
    }
}

TEST_F(AggregatorsPlugin, UnknownMembersAreNamed) {
    for (const std::string& name : kModes) {
        auto found = problems(name, R"({"maxitems": 5})");
        ASSERT_EQ(found.size(), 1U) << name;
        EXPECT_EQ(found[0].path, "maxitems");
        EXPECT_NE(found[0].message.find("unknown member"), std::string::npos);
    }
    auto dotted = problems("stats", R"({"a.b": 1})");
    ASSERT_EQ(dotted.size(), 1U);
    EXPECT_EQ(dotted[0].path, "a\\.b");
}

struct BadConfig {
    std::string mode;
    std::string config;
    std::string path;     ///< expected diagnostic path
    std::string message;  ///< a fragment of the expected message
};

TEST_F(AggregatorsPlugin, BadConfigsNameTheirPath) {
    const std::vector<BadConfig> cases = {
        {"raw_items", R"({"max_items": 0})", "max_items", "from 1 to 10000"},
        {"raw_items", R"({"max_items": 10001})", "max_items", "got 10001"},
        {"raw_items", R"({"max_items": "10"})", "max_items", "the string \"10\""},
        {"raw_items", R"({"max_items": 2.5})", "max_items", "must be an integer"},
        {"raw_items", R"({"keep": "middle"})", "keep", "\"first\", \"last\""},
        {"raw_items", R"({"max_bytes": 16777217})", "max_bytes", "16777216"},
        {"summary_only", R"({"key_paths": "a"})", "key_paths", "array of path strings"},
        {"summary_only", R"({"key_paths": ["a", "b..c"]})", "key_paths.1", "invalid path"},
        {"summary_only", R"({"key_paths": ["a", 3]})", "key_paths.1", "path string"},
        {"summary_only", R"({"key_paths": ["a", "a"]})", "key_paths.1", "listed twice"},
        {"summary_only", R"({"top_k": 101})", "top_k", "from 1 to 100"},
        {"summary_only", R"({"include_first_last": 1})", "include_first_last", "true or false"},
        {"summary_only", R"({"max_item_bytes": 8})", "max_item_bytes", "from 16"},
        {"summary_only", R"({"sample_size": 3})", "sample_size", "unknown member"},
        {"summary_plus_samples", R"({"sample_size": 0})", "sample_size", "from 1 to 100"},
        {"summary_plus_samples", R"({"sampling": "random"})", "sampling", "\"reservoir\""},
        {"summary_plus_samples", R"({"seed": 1.5})", "seed", "must be an integer"},
        {"summary_plus_samples", R"({"seed": "x"})", "seed", "must be an integer"},
        {"stats", R"({"numeric_paths": ["ok", "a*b"]})", "numeric_paths.1", "\"*\""},
        {"stats", R"({"numeric_paths": ["a."]})", "numeric_paths.0", "at offset 2"},
        {"stats", R"({"key_paths": {}})", "key_paths", "array"},
        {"stats", R"({"relative_accuracy": 0.5})", "relative_accuracy", "got 0.5"},
        {"stats", R"({"max_buckets": 10})", "max_buckets", "from 64 to 65536"},
        {"latest_state", R"({"key_path": 5})", "key_path", "path string"},
        {"latest_state", R"({"key_path": "a\\"})", "key_path", "invalid path"},
        {"latest_state", R"({"max_keys": 10001})", "max_keys", "from 1 to 10000"},
        {"latest_state", R"({"max_item_bytes": 4096, "max_bytes": 2048})", "max_item_bytes",
         "must not exceed max_bytes"},
    };
    for (const BadConfig& bad : cases) {
        SCOPED_TRACE(bad.mode + " " + bad.config);
        auto found = problems(bad.mode, bad.config);
        ASSERT_EQ(found.size(), 1U);
        EXPECT_EQ(found[0].path, bad.path);
        EXPECT_NE(found[0].message.find(bad.message), std::string::npos) << found[0].message;
        EXPECT_EQ(found[0].code, sdk::ErrorCode::invalid_argument);
    }
}

TEST_F(AggregatorsPlugin, TooManyPathsAreRefused) {
    std::string paths;
    for (int i = 0; i < 17; ++i) {
        paths += (i == 0 ? "\"p" : ",\"p") + std::to_string(i) + "\"";
    }
    for (const std::string member : {"numeric_paths", "key_paths"}) {
        auto found = problems("stats", "{\"" + member + "\": [" + paths + "]}");
        ASSERT_EQ(found.size(), 1U);
        EXPECT_EQ(found[0].path, member);
        EXPECT_NE(found[0].message.find("at most 16"), std::string::npos);
    }
}

TEST_F(AggregatorsPlugin, EveryProblemIsReported) {
    auto found = problems("stats", R"({"top_k": 0, "max_buckets": 1, "key_paths": ["", "x..y"]})");
    ASSERT_EQ(found.size(), 3U);
    EXPECT_EQ(found[0].path, "key_paths.1");
    EXPECT_EQ(found[1].path, "top_k");
    EXPECT_EQ(found[2].path, "max_buckets");
}

TEST_F(AggregatorsPlugin, CreateWithABadConfigFailsWithThePath) {
    crank::testing::AggregateHandle handle =
        host().createAggregate("stats", R"({"numeric_paths": ["a..b"]})");
    EXPECT_FALSE(handle.created());
    ASSERT_TRUE(handle.error());
    EXPECT_EQ(handle.error()->code, sdk::ErrorCode::invalid_argument);
    EXPECT_EQ(handle.error()->details_json, R"({"path":"numeric_paths.0"})");
    EXPECT_NE(handle.error()->message.find("numeric_paths.0: invalid path"), std::string::npos);
    EXPECT_TRUE(handle.violations().empty());
}

TEST_F(AggregatorsPlugin, AnItemThatIsNotJsonFailsTheCall) {
    for (const std::string& name : kModes) {
        for (const std::string& bad :
             {std::string("{\"a\":"), std::string("nope"), std::string("1 2"), std::string("{}x"),
              std::string(""), std::string("1\0", 2)}) {
            crank::testing::AggregateResult result =
                host().aggregate(name, "{}", {R"({"a":1})", bad, R"({"a":2})"});
            EXPECT_EQ(result.status, sdk::Status::error) << name << " " << bad;
            EXPECT_EQ(result.accepted, 1U);
            ASSERT_TRUE(result.error) << name;
            EXPECT_EQ(result.error->code, sdk::ErrorCode::invalid_argument);
            EXPECT_NE(result.error->message.find("not valid JSON"), std::string::npos);
            EXPECT_TRUE(result.violations.empty());
        }
    }
}

TEST_F(AggregatorsPlugin, WriterOverflowIsAnError) {
    std::vector<std::string> items;
    for (int i = 0; i < 50; ++i) {
        items.push_back(R"({"id":)" + std::to_string(i) + R"(,"text":"some words to fill"})");
    }
    for (const std::string& name : kModes) {
        const std::string config = name == "latest_state" ? R"({"key_path":"id"})" : "{}";
        crank::testing::AggregateResult result = host().aggregate(name, config, items, 16);
        EXPECT_EQ(result.status, sdk::Status::error) << name;
        ASSERT_TRUE(result.error) << name;
        EXPECT_EQ(result.error->code, sdk::ErrorCode::resource_exhausted) << name;
        EXPECT_TRUE(result.violations.empty()) << name;
        // With room, the same aggregate fits.
        EXPECT_EQ(host().aggregate(name, config, items).status, sdk::Status::ok) << name;
    }
}

TEST_F(AggregatorsPlugin, SnapshotsRepeatWithoutResetting) {
    for (const std::string& name : kModes) {
        crank::testing::AggregateHandle handle = host().createAggregate(name, "{}");
        ASSERT_TRUE(handle.created()) << name;
        ASSERT_EQ(handle.accept(R"({"v":1})"), sdk::Status::ok);
        const crank::testing::SnapshotResult first = handle.snapshot();
        const crank::testing::SnapshotResult again = handle.snapshot();
        ASSERT_EQ(first.status, sdk::Status::ok) << name;
        EXPECT_EQ(first.text, again.text) << name;
        ASSERT_EQ(handle.accept(R"({"v":2})"), sdk::Status::ok);
        const crank::testing::SnapshotResult later = handle.snapshot();
        EXPECT_NE(later.text, first.text) << name;
        EXPECT_TRUE(first.violations.empty() && later.violations.empty()) << name;
        // A refused snapshot does not break the aggregate either.
        EXPECT_EQ(handle.snapshot(4).status, sdk::Status::error);
        EXPECT_EQ(handle.snapshot().text, later.text) << name;
    }
}

TEST_F(AggregatorsPlugin, SnapshotOfNothing) {
    EXPECT_EQ(run("raw_items", "{}", {}), R"({"items":[]})");
    EXPECT_EQ(run("latest_state", "{}", {}), R"({"state":{}})");
    EXPECT_EQ(
        run("stats", R"({"numeric_paths":["v"]})", {}),
        R"({"stats":{"count":0,"numeric":{"v":{"count":0,"non_numeric":0,"sum":0.0}},"counts":{}}})");
    EXPECT_EQ(
        run("summary_only", "{}", {}),
        R"({"summary":{"count":0,"bytes":0,"types":{"object":0,"array":0,"string":0,"number":0,"boolean":0,"null":0},"fields":{"values":[],"other":0},"counts":{}}})");
}

}  // namespace
}  // namespace crank::aggregators::test
