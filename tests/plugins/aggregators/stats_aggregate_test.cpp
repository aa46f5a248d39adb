// stats: exact moments, quantiles within the sketch's accuracy, wildcards, non-numeric values,
// heavy hitters, bounded memory.

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aggregator_catalog.h"
#include "aggregators_test_support.h"
#include "quantile_sketch.h"

namespace crank::aggregators::test {
namespace {

using Stats = PluginTest;

TEST_F(Stats, ExactOutputOfSmallInput) {
    const std::string snapshot =
        run("stats", R"({"numeric_paths":["v"],"key_paths":["k"]})",
            {R"({"v":2,"k":"a"})", R"({"v":4,"k":"b"})", R"({"v":-1.5,"k":"a"})", R"({"k":"a"})"});
    EXPECT_EQ(
        snapshot,
        R"({"stats":{"count":4,"numeric":{"v":{"count":3,"non_numeric":0,"sum":4.5,"min":-1.5,"max":4.0,"mean":1.5,"p50":2.0,"p95":4.0,"p99":4.0}},)"
        R"("counts":{"k":{"values":[{"value":"a","count":3},{"value":"b","count":1}],"other":0}}}})");
}

TEST_F(Stats, MomentsAndQuantilesOfOneToHundred) {
    std::vector<std::string> items;
    for (int i = 1; i <= 100; ++i) {
        items.push_back(R"({"v":)" + std::to_string(i) + "}");
    }
    rapidjson::Document document = parse(run("stats", R"({"numeric_paths":["v"]})", items));
    const rapidjson::Value& v = document["stats"]["numeric"]["v"];
    EXPECT_EQ(v["count"].GetInt(), 100);
    EXPECT_DOUBLE_EQ(v["sum"].GetDouble(), 5050.0);
    EXPECT_DOUBLE_EQ(v["mean"].GetDouble(), 50.5);
    EXPECT_DOUBLE_EQ(v["min"].GetDouble(), 1.0);
    EXPECT_DOUBLE_EQ(v["max"].GetDouble(), 100.0);
    // Nearest ranks: 50, 95, 99 (exact: at most QuantileSketch::kExactValues values).
    EXPECT_DOUBLE_EQ(v["p50"].GetDouble(), 50.0);
    EXPECT_DOUBLE_EQ(v["p95"].GetDouble(), 95.0);
    EXPECT_DOUBLE_EQ(v["p99"].GetDouble(), 99.0);
}

TEST_F(Stats, WildcardsAndNonNumericValues) {
    rapidjson::Document document =
        parse(run("stats", R"({"numeric_paths":["items.*.latency_ms","missing"]})",
                  {R"({"items":[{"latency_ms":10},{"latency_ms":20},{"latency_ms":"slow"}]})",
                   R"({"items":[{"latency_ms":30},{"other":1},{"latency_ms":null}]})",
                   R"({"items":{"x":{"latency_ms":40}}})", R"("not an object")"}));
    const rapidjson::Value& latency = document["stats"]["numeric"]["items.*.latency_ms"];
    EXPECT_EQ(latency["count"].GetInt(), 4);
    EXPECT_EQ(latency["non_numeric"].GetInt(), 2);
    EXPECT_DOUBLE_EQ(latency["sum"].GetDouble(), 100.0);
    EXPECT_EQ(compact(document["stats"]["numeric"]["missing"]),
              R"({"count":0,"non_numeric":0,"sum":0.0})");
    EXPECT_EQ(document["stats"]["count"].GetInt(), 4);
}

TEST_F(Stats, OutputsStayFinite) {
    rapidjson::Document document =
        parse(run("stats", R"({"numeric_paths":["v"]})", {R"({"v":1.7e308})", R"({"v":1.7e308})"}));
    const rapidjson::Value& v = document["stats"]["numeric"]["v"];
    EXPECT_TRUE(std::isfinite(v["sum"].GetDouble()));
    EXPECT_TRUE(std::isfinite(v["mean"].GetDouble()));
}

TEST_F(Stats, CompensatedSum) {
    // 1e16 + 1 + 1 + ... - 1e16: naive summation loses every 1.
    std::vector<std::string> items = {R"({"v":1e16})"};
    for (int i = 0; i < 1000; ++i) {
        items.emplace_back(R"({"v":1})");
    }
    items.emplace_back(R"({"v":-1e16})");
    rapidjson::Document document = parse(run("stats", R"({"numeric_paths":["v"]})", items));
    EXPECT_DOUBLE_EQ(document["stats"]["numeric"]["v"]["sum"].GetDouble(), 1000.0);
}

TEST_F(Stats, QuantilesWithinRelativeAccuracyOnRandomData) {
    std::mt19937_64 random(12345);
    std::lognormal_distribution<double> latency(3.0, 1.5);
    std::vector<double> values;
    std::vector<std::string> items;
    for (int i = 0; i < 50'000; ++i) {
        const double value = latency(random) * (i % 10 == 0 ? -1.0 : 1.0);
        values.push_back(value);
        char text[64];
        std::snprintf(text, sizeof text, R"({"v":%.17g})", value);
        items.emplace_back(text);
    }
    std::sort(values.begin(), values.end());
    for (double accuracy : {0.01, 0.002}) {
        rapidjson::Document document = parse(
            run("stats",
                R"({"numeric_paths":["v"],"relative_accuracy":)" + std::to_string(accuracy) + "}",
                items));
        const rapidjson::Value& v = document["stats"]["numeric"]["v"];
        for (auto [name, q] : {std::pair{"p50", 0.50}, {"p95", 0.95}, {"p99", 0.99}}) {
            const double exact = values[QuantileSketch::rankIndex(q, values.size())];
            EXPECT_NEAR(v[name].GetDouble(), exact, accuracy * std::fabs(exact) * (1 + 1e-9))
                << name << " at accuracy " << accuracy;
        }
    }
}

TEST_F(Stats, HeavyHittersOfAKeyPath) {
    // 10 hot values take 60% of 100000 items; the rest are all distinct.
    std::vector<std::string> items;
    for (int i = 0; i < 100'000; ++i) {
        const std::string value =
            i % 10 < 6 ? "hot" + std::to_string(i / 10 % 10) : "cold" + std::to_string(i);
        items.push_back(R"({"k":")" + value + R"("})");
    }
    rapidjson::Document document = parse(run("stats", R"({"key_paths":["k"],"top_k":10})", items));
    const rapidjson::Value& k = document["stats"]["counts"]["k"];
    ASSERT_EQ(k["values"].Size(), 10U);
    std::uint64_t listed = 0;
    for (const auto& entry : k["values"].GetArray()) {
        EXPECT_EQ(std::string(entry["value"].GetString()).rfind("hot", 0), 0U);
        // True count 6000; Space-Saving overestimates by at most N / counters = 100000 / 80.
        EXPECT_GE(entry["count"].GetUint64(), 6000U);
        EXPECT_LE(entry["count"].GetUint64(), 6000U + 100'000U / 80);
        listed += entry["count"].GetUint64();
    }
    EXPECT_EQ(listed + k["other"].GetUint64(), 100'000U);
    EXPECT_TRUE(document["truncated"].GetBool());
}

TEST(StatsMemory, StaysWithinCapsOverAMillionItems) {
    auto logic = findAggregator("stats")->create(
        R"({"numeric_paths":["v","items.*.ms"],"key_paths":["id","user"],"top_k":10})");
    std::mt19937_64 random(7);
    std::uniform_real_distribution<double> spread(-12.0, 12.0);
    std::size_t early = 0;
    std::size_t peak = 0;
    for (int i = 0; i < 1'000'000; ++i) {
        char text[160];
        std::snprintf(text, sizeof text,
                      R"({"id":%d,"user":"u%d","v":%.17g,"items":[{"ms":%d},{"ms":%d}]})", i,
                      i % 50'000, std::pow(10.0, spread(random)), i % 1000, i);
        logic->accept(text);
        if (i == 10'000) {
            early = logic->memoryEstimate();
        }
        if (i % 10'000 == 0) {
            peak = std::max(peak, logic->memoryEstimate());
        }
    }
    // Two quantile sketches of at most 2 x 2048 buckets, two sketches of 80 counters, the parser.
    EXPECT_LT(peak, 2U * 2 * 2048 * 8 + 2U * 80 * 128 + 256U * 1024);
    EXPECT_LE(peak, early + 2U * 2 * 2048 * 8);
    rapidjson::Document document = parse(logic->snapshotText());
    EXPECT_EQ(document["stats"]["count"].GetInt(), 1'000'000);
    EXPECT_EQ(document["stats"]["numeric"]["items.*.ms"]["count"].GetInt(), 2'000'000);
    EXPECT_EQ(document["stats"]["counts"]["id"]["values"].Size(), 10U);
}

}  // namespace
}  // namespace crank::aggregators::test
