// SpaceSaving: exact below capacity, the classic eviction rule, guarantees on skewed streams,
// and its hash table under churn.

#include "space_saving.h"

#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace crank::aggregators::test {
namespace {

std::map<std::string, std::uint64_t> asMap(const SpaceSaving& sketch) {
    std::map<std::string, std::uint64_t> out;
    for (const SpaceSaving::Counter& counter : sketch.top(sketch.capacity())) {
        out.emplace(std::string(counter.value), counter.count);
    }
    return out;
}

TEST(SpaceSaving, ExactWhileDistinctValuesFit) {
    SpaceSaving sketch(64);
    std::map<std::string, std::uint64_t> exact;
    std::mt19937 random(1);
    for (int i = 0; i < 100'000; ++i) {
        const std::string value = "v" + std::to_string(random() % 64);
        sketch.add(value);
        ++exact[value];
    }
    EXPECT_EQ(asMap(sketch), exact);
    EXPECT_FALSE(sketch.evicted());
    EXPECT_EQ(sketch.total(), 100'000U);
}

TEST(SpaceSaving, TheNewValueTakesOverTheSmallestCounter) {
    SpaceSaving sketch(2);
    for (const char* value : {"a", "a", "a", "b", "c"}) {
        sketch.add(value);
    }
    // c replaced b (count 1) and inherited it: count 2, error 1.
    const auto top = sketch.top(2);
    ASSERT_EQ(top.size(), 2U);
    EXPECT_EQ(top[0].value, "a");
    EXPECT_EQ(top[0].count, 3U);
    EXPECT_EQ(top[0].error, 0U);
    EXPECT_EQ(top[1].value, "c");
    EXPECT_EQ(top[1].count, 2U);
    EXPECT_EQ(top[1].error, 1U);
    EXPECT_TRUE(sketch.evicted());
}

TEST(SpaceSaving, FindsHeavyHittersWithinItsErrorBound) {
    constexpr std::size_t kCounters = 100;
    constexpr std::uint64_t kItems = 1'000'000;
    SpaceSaving sketch(kCounters);
    std::map<std::string, std::uint64_t> exact;
    std::mt19937_64 random(99);
    // Zipf-like: value k with weight 1 / (k + 1), over 100000 values.
    std::vector<double> weights;
    for (int k = 0; k < 100'000; ++k) {
        weights.push_back(1.0 / (k + 1));
    }
    std::discrete_distribution<int> zipf(weights.begin(), weights.end());
    for (std::uint64_t i = 0; i < kItems; ++i) {
        const std::string value = "k" + std::to_string(zipf(random));
        sketch.add(value);
        ++exact[value];
    }
    std::uint64_t sum = 0;
    for (const SpaceSaving::Counter& counter : sketch.top(kCounters)) {
        const std::uint64_t truth = exact[std::string(counter.value)];
        EXPECT_GE(counter.count, truth);
        EXPECT_LE(counter.count - counter.error, truth);
        EXPECT_LE(counter.error, kItems / kCounters);
        sum += counter.count;
    }
    EXPECT_EQ(sum, kItems);
    // Every value more frequent than N / counters is counted.
    const auto counted = asMap(sketch);
    for (const auto& [value, count] : exact) {
        if (count > kItems / kCounters) {
            EXPECT_EQ(counted.count(value), 1U) << value;
        }
    }
    // The top 5 of a Zipf stream are found in order.
    const auto top = sketch.top(5);
    for (std::size_t i = 0; i < top.size(); ++i) {
        EXPECT_EQ(top[i].value, "k" + std::to_string(i));
    }
}

TEST(SpaceSaving, HashTableSurvivesChurn) {
    // A small sketch with constant replacement: every kept value must still be found (its count
    // grows in place rather than taking another counter).
    SpaceSaving sketch(8);
    std::mt19937 random(3);
    for (int i = 0; i < 200'000; ++i) {
        sketch.add("x" + std::to_string(random() % 1000));
    }
    const auto before = sketch.top(8);
    std::map<std::string, std::uint64_t> expected;
    for (const SpaceSaving::Counter& counter : before) {
        expected.emplace(std::string(counter.value), counter.count + 5);
    }
    for (const auto& [value, count] : expected) {
        for (int i = 0; i < 5; ++i) {
            sketch.add(value);
        }
    }
    EXPECT_EQ(asMap(sketch), expected);
    EXPECT_EQ(sketch.size(), 8U);
}

TEST(SpaceSaving, MemoryIsBoundedByCapacity) {
    SpaceSaving sketch(80);
    for (int i = 0; i < 1'000'000; ++i) {
        sketch.add("value-" + std::to_string(i));
    }
    EXPECT_EQ(sketch.size(), 80U);
    EXPECT_LT(sketch.memoryEstimate(), 80U * 128);
}

}  // namespace
}  // namespace crank::aggregators::test
