// QuantileSketch: relative accuracy against exact quantiles, signs and zero, collapsing.

#include "quantile_sketch.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace crank::aggregators::test {
namespace {

const std::vector<double> kQuantiles = {0.0,  0.001, 0.01, 0.1,  0.25,  0.5,
                                        0.75, 0.9,   0.95, 0.99, 0.999, 1.0};

void expectWithin(const QuantileSketch& sketch, std::vector<double> values, double alpha) {
    std::sort(values.begin(), values.end());
    for (double q : kQuantiles) {
        const double exact = values[QuantileSketch::rankIndex(q, values.size())];
        EXPECT_NEAR(sketch.quantile(q), exact, alpha * std::fabs(exact) * (1 + 1e-9)) << "q=" << q;
    }
}

TEST(QuantileSketch, NearestRank) {
    EXPECT_EQ(QuantileSketch::rankIndex(0.5, 100), 49U);
    EXPECT_EQ(QuantileSketch::rankIndex(0.95, 100), 94U);
    EXPECT_EQ(QuantileSketch::rankIndex(0.99, 100), 98U);
    EXPECT_EQ(QuantileSketch::rankIndex(0.0, 100), 0U);
    EXPECT_EQ(QuantileSketch::rankIndex(1.0, 100), 99U);
    EXPECT_EQ(QuantileSketch::rankIndex(0.5, 3), 1U);
    EXPECT_EQ(QuantileSketch::rankIndex(0.95, 3), 2U);
}

TEST(QuantileSketch, ExactForFewValues) {
    QuantileSketch sketch(0.01, 2048);
    std::vector<double> values;
    std::mt19937_64 random(5);
    std::uniform_real_distribution<double> uniform(-100, 100);
    for (std::size_t i = 0; i < QuantileSketch::kExactValues; ++i) {
        values.push_back(uniform(random));
        sketch.add(values.back());
    }
    expectWithin(sketch, values, 0.0);
}

TEST(QuantileSketch, RelativeAccuracyOnRandomData) {
    struct Case {
        const char* name;
        double alpha;
        std::function<double(std::mt19937_64&)> draw;
    };
    const std::vector<Case> cases = {
        {"lognormal", 0.01,
         [](std::mt19937_64& r) { return std::lognormal_distribution<double>(0, 2)(r); }},
        {"uniform", 0.01,
         [](std::mt19937_64& r) { return std::uniform_real_distribution<double>(0, 1e6)(r); }},
        {"pareto", 0.01,
         [](std::mt19937_64& r) {
             return 1.0 / std::pow(std::uniform_real_distribution<double>(1e-9, 1)(r), 1.5);
         }},
        {"mixed signs and zeros", 0.01,
         [](std::mt19937_64& r) {
             const auto pick = r() % 10;
             const double magnitude = std::exponential_distribution<double>(0.01)(r);
             return pick == 0 ? 0.0 : (pick < 4 ? -magnitude : magnitude);
         }},
        {"integers", 0.01, [](std::mt19937_64& r) { return static_cast<double>(r() % 5000); }},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        std::mt19937_64 random(42);
        QuantileSketch sketch(c.alpha, 2048);
        std::vector<double> values;
        for (int i = 0; i < 200'000; ++i) {
            values.push_back(c.draw(random));
            sketch.add(values.back());
        }
        EXPECT_FALSE(sketch.collapsed());
        expectWithin(sketch, values, c.alpha);
        EXPECT_EQ(sketch.count(), values.size());
    }
}

TEST(QuantileSketch, CollapsesTheSmallestMagnitudesWithinItsCap) {
    QuantileSketch sketch(0.01, 64);
    std::vector<double> values;
    std::mt19937_64 random(8);
    std::uniform_real_distribution<double> exponent(-20, 20);
    for (int i = 0; i < 100'000; ++i) {
        values.push_back(std::pow(10.0, exponent(random)));
        sketch.add(values.back());
    }
    EXPECT_TRUE(sketch.collapsed());
    EXPECT_LE(sketch.memoryEstimate(), sizeof(QuantileSketch) + 2 * 64 * 8);
    // The top of the distribution keeps its accuracy: 64 buckets of 2% span about 3.6x.
    std::sort(values.begin(), values.end());
    for (double q : {0.999, 1.0}) {
        const double exact = values[QuantileSketch::rankIndex(q, values.size())];
        EXPECT_NEAR(sketch.quantile(q), exact, 0.01 * exact * (1 + 1e-9));
    }
    // Collapsed answers stay within [min, max].
    EXPECT_GE(sketch.quantile(0.01), values.front());
    EXPECT_LE(sketch.quantile(0.01), values.back());
}

TEST(QuantileSketch, ExtremeValues) {
    QuantileSketch sketch(0.01, 2048);
    for (int i = 0; i < 2000; ++i) {
        sketch.add(i % 2 == 0 ? 1e-310 : 1.7e308);  // a subnormal counts as zero
    }
    EXPECT_TRUE(std::isfinite(sketch.quantile(1.0)));
    EXPECT_DOUBLE_EQ(sketch.quantile(1.0), 1.7e308);
    EXPECT_DOUBLE_EQ(sketch.quantile(0.0), 1e-310);  // zero clamped to the exact minimum
}

}  // namespace
}  // namespace crank::aggregators::test
