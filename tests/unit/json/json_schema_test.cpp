#include "json/json_schema.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "json_test_support.h"

namespace crank::json {
namespace {

CompiledSchema schema(std::string_view text, const SchemaLimits& limits = {}) {
    Result<CompiledSchema> s = compileSchema(text, "input_schema", limits);
    if (!s.ok()) {
        ADD_FAILURE() << s.error().message;
        return *compileSchema("true", "x");
    }
    return *s;
}

std::string compileError(std::string_view text, const SchemaLimits& limits = {}) {
    Result<CompiledSchema> s = compileSchema(text, "input_schema", limits);
    return s.ok() ? "<compiled>" : s.error().message;
}

/// Every failure, one per line ("" when valid).
std::string failures(const CompiledSchema& s, std::string_view instance) {
    ValidationResult r = s.validate(instance);
    std::string out;
    for (const ValidationFailure& f : r.failures) {
        out += (out.empty() ? "" : "\n") + f.toString();
    }
    return out;
}

TEST(JsonSchema, TypeKeyword) {
    CompiledSchema s = schema(R"({"type": "integer"})");
    EXPECT_EQ(failures(s, "5"), "");
    EXPECT_EQ(failures(s, "5.0"), "");
    EXPECT_EQ(failures(s, "5.5"), "input: must be an integer, got 5.5");
    EXPECT_EQ(failures(s, "\"5\""), "input: must be an integer, got \"5\"");
    CompiledSchema multi = schema(R"({"type": ["string", "null"]})");
    EXPECT_EQ(failures(multi, "null"), "");
    EXPECT_EQ(failures(multi, "\"x\""), "");
    EXPECT_EQ(failures(multi, "{}"), "input: must be a string or null, got an object");
    CompiledSchema number = schema(R"({"type": "number"})");
    EXPECT_EQ(failures(number, "1"), "");
    EXPECT_EQ(failures(number, "true"), "input: must be a number, got true");
    EXPECT_EQ(failures(schema(R"({"type": ["object","array","boolean"]})"), "1"),
              "input: must be an object, an array or a boolean, got 1");
}

TEST(JsonSchema, ExampleMessage) {
    CompiledSchema s = schema(R"({"type": "object", "properties": {
        "limit": {"type": "integer", "maximum": 100}}})");
    EXPECT_EQ(failures(s, R"({"limit": 500})"), "input.limit: must be an integer ≤ 100, got 500");
    EXPECT_EQ(s.validate(std::string_view(R"({"limit": 500})")).firstMessage(),
              "input.limit: must be an integer ≤ 100, got 500");
}

TEST(JsonSchema, ObjectKeywords) {
    CompiledSchema s = schema(R"({
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0},
                       "odd key": true},
        "required": ["name", "odd key"],
        "additionalProperties": false,
        "minProperties": 1, "maxProperties": 3})");
    EXPECT_EQ(failures(s, R"({"name": "x", "odd key": 1})"), "");
    EXPECT_EQ(failures(s, R"({"age": -1, "nmae": 5})"),
              "input.name: is required\n"
              "input[\"odd key\"]: is required\n"
              "input.age: must be an integer ≥ 0, got -1\n"
              "input.nmae: is not allowed (unknown property; did you mean \"name\"?)");
    EXPECT_EQ(failures(s, R"({})"),
              "input: must have at least 1 property, got 0\ninput.name: is required\n"
              "input[\"odd key\"]: is required");
    EXPECT_EQ(failures(s, R"({"name":"a","odd key":1,"age":1,"zzz":2})"),
              "input: must have at most 3 properties, got 4\ninput.zzz: is not allowed (unknown "
              "property)");
}

TEST(JsonSchema, AdditionalAndPatternProperties) {
    CompiledSchema s = schema(R"({
        "properties": {"id": {"type": "integer"}},
        "patternProperties": {"^x_": {"type": "string"}},
        "additionalProperties": {"type": "boolean"}})");
    EXPECT_EQ(failures(s, R"({"id": 1, "x_a": "s", "other": true})"), "");
    EXPECT_EQ(failures(s, R"({"id": "1", "x_a": 2, "other": 3})"),
              "input.id: must be an integer, got \"1\"\n"
              "input.x_a: must be a string, got 2\n"
              "input.other: must be a boolean, got 3");
    EXPECT_EQ(failures(schema(R"({"additionalProperties": false})"), R"({"a": 1})"),
              "input.a: is not allowed (no additional properties)");
}

