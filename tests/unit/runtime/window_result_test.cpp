#include "runtime/window_result.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "runtime/error_names.h"

namespace crank::runtime {
namespace {

rapidjson::Document parse(const std::string& text) {
    rapidjson::Document doc;
    doc.Parse(text.c_str());
    EXPECT_FALSE(doc.HasParseError()) << text;
    return doc;
}

WindowResult sample(StopReason reason, std::string aggregate) {
    WindowResult r;
    r.item_count = 3;
    r.dropped_count = 1;
    r.bytes = 120;
    r.stop_reason = reason;
    r.elapsed_ms = 42;
    r.aggregate_json = std::move(aggregate);
    return r;
}

TEST(WindowResult, RendersEveryContractMemberThenTheAggregatorsOwn) {
    WindowResult r = sample(StopReason::upstream_end, R"({"items":[1,2,3]})");
    r.cursor = "c3";
    auto rendered = renderWindowResult(r, 1 << 20);
    ASSERT_TRUE(rendered) << rendered.error().message;
    EXPECT_EQ(rendered->json, R"({"item_count":3,"dropped_count":1,"bytes":120,"truncated":false,)"
                              R"("window_complete":true,"has_more":false,"cursor":"c3",)"
                              R"("stop_reason":"upstream_end","elapsed_ms":42,"items":[1,2,3]})");
}

TEST(WindowResult, AnUpstreamErrorCarriesThePluginsDetails) {
    WindowResult r = sample(StopReason::upstream_error, R"({"items":[]})");
    r.error = UpstreamError{"upstream", "gRPC INVALID_ARGUMENT from a.B/C: bad",
                            R"({"grpc_status":{"code":3}})"};
    auto rendered = renderWindowResult(r, 1 << 20);
    ASSERT_TRUE(rendered) << rendered.error().message;
    EXPECT_NE(rendered->json.find(R"("error":{"code":"upstream","message":"gRPC INVALID_ARGUMENT )"
                                  R"(from a.B/C: bad","details":{"grpc_status":{"code":3}}})"),
              std::string::npos)
        << rendered->json;
}

TEST(ErrorDetails, ReachClientsScrubbedBoundedAndOnlyAsAnObject) {
    const SecretScrubber scrubber({"hunter2-secret"});
    EXPECT_EQ(clientErrorDetails(R"({"why":"token hunter2-secret refused"})", scrubber),
              R"({"why":"token [redacted] refused"})");
    EXPECT_EQ(clientErrorDetails(R"({"a":1})", SecretScrubber()), R"({"a":1})");
    EXPECT_EQ(clientErrorDetails("", scrubber), "");
    EXPECT_EQ(clientErrorDetails("[1,2]", scrubber), "");
    EXPECT_EQ(clientErrorDetails(R"({"a":)", scrubber), "");
    const std::string huge = R"({"a":")" + std::string(kMaxErrorDetailsBytes, 'x') + R"("})";
    EXPECT_EQ(clientErrorDetails(huge, scrubber), "");
    // Nested deeper than crankd parses anything: left out, not recursed into.
    const std::string deep = R"({"a":)" + std::string(5000, '[') + std::string(5000, ']') + "}";
    EXPECT_EQ(clientErrorDetails(deep, scrubber), "");
}

TEST(WindowResult, StopReasonsDecideCompletenessAndMore) {
    struct Case {
        StopReason reason;
        bool complete;
        bool more;
        bool truncated;
    };
    for (const Case c : {Case{StopReason::duration, true, true, false},
                         Case{StopReason::max_items, false, true, true},
                         Case{StopReason::max_bytes, false, true, true},
                         Case{StopReason::upstream_end, true, false, false},
                         Case{StopReason::upstream_timeout, false, true, false},
                         Case{StopReason::upstream_error, false, true, false},
                         Case{StopReason::cancelled, false, true, false}}) {
        auto rendered = renderWindowResult(sample(c.reason, "{}"), 1 << 20);
        ASSERT_TRUE(rendered);
        const auto doc = parse(rendered->json);
        EXPECT_EQ(doc["window_complete"].GetBool(), c.complete) << toString(c.reason);
        EXPECT_EQ(doc["has_more"].GetBool(), c.more) << toString(c.reason);
        EXPECT_EQ(doc["truncated"].GetBool(), c.truncated) << toString(c.reason);
        EXPECT_EQ(parseStopReason(toString(c.reason)), c.reason);
    }
    EXPECT_FALSE(parseStopReason("bogus"));
}

