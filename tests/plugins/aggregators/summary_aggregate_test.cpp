// summary_only and summary_plus_samples: exact summaries, markers, samples, bounded memory.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aggregator_catalog.h"
#include "aggregators_test_support.h"

namespace crank::aggregators::test {
namespace {

using Summary = PluginTest;

std::size_t totalBytes(const std::vector<std::string>& items) {
    std::size_t bytes = 0;
    for (const std::string& item : items) {
        bytes += item.size();
    }
    return bytes;
}

TEST_F(Summary, ExactSummaryOfSmallInput) {
    const std::vector<std::string> items = {R"({"a":1,"b":"x"})",
                                            R"({"a":2,"b":"x"})",
                                            R"({"a":"1"})",
                                            "[1]",
                                            "null",
                                            R"("s")",
                                            "true",
                                            "3.5"};
    const std::string expected =
        R"({"summary":{"count":8,"bytes":)" + std::to_string(totalBytes(items)) +
        R"(,"types":{"object":3,"array":1,"string":1,"number":1,"boolean":1,"null":1},)"
        R"("fields":{"values":[{"value":"a","count":3},{"value":"b","count":2}],"other":0},)"
        R"("counts":{"a":{"values":[{"value":"1","count":2},{"value":"2","count":1}],"other":0},)"
        R"("b":{"values":[{"value":"x","count":2}],"other":0}},)"
        R"("first":{"a":1,"b":"x"},"last":3.5}})";
    EXPECT_EQ(run("summary_only", R"({"key_paths":["a","b"]})", items), expected);
}

TEST_F(Summary, KeysOfScalars) {
    // Numbers by their shortest text (3.0 is 3), booleans and null by name; objects and arrays
    // only in "other".
    const std::string snapshot =
        run("summary_only", R"({"key_paths":["k"],"include_first_last":false})",
            {R"({"k":3})", R"({"k":3.0})", R"({"k":0.25})", R"({"k":-7})", R"({"k":true})",
             R"({"k":null})", R"({"k":{"x":1}})", R"({"k":[1]})", R"({"other":1})"});
    rapidjson::Document document = parse(snapshot);
    EXPECT_EQ(
        compact(document["summary"]["counts"]["k"]),
        R"({"values":[{"value":"3","count":2},{"value":"-7","count":1},{"value":"0.25","count":1},{"value":"null","count":1},{"value":"true","count":1}],"other":2})");
    EXPECT_FALSE(document["summary"].HasMember("first"));
    EXPECT_FALSE(document.HasMember("truncated"));
}

TEST_F(Summary, WildcardPathsCountEveryMatch) {
    const std::string snapshot = run("summary_only", R"({"key_paths":["tags.*","$.n.0"]})",
                                     {R"({"tags":["a","b"],"n":[5]})", R"({"tags":["a"]})"});
    rapidjson::Document document = parse(snapshot);
    EXPECT_EQ(
        compact(document["summary"]["counts"]),
        R"({"tags.*":{"values":[{"value":"a","count":2},{"value":"b","count":1}],"other":0},"$.n.0":{"values":[{"value":"5","count":1}],"other":0}})");
}

TEST_F(Summary, TopKOverflowIsTruncated) {
    const std::string snapshot = run("summary_only", R"({"key_paths":["v"],"top_k":1})",
                                     {R"({"v":"x"})", R"({"v":"y"})", R"({"v":"x"})"});
    rapidjson::Document document = parse(snapshot);
    EXPECT_EQ(compact(document["summary"]["counts"]["v"]),
              R"({"values":[{"value":"x","count":2}],"other":1})");
    EXPECT_TRUE(document["truncated"].GetBool());
}

TEST_F(Summary, LongFirstAndLastItemsBecomeMarkers) {
    const std::string long_item = R"({"text":"0123456789012345678901234567890123456789"})";
    const std::string snapshot =
        run("summary_only", R"({"max_item_bytes":16})", {long_item, R"({"a":1})"});
    rapidjson::Document document = parse(snapshot);
    EXPECT_EQ(compact(document["summary"]["first"]),
              R"({"truncated_item":true,"bytes":)" + std::to_string(long_item.size()) + "}");
    EXPECT_EQ(compact(document["summary"]["last"]), R"({"a":1})");
    EXPECT_TRUE(document["truncated"].GetBool());
}

TEST_F(Summary, SamplesFirstAndLast) {
    const std::vector<std::string> items = {"1", "2", "3", "4", "5"};
    rapidjson::Document first =
        parse(run("summary_plus_samples", R"({"sample_size":2,"sampling":"first"})", items));
    EXPECT_EQ(compact(first["items"]), "[1,2]");
    EXPECT_EQ(first["summary"]["count"].GetInt(), 5);
    rapidjson::Document last =
        parse(run("summary_plus_samples", R"({"sample_size":2,"sampling":"last"})", items));
    EXPECT_EQ(compact(last["items"]), "[4,5]");
    rapidjson::Document all = parse(run("summary_plus_samples", R"({"sample_size":9})", items));
    EXPECT_EQ(compact(all["items"]), "[1,2,3,4,5]");
}

TEST_F(Summary, ReservoirIsDeterministicWithASeed) {
    std::vector<std::string> items;
    for (int i = 0; i < 1000; ++i) {
        items.push_back(std::to_string(i));
    }
    const std::string a = run("summary_plus_samples", R"({"sample_size":10,"seed":42})", items);
    const std::string b = run("summary_plus_samples", R"({"sample_size":10,"seed":42})", items);
    const std::string c = run("summary_plus_samples", R"({"sample_size":10,"seed":7})", items);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    rapidjson::Document document = parse(a);
    ASSERT_EQ(document["items"].Size(), 10U);
    for (rapidjson::SizeType i = 1; i < 10; ++i) {  // arrival order
        EXPECT_LT(document["items"][i - 1].GetInt(), document["items"][i].GetInt());
    }
}

TEST_F(Summary, LongSamplesBecomeMarkers) {
    const std::string long_item = R"({"text":"01234567890123456789"})";
    rapidjson::Document document = parse(run(
        "summary_plus_samples", R"({"max_item_bytes":16,"sampling":"first"})", {long_item, "1"}));
    EXPECT_EQ(compact(document["items"]),
              R"([{"truncated_item":true,"bytes":)" + std::to_string(long_item.size()) + "},1]");
    EXPECT_TRUE(document["truncated"].GetBool());
}

TEST(SummaryMemory, StaysWithinCapsOverAMillionItems) {
    for (const char* mode : {"summary_only", "summary_plus_samples"}) {
        auto logic =
            findAggregator(mode)->create(R"({"key_paths":["id","user","tags.*"],"top_k":20})");
        std::size_t early = 0;
        std::size_t peak = 0;
        for (int i = 0; i < 1'000'000; ++i) {
            const std::string n = std::to_string(i);
            logic->accept(R"({"id":)" + n + R"(,"user":"u)" + std::to_string(i % 100'000) +
                          R"(","f)" + std::to_string(i % 5000) + R"(":1,"tags":["t)" + n +
                          R"(","common"]})");
            if (i == 10'000) {
                early = logic->memoryEstimate();
            }
            if (i % 10'000 == 0) {
                peak = std::max(peak, logic->memoryEstimate());
            }
        }
        // Sketches of 160 counters of short keys: well under a megabyte, and no growth.
        EXPECT_LT(peak, 1024U * 1024) << mode;
        EXPECT_LE(peak, early + 16 * 1024) << mode;
        const std::string snapshot = logic->snapshotText();
        EXPECT_LT(snapshot.size(), 16U * 1024) << mode;
        rapidjson::Document document = parse(snapshot);
        const rapidjson::Value& summary = document["summary"];
        EXPECT_EQ(summary["count"].GetInt(), 1'000'000);
        EXPECT_EQ(summary["fields"]["values"].Size(), 20U);
        for (const auto& path : summary["counts"].GetObject()) {
            EXPECT_LE(path.value["values"].Size(), 20U);
        }
        // "common" is in every item: the sketch finds it with its exact count.
        EXPECT_EQ(compact(summary["counts"]["tags.*"]["values"][0]),
                  R"({"value":"common","count":1000000})");
        EXPECT_TRUE(document["truncated"].GetBool());
        if (std::string(mode) == "summary_plus_samples") {
            EXPECT_EQ(document["items"].Size(), 5U);
        }
    }
}

}  // namespace
}  // namespace crank::aggregators::test