TEST(JsonSchema, ArrayKeywords) {
    CompiledSchema s = schema(R"({
        "type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
        "items": {"type": "boolean"}, "minItems": 2, "maxItems": 4, "uniqueItems": true})");
    EXPECT_EQ(failures(s, R"(["a", 1, true, false])"), "");
    EXPECT_EQ(failures(s, R"(["a"])"), "input: must have at least 2 items, got 1");
    EXPECT_EQ(failures(s, R"([1, "a", 3, true, false])"),
              "input: must have at most 4 items, got 5\n"
              "input[0]: must be a string, got 1\n"
              "input[1]: must be an integer, got \"a\"\n"
              "input[2]: must be a boolean, got 3");
    EXPECT_EQ(failures(s, R"(["a", 1, true, true])"),
              "input: must have unique items, but items 2 and 3 are equal");
    CompiledSchema closed = schema(R"({"prefixItems": [true], "items": false})");
    EXPECT_EQ(failures(closed, "[1, 2]"), "input[1]: is not allowed");
    EXPECT_EQ(failures(schema(R"({"minItems": 1})"), "[]"),
              "input: must have at least 1 item, got 0");
}

TEST(JsonSchema, UniqueItemsComparesByValue) {
    CompiledSchema s = schema(R"({"uniqueItems": true})");
    EXPECT_EQ(failures(s, R"([1, 1.0])"),
              "input: must have unique items, but items 0 and 1 are equal");
    EXPECT_EQ(failures(s, R"([{"a":1,"b":2}, {"b":2,"a":1}])"),
              "input: must have unique items, but items 0 and 1 are equal");
    EXPECT_EQ(failures(s, R"([[1,2],[2,1],"1",1,true,null,{}])"), "");
    // Large arrays stay fast (hashing, not pairwise comparison).
    std::string big = "[";
    for (int i = 0; i < 50'000; ++i) {
        big += (i == 0 ? "" : ",") + std::to_string(i);
    }
    EXPECT_EQ(failures(s, big + "]"), "");
    EXPECT_EQ(failures(s, big + ",49999]"),
              "input: must have unique items, but items 49999 and 50000 are equal");
}

TEST(JsonSchema, StringKeywords) {
    CompiledSchema s = schema(R"({"type": "string", "minLength": 2, "maxLength": 3,
                                 "pattern": "^[a-zé]+$"})");
    EXPECT_EQ(failures(s, R"("ab")"), "");
    EXPECT_EQ(failures(s, R"("éé")"), "");  // two code points, four bytes
    EXPECT_EQ(failures(s, R"("a")"), "input: must be at least 2 characters long, got 1");
    EXPECT_EQ(failures(s, R"("abcd")"), "input: must be at most 3 characters long, got 4");
    EXPECT_EQ(failures(s, R"("AB")"), "input: must match the pattern \"^[a-zé]+$\", got \"AB\"");
    EXPECT_EQ(failures(schema(R"({"maxLength": 1})"), R"("😀")"), "");
    EXPECT_EQ(failures(schema(R"({"minLength": 1})"), R"("")"),
              "input: must be at least 1 character long, got 0");
    // pattern is a search, not a full match
    EXPECT_EQ(failures(schema(R"({"pattern": "b"})"), R"("abc")"), "");
}

