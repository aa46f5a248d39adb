// raw_items: verbatim items, first / last, both caps, bounded memory.

#include "raw_items_aggregate.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aggregator_catalog.h"
#include "aggregators_test_support.h"

namespace crank::aggregators::test {
namespace {

using RawItems = PluginTest;

TEST_F(RawItems, KeepsItemsVerbatimInOrder) {
    EXPECT_EQ(run("raw_items", "{}", {R"({ "a" : 1 })", "2", R"("x")", "[1, 2]", "null"}),
              R"({"items":[{ "a" : 1 },2,"x",[1, 2],null]})");
}

TEST_F(RawItems, KeepFirstStopsAtMaxItems) {
    EXPECT_EQ(run("raw_items", R"({"max_items":2})", {"1", R"({"a":1})", R"("x")"}),
              R"({"items":[1,{"a":1}],"truncated":true})");
    EXPECT_EQ(run("raw_items", R"({"max_items":3})", {"1", R"({"a":1})", R"("x")"}),
              R"({"items":[1,{"a":1},"x"]})");
}

TEST_F(RawItems, KeepLastIsARing) {
    EXPECT_EQ(run("raw_items", R"({"max_items":2,"keep":"last"})", {"1", "2", "3", "4", "5"}),
              R"({"items":[4,5],"truncated":true})");
    EXPECT_EQ(run("raw_items", R"({"max_items":5,"keep":"last"})", {"1", "2"}),
              R"({"items":[1,2]})");
}

TEST_F(RawItems, KeepFirstIsAPrefixWithinMaxBytes) {
    // 3 + 3 bytes fit in 7; the 5-byte item does not, and nothing after it is kept even if small.
    EXPECT_EQ(run("raw_items", R"({"max_bytes":7})", {R"("a")", R"("b")", R"("ccc")", "1"}),
              R"({"items":["a","b"],"truncated":true})");
}

TEST_F(RawItems, KeepLastDropsTheOldestForBytes) {
    EXPECT_EQ(
        run("raw_items", R"({"max_bytes":8,"keep":"last"})", {R"("a")", R"("b")", R"("ccc")", "1"}),
        R"({"items":["ccc",1],"truncated":true})");
    // An item longer than max_bytes alone is left out; the others stay.
    EXPECT_EQ(run("raw_items", R"({"max_bytes":4,"keep":"last"})", {"1", R"("toolong")", "2"}),
              R"({"items":[1,2],"truncated":true})");
}

TEST(RawItemsMemory, StaysWithinCapsOverAMillionItems) {
    for (const char* keep : {"first", "last"}) {
        const std::string config =
            std::string(R"({"max_items":1000,"max_bytes":65536,"keep":")") + keep + "\"}";
        auto logic = findAggregator("raw_items")->create(config);
        auto& raw = dynamic_cast<RawItemsAggregate&>(*logic);
        std::size_t peak = 0;
        for (int i = 0; i < 1'000'000; ++i) {
            raw.accept(R"({"id":)" + std::to_string(i) + R"(,"payload":"abcdefghijklmnop"})");
            if (i % 1000 == 0) {
                peak = std::max(peak, raw.memoryEstimate());
            }
        }
        EXPECT_LE(raw.keptItems(), 1000U);
        EXPECT_LE(raw.keptBytes(), 65536U);
        EXPECT_GT(raw.keptItems(), 1000U / 2);
        // The kept text, its string headers, and the parser's fixed buffers.
        EXPECT_LT(peak, 65536U + 1000U * 64 + 128U * 1024) << keep;
        const std::string snapshot = raw.snapshotText();
        EXPECT_LT(snapshot.size(), 65536U + 1000U + 64);
        rapidjson::Document document = parse(snapshot);
        EXPECT_EQ(document["items"].Size(), raw.keptItems());
        EXPECT_TRUE(document["truncated"].GetBool());
        if (std::string(keep) == "last") {
            EXPECT_EQ(document["items"][document["items"].Size() - 1]["id"].GetInt(), 999'999);
        } else {
            EXPECT_EQ(document["items"][0]["id"].GetInt(), 0);
        }
    }
}

}  // namespace
}  // namespace crank::aggregators::test
