// latest_state: newest item per key, eviction of the least recently updated key, bounded memory.

#include "latest_state_aggregate.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aggregator_catalog.h"
#include "aggregators_test_support.h"

namespace crank::aggregators::test {
namespace {

using LatestState = PluginTest;

TEST_F(LatestState, NewestItemPerKeyLeastRecentlyUpdatedFirst) {
    EXPECT_EQ(run("latest_state", R"({"key_path":"id"})",
                  {R"({"id":1,"v":1})", R"({"id":"b","v":1})", R"({"id":1,"v":2})"}),
              R"({"state":{"b":{"id":"b","v":1},"1":{"id":1,"v":2}}})");
}

TEST_F(LatestState, WithoutKeyPathTheNewestItemIsUnderUnderscore) {
    EXPECT_EQ(run("latest_state", "{}", {"1", R"({"a":2})", "[3]"}), R"({"state":{"_":[3]}})");
}

TEST_F(LatestState, ItemsWithoutAScalarKeyAreSkipped) {
    EXPECT_EQ(run("latest_state", R"({"key_path":"device.id"})",
                  {R"({"device":{"id":"x"},"t":1})", R"({"device":{}})", R"({"device":{"id":{}}})",
                   R"({"device":{"id":null},"t":2})", "7"}),
              R"({"state":{"x":{"device":{"id":"x"},"t":1},"null":{"device":{"id":null},"t":2}}})");
}

TEST_F(LatestState, EvictsTheLeastRecentlyUpdatedKey) {
    // a, b, then a again: b is now the least recently updated, so c evicts b.
    EXPECT_EQ(run("latest_state", R"({"key_path":"k","max_keys":2})",
                  {R"({"k":"a","n":1})", R"({"k":"b","n":2})", R"({"k":"a","n":3})",
                   R"({"k":"c","n":4})"}),
              R"({"state":{"a":{"k":"a","n":3},"c":{"k":"c","n":4}},"truncated":true})");
}

TEST_F(LatestState, EvictsForBytesAndMarksLongItems) {
    const std::string big(600, 'x');
    const std::string snapshot =
        run("latest_state", R"({"key_path":"k","max_bytes":1024,"max_item_bytes":1024})",
            {R"({"k":"a","s":")" + big + R"("})", R"({"k":"b","s":")" + big + R"("})"});
    rapidjson::Document document = parse(snapshot);
    EXPECT_EQ(document["state"].MemberCount(), 1U);
    EXPECT_TRUE(document["state"].HasMember("b"));
    EXPECT_TRUE(document["truncated"].GetBool());

    EXPECT_EQ(run("latest_state", R"({"max_item_bytes":16})", {R"({"long":"0123456789abcdef"})"}),
              R"({"state":{"_":{"truncated_item":true,"bytes":27}},"truncated":true})");
}

TEST_F(LatestState, WildcardKeyUsesTheFirstMatch) {
    EXPECT_EQ(run("latest_state", R"({"key_path":"ids.*"})", {R"({"ids":["p","q"]})"}),
              R"({"state":{"p":{"ids":["p","q"]}}})");
}

TEST(LatestStateMemory, StaysWithinCapsOverAMillionItems) {
    auto logic = findAggregator("latest_state")
                     ->create(R"({"key_path":"id","max_keys":1000,"max_bytes":65536})");
    auto& state = dynamic_cast<LatestStateAggregate&>(*logic);
    std::size_t peak = 0;
    for (int i = 0; i < 1'000'000; ++i) {
        // Half the items update one of 100 hot keys, half bring a new key.
        const std::string key = i % 2 == 0 ? "hot" + std::to_string(i % 200) : std::to_string(i);
        state.accept(R"({"id":")" + key + R"(","seq":)" + std::to_string(i) + "}");
        if (i % 10'000 == 0) {
            peak = std::max(peak, state.memoryEstimate());
        }
        ASSERT_LE(state.keys(), 1000U);
        ASSERT_LE(state.keptBytes(), 65536U);
    }
    EXPECT_LT(peak, 65536U + 1000U * 256 + 128U * 1024);
    rapidjson::Document document = parse(state.snapshotText());
    EXPECT_LE(document["state"].MemberCount(), 1000U);
    EXPECT_TRUE(document["truncated"].GetBool());
    // The hot keys are updated all the time, so they survive the churn with their newest item.
    EXPECT_EQ(document["state"]["hot198"]["seq"].GetInt(), 999'998);
}

}  // namespace
}  // namespace crank::aggregators::test