TEST(WindowResult, TheAggregatorsTruncatedFlagIsFoldedInAndContractMembersAreNotOverridden) {
    auto rendered = renderWindowResult(
        sample(StopReason::duration, R"({"truncated":true,"item_count":999,"state":{}})"), 1 << 20);
    ASSERT_TRUE(rendered);
    const auto doc = parse(rendered->json);
    EXPECT_TRUE(doc["truncated"].GetBool());
    EXPECT_EQ(doc["item_count"].GetInt(), 3);
    EXPECT_TRUE(doc.HasMember("state"));
}

TEST(WindowResult, ItemsAreLeftOutFromTheEndToFitMaxResultBytes) {
    std::string items = R"({"items":[)";
    for (int i = 0; i < 1000; ++i) {
        items += (i == 0 ? "" : ",") + std::string(R"({"n":)") + std::to_string(i) + "}";
    }
    items += "]}";
    auto rendered = renderWindowResult(sample(StopReason::upstream_end, items), 2000);
    ASSERT_TRUE(rendered);
    EXPECT_LE(rendered->json.size(), 2000U);
    EXPECT_TRUE(rendered->truncated);
    const auto doc = parse(rendered->json);
    ASSERT_GT(doc["items"].Size(), 10U);
    EXPECT_EQ(doc["items"][0]["n"].GetInt(), 0);  // the front is kept
    EXPECT_TRUE(doc["truncated"].GetBool());
}

TEST(WindowResult, AResultThatCannotFitNamesBothSizes) {
    const std::string big = R"({"summary":{"text":")" + std::string(5000, 'x') + R"("}})";
    auto rendered = renderWindowResult(sample(StopReason::upstream_end, big), 1000);
    ASSERT_FALSE(rendered);
    EXPECT_NE(rendered.error().message.find("more than max_result_bytes (1000)"), std::string::npos)
        << rendered.error().message;
}

TEST(WindowResult, ASnapshotThatIsNotAnObjectIsAnError) {
    EXPECT_FALSE(renderWindowResult(sample(StopReason::duration, "[1]"), 1000));
    EXPECT_FALSE(renderWindowResult(sample(StopReason::duration, "{"), 1000));
}

TEST(WindowResult, UpstreamErrorsAreShown) {
    WindowResult r = sample(StopReason::upstream_error, "{}");
    r.error = UpstreamError{"upstream", "HTTP 502 \"bad\""};
    auto rendered = renderWindowResult(r, 1 << 20);
    ASSERT_TRUE(rendered);
    const auto doc = parse(rendered->json);
    EXPECT_STREQ(doc["error"]["code"].GetString(), "upstream");
    EXPECT_STREQ(doc["error"]["message"].GetString(), "HTTP 502 \"bad\"");
}

TEST(WindowOutputSchema, MergesTheAggregatorsPropertiesAndRequiredMembers) {
    auto schema = windowOutputSchema(
        R"({"type":"object","properties":{"stats":{"type":"object"},"truncated":{"type":"boolean"}},)"
        R"("required":["stats"]})",
        "aggregator stats");
    ASSERT_TRUE(schema) << schema.error().message;
    const auto doc = parse(*schema);
    EXPECT_TRUE(doc["properties"].HasMember("stats"));
    EXPECT_TRUE(doc["properties"].HasMember("stop_reason"));
    EXPECT_EQ(doc["properties"]["stop_reason"]["enum"].Size(), 7U);
    bool requiresStats = false;
    for (const auto& name : doc["required"].GetArray()) {
        requiresStats = requiresStats || std::string(name.GetString()) == "stats";
    }
    EXPECT_TRUE(requiresStats);
    EXPECT_FALSE(windowOutputSchema("[]", "aggregator x"));
}

}  // namespace
}  // namespace crank::runtime