TEST(JsonSchema, NumberKeywords) {
    CompiledSchema s = schema(R"({"exclusiveMinimum": 0, "exclusiveMaximum": 10,
                                 "multipleOf": 2.5})");
    EXPECT_EQ(failures(s, "5"), "");
    EXPECT_EQ(failures(s, "7.5"), "");
    EXPECT_EQ(failures(s, "0"), "input: must be > 0, got 0");
    EXPECT_EQ(failures(s, "10"), "input: must be < 10, got 10");
    EXPECT_EQ(failures(s, "3"), "input: must be a multiple of 2.5, got 3");
    EXPECT_EQ(failures(schema(R"({"multipleOf": 0.1})"), "0.3"), "");
    EXPECT_EQ(failures(schema(R"({"multipleOf": 3})"), "9007199254740994"),
              "input: must be a multiple of 3, got 9007199254740994");
    EXPECT_EQ(failures(schema(R"({"multipleOf": 3})"), "9007199254740993"), "");
    EXPECT_EQ(failures(schema(R"({"minimum": 1.5})"), "1"), "input: must be ≥ 1.5, got 1");
    EXPECT_EQ(failures(schema(R"({"minimum": 1})"), "\"0\""), "");  // applies to numbers only
}

TEST(JsonSchema, EnumAndConst) {
    CompiledSchema e = schema(R"({"enum": ["a", "b", 1, null]})");
    EXPECT_EQ(failures(e, R"("a")"), "");
    EXPECT_EQ(failures(e, "1.0"), "");
    EXPECT_EQ(failures(e, "null"), "");
    EXPECT_EQ(failures(e, R"("c")"), "input: must be one of \"a\", \"b\", 1, null, got \"c\"");
    CompiledSchema c = schema(R"({"const": {"k": [1]}})");
    EXPECT_EQ(failures(c, R"({"k": [1]})"), "");
    EXPECT_EQ(failures(c, R"({"k": [2]})"), "input: must be {\"k\":[1]}, got an object");
    EXPECT_EQ(failures(schema(R"({"const": "x"})"), "1"), "input: must be \"x\", got 1");
}

TEST(JsonSchema, Combinators) {
    CompiledSchema any = schema(R"({"anyOf": [{"type": "string"}, {"type": "integer"}]})");
    EXPECT_EQ(failures(any, "1"), "");
    EXPECT_EQ(failures(any, "true"),
              "input: must match at least one of the 2 schemas in anyOf, got true");
    CompiledSchema one = schema(R"({"oneOf": [{"type": "integer"}, {"type": "number"}]})");
    EXPECT_EQ(failures(one, "1.5"), "");
    EXPECT_EQ(failures(one, "1"),
              "input: must match exactly one of the 2 schemas in oneOf, matched more than one "
              "(oneOf[0] and oneOf[1])");
    EXPECT_EQ(failures(one, "\"x\""),
              "input: must match exactly one of the 2 schemas in oneOf, matched none, got \"x\"");
    CompiledSchema all = schema(R"({"allOf": [{"minimum": 1}, {"maximum": 5}]})");
    EXPECT_EQ(failures(all, "3"), "");
    EXPECT_EQ(failures(all, "9"), "input: must be ≤ 5, got 9");
    CompiledSchema no = schema(R"({"not": {"type": "null"}})");
    EXPECT_EQ(failures(no, "1"), "");
    EXPECT_EQ(failures(no, "null"), "input: must not match the schema in \"not\"");
    EXPECT_EQ(failures(schema("false"), "1"), "input: is not allowed");
    EXPECT_EQ(failures(schema("true"), "1"), "");
    EXPECT_EQ(failures(schema("{}"), "[1]"), "");
}

