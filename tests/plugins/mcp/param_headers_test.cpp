// The client's Mcp-Param-* headers (plugins/mcp/param_headers.h): which tools' annotations are
// refused (the conformance suite's http-invalid-tool-headers cases and the nesting rule), and how
// argument values are written (its http-custom-headers cases).
#include "param_headers.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace crank::mcpc {
namespace {

rapidjson::Document parsed(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.c_str(), json.size());
    EXPECT_FALSE(doc.HasParseError()) << json;
    return doc;
}

/// The refusal of a schema, or "" when it is accepted.
std::string refusal(const std::string& schema) {
    std::string why;
    const rapidjson::Document doc = parsed(schema);
    const auto params = readMirroredParams(doc, why);
    EXPECT_EQ(params.has_value(), why.empty()) << why;
    return why;
}

std::string property(const std::string& body) {
    return R"({"type":"object","properties":{"p":)" + body + "}}";
}

TEST(ParamHeaders, ValidAnnotationsAreReadInOrderWithTheirPaths) {
    std::string why;
    const rapidjson::Document doc = parsed(
        R"({"type":"object","properties":{
              "region":{"type":"string","x-mcp-header":"Region"},
              "query":{"type":"string"},
              "opts":{"type":"object","properties":{"debug":{"type":["boolean","null"],
                                                             "x-mcp-header":"Debug"}}},
              "n":{"type":"integer","x-mcp-header":"Priority"}}})");
    const auto params = readMirroredParams(doc, why);
    ASSERT_TRUE(params.has_value()) << why;
    ASSERT_EQ(params->size(), 3U);
    EXPECT_EQ((*params)[0].header, "Mcp-Param-Region");
    EXPECT_EQ((*params)[0].path, std::vector<std::string>{"region"});
    EXPECT_EQ((*params)[1].header, "Mcp-Param-Debug");
    EXPECT_EQ((*params)[1].path, (std::vector<std::string>{"opts", "debug"}));
    EXPECT_EQ((*params)[2].header, "Mcp-Param-Priority");
}

TEST(ParamHeaders, TheSuitesInvalidToolsAreRefusedNamingWhy) {
    EXPECT_NE(refusal(property(R"({"type":"string","x-mcp-header":""})")).find("non-empty"),
              std::string::npos);
    for (const char* type : {"object", "array", "null", "number"}) {
        const std::string why =
            refusal(property(std::string(R"({"type":")") + type + R"(","x-mcp-header":"X"})"));
        EXPECT_NE(why.find("not string, integer or boolean"), std::string::npos) << type;
    }
    EXPECT_NE(refusal(property(R"({"x-mcp-header":"X"})")).find("type"), std::string::npos);
    for (const char* name : {"My Region", "Region:Primary", "R\u00e9gion", "Region\\t1"}) {
        const std::string why =
            refusal(property(std::string(R"({"type":"string","x-mcp-header":")") + name + R"("})"));
        EXPECT_NE(why.find("HTTP token"), std::string::npos) << name << ": " << why;
    }
    const std::string twice = refusal(
        R"({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"MyField"},
                                          "b":{"type":"string","x-mcp-header":"myfield"}}})");
    EXPECT_NE(twice.find("declared twice"), std::string::npos) << twice;
    EXPECT_NE(twice.find("/properties/b"), std::string::npos) << twice;
}

TEST(ParamHeaders, AHostileSchemaIsRefusedWithinBounds) {
    std::string many = R"({"type":"object","properties":{)";
    for (int i = 0; i < 65; ++i) {
        many += (i == 0 ? "" : ",") + std::string(R"("p)") + std::to_string(i) +
                R"(":{"type":"string","x-mcp-header":"H)" + std::to_string(i) + R"("})";
    }
    EXPECT_NE(refusal(many + "}}").find("more than 64"), std::string::npos);
    EXPECT_NE(
        refusal(property(R"({"type":"string","x-mcp-header":")" + std::string(65, 'h') + R"("})"))
            .find("longer than 64"),
        std::string::npos);
    const std::string longName(300, 'n');
    const std::string why =
        refusal(R"({"type":"object","properties":{")" + longName +
                R"(":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}}})");
    EXPECT_NE(why.find("longer than 256"), std::string::npos) << why;
    EXPECT_LT(why.size(), 400U) << "the message quotes at most a bounded location";
}

