// ItemSampler: reservoir determinism and uniformity.

#include "item_sampler.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aggregators_test_support.h"

namespace crank::aggregators::test {
namespace {

std::vector<int> sample(std::uint64_t seed, int items, std::size_t size) {
    ItemSampler sampler(ItemSampler::Mode::reservoir, size, seed, 64);
    for (int i = 0; i < items; ++i) {
        sampler.offer(std::to_string(i));
    }
    JsonBuffer buffer;
    JsonWriter writer(buffer);
    sampler.write(writer);
    rapidjson::Document document = parse({buffer.GetString(), buffer.GetSize()});
    std::vector<int> out;
    for (const auto& value : document.GetArray()) {
        out.push_back(value.GetInt());
    }
    return out;
}

TEST(ItemSampler, SameSeedSameSample) {
    EXPECT_EQ(sample(1, 10'000, 20), sample(1, 10'000, 20));
    EXPECT_NE(sample(1, 10'000, 20), sample(2, 10'000, 20));
    EXPECT_EQ(sample(1, 10'000, 20).size(), 20U);
}

TEST(ItemSampler, ReservoirIsUniform) {
    // 4000 samples of 10 out of 100 items: each item is expected 400 times.
    std::vector<int> hits(100, 0);
    for (std::uint64_t seed = 0; seed < 4000; ++seed) {
        for (int item : sample(seed, 100, 10)) {
            ++hits[static_cast<std::size_t>(item)];
        }
    }
    for (int count : hits) {
        EXPECT_GT(count, 400 - 100);
        EXPECT_LT(count, 400 + 100);
    }
}

}  // namespace
}  // namespace crank::aggregators::test