TEST(JsonSchema, LocalRefs) {
    CompiledSchema s = schema(R"({
        "$defs": {"node": {"type": "object", "properties": {
            "value": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}},
            "a/b": {"type": "string"}},
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/node"}, "s": {"$ref": "#/$defs/a~1b"}}})");
    EXPECT_EQ(failures(s, R"({"tree": {"value": 1, "children": [{"value": 2, "children": []}]},
                              "s": "x"})"),
              "");
    EXPECT_EQ(failures(s, R"({"tree": {"children": [{"value": "2"}]}, "s": 1})"),
              "input.tree.children[0].value: must be an integer, got \"2\"\n"
              "input.s: must be a string, got 1");
    CompiledSchema root = schema(R"({"type": ["array", "integer"], "items": {"$ref": "#"}})");
    EXPECT_EQ(failures(root, "[1, [2, [3, \"x\"]]]"),
              "input[1][1][1]: must be an array or an "
              "integer, got \"x\"");
}

TEST(JsonSchema, RefErrors) {
    EXPECT_EQ(compileError(R"({"$ref": "#/$defs/missing"})"),
              "input_schema.$ref: \"#/$defs/missing\": no such definition in $defs");
    EXPECT_EQ(compileError(R"({"$ref": "http://example.com/s.json"})"),
              "input_schema.$ref: \"http://example.com/s.json\": only local references "
              "\"#\" and \"#/$defs/NAME\" are supported");
    EXPECT_EQ(compileError(R"({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                              "$ref": "#/$defs/a"})"),
              "input_schema.$defs.a: $ref cycle: the schema refers to itself without descending "
              "into the instance");
    EXPECT_EQ(compileError(R"({"allOf": [{"$ref": "#"}]})"),
              "input_schema: $ref cycle: the schema refers to itself without descending into "
              "the instance");
}

TEST(JsonSchema, UnknownKeywordsAreErrors) {
    EXPECT_EQ(compileError(R"({"type": "object", "propertes": {}})"),
              "input_schema.propertes: unknown keyword; did you mean \"properties\"?");
    EXPECT_EQ(compileError(R"({"properties": {"a": {"maxLenght": 3, "zzzzzzzzz": 1}}})"),
              "input_schema.properties.a.maxLenght: unknown keyword; did you mean \"maxLength\"?; "
              "input_schema.properties.a.zzzzzzzzz: unknown keyword");
    EXPECT_EQ(compileError(R"({"x-ui": {"anything": 1}, "title": "t", "description": "d",
                              "default": 3, "examples": [1], "$comment": "c",
                              "format": "email", "$schema": "https://json-schema.org/draft/2020-12/schema"})"),
              "<compiled>");
    EXPECT_EQ(compileError(R"({"unevaluatedProperties": false})"),
              "input_schema.unevaluatedProperties: keyword not supported by Crank's validator");
}

TEST(JsonSchema, KeywordValueErrors) {
    EXPECT_EQ(compileError(R"({"type": "strin"})"),
              "input_schema.type: must be one of \"null\", \"boolean\", \"object\", \"array\", "
              "\"number\", \"string\", \"integer\", got \"strin\"; did you mean \"string\"?");
    EXPECT_EQ(compileError(R"({"minLength": -1, "maximum": "5", "required": [1],
                              "multipleOf": 0, "anyOf": []})"),
              "input_schema.minLength: must be a non-negative integer, got -1; "
              "input_schema.maximum: must be a number, got \"5\"; "
              "input_schema.required[0]: must be a string, got 1; "
              "input_schema.multipleOf: must be a number > 0, got 0; "
              "input_schema.anyOf: must be a non-empty array of schemas, got an array");
    EXPECT_EQ(compileError(R"({"properties": {"a": 5}})"),
              "input_schema.properties.a: a schema must be an object or a boolean, got 5");
    EXPECT_EQ(compileError("[1"),
              "input_schema: malformed JSON at byte 2: missing a comma or ']' "
              "after an array element");
}

TEST(JsonSchema, BadRegexIsACompileError) {
    const std::string error = compileError(R"({"pattern": "(abc"})");
    EXPECT_EQ(error.rfind("input_schema.pattern: \"(abc\" is not a valid regular expression: ", 0),
              0U)
        << error;
    const std::string pp = compileError(R"({"patternProperties": {"[": true}})");
    EXPECT_EQ(pp.rfind("input_schema.patternProperties[\"[\"]: \"[\" is not a valid regular "
                       "expression",
                       0),
              0U)
        << pp;
    EXPECT_EQ(compileError(R"({"pattern": ")" + std::string(1001, 'a') + "\"}"),
              "input_schema.pattern: regular expression longer than 1000 bytes");
    EXPECT_NE(compileError(R"({"pattern": "(a{1000}){1000}"})"), "<compiled>");
}

TEST(JsonSchema, CatastrophicPatternStaysFast) {
    CompiledSchema s = schema(R"({"pattern": "^(a+)+$"})");
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(failures(s, "\"" + std::string(40, 'a') + "!\""),
              "input: must match the pattern \"^(a+)+$\", got "
              "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"...");
    EXPECT_EQ(failures(s, "\"" + std::string(5000, 'a') + "\""), "");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(JsonSchema, LongSubjectIsNotMatched) {
    CompiledSchema s = schema(R"({"pattern": ".*"})");
    EXPECT_EQ(failures(s, "\"" + std::string(70'000, 'a') + "\""),
              "input: is longer than 65536 bytes, too long to match against the pattern \".*\"");
    EXPECT_EQ(failures(s, "\"" + std::string(60'000, 'a') + "\""), "");  // no stack overflow
}

TEST(JsonSchema, ExponentialRefFanOutIsBounded) {
    // d0 = anyOf[d1, d1] (after a failing check), ... : 2^30 visits without a budget.
    std::string defs;
    for (int i = 0; i < 30; ++i) {
        defs += "\"d" + std::to_string(i) + "\": {\"anyOf\": [{\"$ref\": \"#/$defs/d" +
                std::to_string(i + 1) + "\"}, {\"$ref\": \"#/$defs/d" + std::to_string(i + 1) +
                "\"}]},";
    }
    defs += "\"d30\": {\"type\": \"string\"}";
    CompiledSchema s = schema("{\"$defs\": {" + defs + "}, \"$ref\": \"#/$defs/d0\"}");
    const auto start = std::chrono::steady_clock::now();
    ValidationResult r = s.validate(std::string_view("1"));
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.failures[0].toString(),
              "input: validation exceeded its budget of 200000 schema evaluations");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    EXPECT_TRUE(s.validate(std::string_view("\"x\"")).ok());
}

TEST(JsonSchema, DeepSchemaAndInstance) {
    std::string deep = "true";
    for (int i = 0; i < 70; ++i) {
        deep = "{\"items\": " + deep + "}";
    }
    EXPECT_NE(compileError(deep).find("schema nested deeper than 64 levels"), std::string::npos)
        << compileError(deep);
    CompiledSchema s = schema(R"({"type": "array", "items": {"$ref": "#"}})");
    std::string arrays = std::string(65, '[') + std::string(65, ']');
    EXPECT_EQ(failures(s, arrays), "input: nested deeper than 64 levels at byte 64");
    EXPECT_EQ(failures(s, std::string(30, '[') + std::string(30, ']')), "");
}

TEST(JsonSchema, FailuresAreCapped) {
    CompiledSchema s = schema(R"({"items": {"type": "string"}})");
    std::string many = "[";
    for (int i = 0; i < 100; ++i) {
        many += (i == 0 ? "" : ",") + std::to_string(i);
    }
    ValidationResult r = s.validate(std::string_view(many + "]"));
    EXPECT_EQ(r.failures.size(), 20U);
    EXPECT_TRUE(r.truncated);
    EXPECT_EQ(r.failures[19].toString(), "input[19]: must be a string, got 19");
}

TEST(JsonSchema, MalformedInstance) {
    CompiledSchema s = schema("{}");
    EXPECT_EQ(failures(s, "{\"a\":"), "input: malformed JSON at byte 5: invalid value");
    EXPECT_EQ(failures(s, "\"\xC3\""),
              "input: malformed JSON at byte 1: invalid encoding in string");
}

TEST(JsonSchema, RootNameAndParsedInstance) {
    CompiledSchema s = schema(R"({"required": ["a"]})");
    Document doc = testing::parse("{}");
    EXPECT_EQ(s.validate(doc, "arguments").firstMessage(), "arguments.a: is required");
}

TEST(JsonSchema, ConcurrentValidation) {
    CompiledSchema s = schema(R"({"type": "object", "properties": {
        "q": {"type": "string", "pattern": "^[a-z]+$"}, "n": {"type": "integer", "maximum": 9}},
        "required": ["q"]})");
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 2000; ++i) {
                if (!s.validate(std::string_view(R"({"q": "abc", "n": 3})")).ok() ||
                    s.validate(std::string_view(R"({"q": "ABC", "n": 30})")).failures.size() != 2) {
                    ++wrong;
                }
            }
        });
    }
    for (std::thread& t : threads) {
        t.join();
    }
    EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace crank::json