TEST(ParamHeaders, AnAnnotationOutsidePropertiesIsRefused) {
    for (
        const char* schema :
        {R"({"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"X"}}}})",
         R"({"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"X"}}}]})",
         R"({"type":"object","$defs":{"a":{"type":"string","x-mcp-header":"X"}}})",
         R"({"type":"object","additionalProperties":{"type":"string","x-mcp-header":"X"}})",
         R"({"type":"string","x-mcp-header":"Root"})"}) {
        const std::string why = refusal(schema);
        EXPECT_NE(why.find("through `properties` only"), std::string::npos) << schema << why;
    }
    // A property named like a keyword is a property.
    EXPECT_EQ(
        refusal(
            R"({"type":"object","properties":{"items":{"type":"string","x-mcp-header":"Items"}}})"),
        "");
}

TEST(ParamHeaders, ValuesAreWrittenPlainOrBase64AsTheSuiteChecks) {
    const auto value = [](const std::string& json) {
        const rapidjson::Document doc = parsed(json);
        return paramHeaderValue(doc);
    };
    EXPECT_EQ(value(R"("us-west1")"), "us-west1");
    EXPECT_EQ(value(R"("two words")"), "two words");  // internal space: plain
    EXPECT_EQ(value(R"("")"), "");                    // an empty header, not none
    EXPECT_EQ(value("42"), "42");
    EXPECT_EQ(value("-7"), "-7");
    EXPECT_EQ(value("true"), "true");
    EXPECT_EQ(value("false"), "false");
    EXPECT_EQ(value("null"), std::nullopt);
    EXPECT_EQ(value("1.5"), std::nullopt);
    EXPECT_EQ(value("9007199254740992"), std::nullopt);  // beyond 2^53 - 1
    EXPECT_EQ(value(R"({"a":1})"), std::nullopt);
    EXPECT_EQ(value("\"Gr\u00fc\u00dfe\""), "=?base64?R3LDvMOfZQ==?=");
    EXPECT_EQ(value(R"(" lead")"), "=?base64?IGxlYWQ=?=");
    EXPECT_EQ(value(R"("trail ")"), "=?base64?dHJhaWwg?=");
    EXPECT_EQ(value(R"("\tTab")"), "=?base64?CVRhYg==?=");
    EXPECT_EQ(value(R"("a\r\nb")"), "=?base64?YQ0KYg==?=");
    EXPECT_EQ(value(R"("x\u0001y")"), "=?base64?eAF5?=");
    // A literal that looks encoded is encoded, so that the server reads it as the literal.
    EXPECT_EQ(value(R"("=?base64?SGk=?=")"), "=?base64?PT9iYXNlNjQ/U0drPT89?=");
    // Without both the prefix and the suffix it is a literal already.
    EXPECT_EQ(value(R"("=?base64?SGk=")"), "=?base64?SGk=");
}

TEST(ParamHeaders, ArgumentsBecomeHeadersNullAndAbsentOnesNone) {
    std::string why;
    const rapidjson::Document schema = parsed(
        R"({"type":"object","properties":{
              "region":{"type":"string","x-mcp-header":"Region"},
              "verbose":{"type":"boolean","x-mcp-header":"Verbose"},
              "missing":{"type":"string","x-mcp-header":"Missing"},
              "opts":{"type":"object","properties":{"level":{"type":"integer","x-mcp-header":"Level"}}}}})");
    const auto params = readMirroredParams(schema, why);
    ASSERT_TRUE(params.has_value()) << why;
    const rapidjson::Document args =
        parsed(R"({"region":"eu","verbose":null,"opts":{"level":3},"query":"q"})");
    sdk::http::HeaderList headers;
    appendParamHeaders(*params, args, headers);
    const sdk::http::HeaderList expected = {{"Mcp-Param-Region", "eu"}, {"Mcp-Param-Level", "3"}};
    EXPECT_EQ(headers, expected);
}

}  // namespace
}  // namespace crank::mcpc
