#include "json/json_path.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "json/json_text.h"
#include "json_test_support.h"

namespace crank::json {
namespace {

using testing::parse;

sdk::Path path(std::string_view text) {
    Result<sdk::Path> p = compilePath(text, "test");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
    return p.ok() ? *p : sdk::Path{};
}

std::string found(const Value& root, std::string_view text) {
    const Value* v = find(root, path(text));
    return v == nullptr ? "<none>" : toJsonText(*v);
}

std::vector<std::string> all(const Value& root, std::string_view text) {
    std::vector<std::string> out;
    const std::size_t n =
        forEach(root, path(text), [&](const Value& v) { out.push_back(toJsonText(v)); });
    EXPECT_EQ(n, out.size());
    return out;
}

const char* const doc_text = R"({
  "data": {"items": [{"id": 1, "token": "s1"}, {"id": 2, "token": "s2"}, {"id": 3}]},
  "a.b": {"c": 7}, "*": 8, "0": "zero", "dup": 1, "dup": 2,
  "matrix": [[1, 2], [3, 4]]
})";

TEST(JsonPath, FindNames) {
    Document doc = parse(doc_text);
    EXPECT_EQ(found(doc, "data.items.1.id"), "2");
    EXPECT_EQ(found(doc, "$.data.items.0.token"), R"("s1")");
    EXPECT_EQ(found(doc, ".data.items.2.id"), "3");
    EXPECT_EQ(found(doc, "data.items.3"), "<none>");
    EXPECT_EQ(found(doc, "data.items.01"), "<none>");  // not an index
    EXPECT_EQ(found(doc, "data.items.x"), "<none>");
    EXPECT_EQ(found(doc, "data.items.0.id.deeper"), "<none>");
    EXPECT_EQ(found(doc, "a\\.b.c"), "7");
    EXPECT_EQ(found(doc, "\\*"), "8");
    EXPECT_EQ(found(doc, "0"), R"("zero")");  // an index name on an object is a member name
    EXPECT_EQ(found(doc, "dup"), "1");        // the first of duplicate keys
    EXPECT_EQ(found(doc, "missing"), "<none>");
}

TEST(JsonPath, RootPaths) {
    Document doc = parse("[1]");
    EXPECT_EQ(found(doc, ""), "[1]");
    EXPECT_EQ(found(doc, "$"), "[1]");
}

TEST(JsonPath, WildcardsExpandInDocumentOrder) {
    Document doc = parse(doc_text);
    EXPECT_EQ(all(doc, "data.items.*.id"), (std::vector<std::string>{"1", "2", "3"}));
    EXPECT_EQ(all(doc, "data.items.*.token"), (std::vector<std::string>{R"("s1")", R"("s2")"}));
    EXPECT_EQ(all(doc, "matrix.*.*"), (std::vector<std::string>{"1", "2", "3", "4"}));
    EXPECT_EQ(all(doc, "matrix.*.1"), (std::vector<std::string>{"2", "4"}));
    EXPECT_EQ(all(doc, "*.c"), (std::vector<std::string>{"7"}));
    EXPECT_EQ(all(doc, "dup.*"), std::vector<std::string>{});  // wildcard on a scalar
    EXPECT_EQ(found(doc, "data.items.*.token"), R"("s1")");
    EXPECT_EQ(found(doc, "matrix.*.5"), "<none>");
}

TEST(JsonPath, MutableEditsInPlace) {
    Document doc = parse(doc_text);
    const std::size_t n = forEachMutable(doc, path("data.items.*.token"),
                                         [](Value& v) { v.SetString("[redacted]"); });
    EXPECT_EQ(n, 2U);
    EXPECT_EQ(found(doc, "data.items"),
              R"([{"id":1,"token":"[redacted]"},{"id":2,"token":"[redacted]"},{"id":3}])");
    Value* v = findMutable(doc, path("a\\.b.c"));
    ASSERT_NE(v, nullptr);
    v->SetInt(9);
    EXPECT_EQ(found(doc, "a\\.b.c"), "9");
    EXPECT_EQ(findMutable(doc, path("nope")), nullptr);
}

TEST(JsonPath, CompileErrorsNameTheConfigPath) {
    Result<sdk::Path> p = compilePath("a..b", "operations[0].execution.redacted_paths[2]");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().code, ErrorCode::invalid_argument);
    EXPECT_EQ(p.error().message,
              "operations[0].execution.redacted_paths[2]: \"a..b\": empty member name (two dots "
              "in a row, or a trailing dot) at byte 2");
    EXPECT_EQ(compilePath("a.b*", "x").error().message,
              "x: \"a.b*\": \"*\" must be a whole segment (write \"\\*\" for a literal star) at "
              "byte 3");
    EXPECT_EQ(compilePath("$x", "").error().message,
              "\"$x\": expected \".\" after \"$\" at byte 1");
    EXPECT_EQ(compilePath("a\\", "x").error().message,
              "x: \"a\\\\\": a path may not end with \"\\\" at byte 1");
}

TEST(JsonPath, DeepDocumentShallowPath) {
    // Evaluation depth is the path's length, whatever the document's depth.
    Document doc = parse(testing::nestedArrays(60));
    EXPECT_EQ(found(doc, "0.0.0"), testing::nestedArrays(57));
    std::string long_path = "0";
    for (int i = 0; i < 59; ++i) {
        long_path += ".0";
    }
    EXPECT_EQ(found(doc, long_path), "0");
    EXPECT_EQ(found(doc, long_path + ".0"), "<none>");
}

TEST(JsonPath, WideWildcard) {
    std::string text = "[";
    for (int i = 0; i < 100'000; ++i) {
        text += (i == 0 ? "" : ",");
        text += "{\"v\":" + std::to_string(i) + "}";
    }
    text += "]";
    Document doc = parse(text);
    std::int64_t sum = 0;
    EXPECT_EQ(forEach(doc, path("*.v"), [&](const Value& v) { sum += v.GetInt64(); }), 100'000U);
    EXPECT_EQ(sum, 4'999'950'000);
}

}  // namespace
}  // namespace crank::json
