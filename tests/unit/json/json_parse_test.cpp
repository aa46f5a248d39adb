#include "json/json_parse.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "json/instance_path.h"
#include "json/json_hash.h"
#include "json/json_text.h"
#include "json_test_support.h"

namespace crank::json {
namespace {

using testing::nestedArrays;
using testing::parse;

std::string parseError(std::string_view text, const ParseLimits& limits = {}) {
    Document doc;
    Result<void> ok = parseJson(text, doc, "input", limits);
    return ok.ok() ? "" : ok.error().message;
}

TEST(JsonParse, AcceptsOneValueWithWhitespace) {
    Document doc;
    ASSERT_TRUE(parseJson("  {\"a\": [1, 2.5, \"x\", null, true]}\n", doc, "x").ok());
    EXPECT_EQ(toJsonText(doc), R"({"a":[1,2.5,"x",null,true]})");
}

TEST(JsonParse, ErrorsNameWhereAndByte) {
    EXPECT_EQ(parseError("{\"a\":1,}"),
              "input: malformed JSON at byte 7: missing a name for object member");
    EXPECT_EQ(parseError(""), "input: malformed JSON at byte 0: the document is empty");
    EXPECT_EQ(parseError("{} {}"),
              "input: malformed JSON at byte 3: the document root must not be followed by other "
              "values");
}

TEST(JsonParse, TruncatedInput) {
    EXPECT_NE(parseError("{\"a\": [1, 2"), "");
    EXPECT_NE(parseError("\"abc"), "");
    EXPECT_NE(parseError("tru"), "");
}

TEST(JsonParse, RejectsInvalidUtf8) {
    EXPECT_EQ(parseError("\"\xC3\x28\""),
              "input: malformed JSON at byte 1: invalid encoding in string");
    EXPECT_NE(parseError("\"\xFF\""), "");
    EXPECT_NE(parseError("\"\xED\xA0\x80\""), "");  // a UTF-16 surrogate encoded in UTF-8
}

TEST(JsonParse, RejectsEmbeddedNulAndTrailingGarbage) {
    using namespace std::string_view_literals;
    EXPECT_EQ(parseError("{}\0garbage"sv), "input: malformed JSON at byte 2: unexpected NUL byte");
    EXPECT_NE(parseError("\"a\0b\""sv), "");
    EXPECT_NE(parseError("NaN"), "");
    EXPECT_NE(parseError("[1,]"), "");
    EXPECT_NE(parseError("// c\n{}"), "");
}

TEST(JsonParse, DepthLimit) {
    Document doc;
    EXPECT_TRUE(parseJson(nestedArrays(64), doc, "input").ok());
    EXPECT_EQ(parseError(nestedArrays(65)), "input: nested deeper than 64 levels at byte 64");
    // Hostile: a million open brackets fail fast without recursion.
    EXPECT_EQ(parseError(std::string(1'000'000, '[')),
              "input: nested deeper than 64 levels at byte 64");
    EXPECT_EQ(parseError(std::string(100'000, '{'), ParseLimits{ParseLimits::default_max_bytes, 3}),
              "input: malformed JSON at byte 1: missing a name for object member");
    EXPECT_TRUE(doc.IsNull() || doc.IsArray());
}

TEST(JsonParse, SizeLimit) {
    EXPECT_EQ(parseError("[1,2,3]", ParseLimits{5, 64}), "input: larger than 5 bytes");
}

TEST(JsonParse, NoPrefixWithoutWhere) {
    Document doc;
    Result<void> ok = parseJson("[", doc, "");
    ASSERT_FALSE(ok.ok());
    EXPECT_EQ(ok.error().message.rfind("malformed JSON at byte 1", 0), 0U) << ok.error().message;
    EXPECT_EQ(ok.error().code, ErrorCode::invalid_argument);
}

TEST(JsonParse, HugeString) {
    std::string text = "\"" + std::string(5'000'000, 'a') + "\"";
    Document doc;
    ASSERT_TRUE(parseJson(text, doc, "x").ok());
    EXPECT_EQ(doc.GetStringLength(), 5'000'000U);
}

TEST(JsonText, DescribeValues) {
    EXPECT_EQ(describeValue(parse("null")), "null");
    EXPECT_EQ(describeValue(parse("true")), "true");
    EXPECT_EQ(describeValue(parse("12")), "12");
    EXPECT_EQ(describeValue(parse("1.5")), "1.5");
    EXPECT_EQ(describeValue(parse("{}")), "an object");
    EXPECT_EQ(describeValue(parse("[]")), "an array");
    EXPECT_EQ(describeValue(parse(R"("a\"b\n")")), R"("a\"b\u000a")");
    EXPECT_EQ(describeText(std::string(50, 'x')), "\"" + std::string(40, 'x') + "\"...");
    // Cut on a character boundary: 39 ASCII bytes then a 2-byte character across byte 40.
    EXPECT_EQ(describeText(std::string(39, 'x') + "\xC3\xA9" + "yyy"),
              "\"" + std::string(39, 'x') + "\"...");
}

TEST(JsonText, PlainText) {
    std::string out;
    appendPlainText(out, parse(R"("abc")"));
    appendPlainText(out, parse("null"));
    appendPlainText(out, parse("5"));
    appendPlainText(out, parse("[1, {\"a\": true}]"));
    EXPECT_EQ(out, R"(abc5[1,{"a":true}])");
}

TEST(InstancePath, Style) {
    EXPECT_EQ(memberPath("input", "name"), "input.name");
    EXPECT_EQ(memberPath("", "name"), "name");
    EXPECT_EQ(memberPath("input", "odd key"), "input[\"odd key\"]");
    EXPECT_EQ(memberPath("input", "1st"), "input[\"1st\"]");
    EXPECT_EQ(memberPath("input", "a\"b"), "input[\"a\\\"b\"]");
    EXPECT_EQ(memberPath("input", "x-y_z"), "input.x-y_z");
    EXPECT_EQ(memberPath("schema", "$defs"), "schema.$defs");
    EXPECT_EQ(indexPath("input.items", 3), "input.items[3]");
}

TEST(JsonHash, SameTokensSameHash) {
    EXPECT_EQ(hashValue(parse(R"({"a": [1, "x"]})")), hashValue(parse(R"({ "a" :[ 1,"\u0078"]})")));
    EXPECT_NE(hashValue(parse(R"({"a":1,"b":2})")), hashValue(parse(R"({"b":2,"a":1})")));
    EXPECT_NE(hashValue(parse(R"(["ab"])")), hashValue(parse(R"(["a","b"])")));
    EXPECT_NE(hashValue(parse(R"({"a":"b"})")), hashValue(parse(R"(["a","b"])")));
    EXPECT_NE(hashValue(parse("1")), hashValue(parse("1.0")));
    EXPECT_NE(hashValue(parse("[[]]")), hashValue(parse("[[],[]]")));
    EXPECT_EQ(hashValue(parse("18446744073709551615")), hashValue(parse("18446744073709551615")));
    EXPECT_NE(hashValue(parse("\"\"")), hashValue(parse("null")));
}

TEST(JsonHash, StreamingMatchesValue) {
    JsonHasher hasher;
    hasher.startObject();
    hasher.key("a");
    hasher.startArray();
    hasher.integer(1);
    hasher.unsignedInteger(2);
    hasher.string("x");
    hasher.null();
    hasher.boolean(true);
    hasher.floating(2.5);
    hasher.endArray();
    hasher.endObject();
    EXPECT_EQ(hasher.digest(), hashValue(parse(R"({"a":[1,2,"x",null,true,2.5]})")));
}

}  // namespace
}  // namespace crank::json

namespace crank::json {
namespace {

TEST(JsonUtf8, Validation) {
    EXPECT_TRUE(isValidUtf8(""));
    EXPECT_TRUE(isValidUtf8("plain ascii text that is longer than eight bytes"));
    EXPECT_TRUE(isValidUtf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF"));
    EXPECT_FALSE(isValidUtf8("\xC3"));              // truncated
    EXPECT_FALSE(isValidUtf8("abcdefgh\xC3\x28"));  // bad continuation
    EXPECT_FALSE(isValidUtf8("\xC0\xAF"));          // overlong
    EXPECT_FALSE(isValidUtf8("\xE0\x80\xAF"));      // overlong
    EXPECT_FALSE(isValidUtf8("\xED\xA0\x80"));      // surrogate
    EXPECT_FALSE(isValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
    EXPECT_FALSE(isValidUtf8("\xFF"));
    EXPECT_FALSE(isValidUtf8("\x80"));
    EXPECT_FALSE(isValidUtf8("\xF0\x9F\x98"));
}

}  // namespace
}  // namespace crank::json
