#include "runtime/output_mapping.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace crank::runtime {
namespace {

OutputMapping mapping(const config::ExecutionConfig& config) {
    Result<OutputMapping> m = OutputMapping::create(config, "operations[0].execution");
    if (!m.ok()) {
        ADD_FAILURE() << m.error().message;
        return *OutputMapping::create({}, "");
    }
    return *m;
}

config::ExecutionConfig paths(std::optional<std::string> items,
                              std::optional<std::string> summary = {},
                              std::optional<std::string> cursor = {},
                              std::optional<std::string> status = {},
                              std::optional<std::string> done = {}) {
    config::ExecutionConfig c;
    c.items_path = std::move(items);
    c.summary_path = std::move(summary);
    c.cursor_path = std::move(cursor);
    c.status_path = std::move(status);
    c.done_path = std::move(done);
    return c;
}

std::string mapError(const OutputMapping& m, std::string_view response) {
    Result<MappedResponse> r = m.map(response, 100);
    return r.ok() ? "<ok>" : r.error().message;
}

TEST(OutputMapping, WholeResponseIsOneItem) {
    OutputMapping m = mapping({});
    Result<MappedResponse> r = m.map(R"( {"a": 1} )", 10);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->items, std::vector<std::string>{R"({"a":1})"});
    EXPECT_EQ(r->items_total, 1U);
    EXPECT_FALSE(r->summary_json || r->cursor || r->status || r->done);
}

TEST(OutputMapping, AllPaths) {
    OutputMapping m = mapping(paths("data.items", "data.summary", "page.next", "state", "done"));
    Result<MappedResponse> r = m.map(R"({"data": {"items": [{"id": 1}, 2, "x"],
        "summary": {"count": 3}}, "page": {"next": "c-2"}, "state": "running", "done": false})",
                                     10);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->items, (std::vector<std::string>{R"({"id":1})", "2", R"("x")"}));
    EXPECT_EQ(r->summary_json, R"({"count":3})");
    EXPECT_EQ(r->cursor, "c-2");
    EXPECT_EQ(r->status, "running");
    EXPECT_EQ(r->done, false);
}

TEST(OutputMapping, AbsentOptionalValues) {
    OutputMapping m = mapping(paths("items", "summary", "cursor", "status", "done"));
    Result<MappedResponse> r = m.map(R"({"items": [], "cursor": null, "status": null})", 10);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->items.empty());
    EXPECT_FALSE(r->summary_json || r->cursor || r->status || r->done);
    Result<MappedResponse> nulls = m.map(R"({"items": null})", 10);
    ASSERT_TRUE(nulls.ok());
    EXPECT_TRUE(nulls->items.empty());
}

TEST(OutputMapping, CursorAndStatusNumbers) {
    OutputMapping m = mapping(paths(std::nullopt, std::nullopt, "next", "code"));
    Result<MappedResponse> r = m.map(R"({"next": 12345678901, "code": 2.5})", 10);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->cursor, "12345678901");
    EXPECT_EQ(r->status, "2.5");
    EXPECT_EQ(mapError(m, R"({"next": true})"),
              "response: cursor_path \"next\" must be a string or a number, got true");
    EXPECT_EQ(mapError(m, R"({"code": {}})"),
              "response: status_path \"code\" must be a string or a number, got an object");
}

TEST(OutputMapping, DoneTruthiness) {
    OutputMapping m = mapping(paths(std::nullopt, std::nullopt, std::nullopt, std::nullopt, "d"));
    auto done = [&](std::string_view value) {
        Result<MappedResponse> r = m.map("{\"d\": " + std::string(value) + "}", 1);
        EXPECT_TRUE(r.ok());
        return r->done;
    };
    EXPECT_EQ(done("true"), true);
    EXPECT_EQ(done("false"), false);
    EXPECT_EQ(done("null"), false);
    EXPECT_EQ(done("0"), false);
    EXPECT_EQ(done("0.0"), false);
    EXPECT_EQ(done("2"), true);
    EXPECT_EQ(done("\"\""), false);
    EXPECT_EQ(done("\"false\""), true);
    EXPECT_EQ(done("[]"), true);
    EXPECT_EQ(done("{}"), true);
    EXPECT_EQ(m.map("{}", 1)->done, std::nullopt);
}

TEST(OutputMapping, ItemsErrors) {
    OutputMapping m = mapping(paths("data.items"));
    EXPECT_EQ(mapError(m, R"({"data": {}})"),
              "response: items_path \"data.items\" matched nothing");
    EXPECT_EQ(mapError(m, R"({"data": {"items": {"a": 1}}})"),
              "response: items_path \"data.items\" must be an array, got an object");
    EXPECT_EQ(mapError(m, R"({"data": {"items": "abc"}})"),
              "response: items_path \"data.items\" must be an array, got a string");
    EXPECT_EQ(mapError(m, R"({"data": )"), "response: malformed JSON at byte 9: invalid value");
    EXPECT_EQ(mapError(m, std::string(1000, '[')),
              "response: nested deeper than 64 levels at byte 64");
}

TEST(OutputMapping, WildcardItems) {
    OutputMapping m = mapping(paths("pages.*.items.*"));
    Result<MappedResponse> r =
        m.map(R"({"pages": [{"items": [1, 2]}, {"items": []}, {"other": 1}, {"items": [3]}]})", 10);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->items, (std::vector<std::string>{"1", "2", "3"}));
    OutputMapping members = mapping(paths("data.*"));
    r = members.map(R"({"data": {"a": {"x": 1}, "b": {"x": 2}}})", 10);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->items, (std::vector<std::string>{R"({"x":1})", R"({"x":2})"}));
    r = members.map(R"({"nothing": 1})", 10);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->items.empty());
}

TEST(OutputMapping, MaxItems) {
    OutputMapping m = mapping(paths("items"));
    std::string big = "{\"items\": [";
    for (int i = 0; i < 10'000; ++i) {
        big += (i == 0 ? "" : ",") + std::to_string(i);
    }
    Result<MappedResponse> r = m.map(big + "]}", 3);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->items, (std::vector<std::string>{"0", "1", "2"}));
    EXPECT_EQ(r->items_total, 10'000U);
    EXPECT_TRUE(r->items_truncated);
    r = m.map(R"({"items": [1]})", 0);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->items.empty());
    EXPECT_TRUE(r->items_truncated);
}

TEST(OutputMapping, ConfigErrors) {
    EXPECT_EQ(OutputMapping::create(paths("a..b"), "operations[0].execution").error().message,
              "operations[0].execution.items_path: \"a..b\": empty member name (two dots in a "
              "row, or a trailing dot) at byte 2");
    EXPECT_EQ(OutputMapping::create(paths(std::nullopt, std::nullopt, "x*"), "e").error().message,
              "e.cursor_path: \"x*\": \"*\" must be a whole segment (write \"\\*\" for a literal "
              "star) at byte 1");
}

}  // namespace
}  // namespace crank::runtime
