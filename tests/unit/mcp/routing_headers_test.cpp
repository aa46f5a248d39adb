// The 2026-07-28 routing headers against the body (SEP-2243): Mcp-Method, Mcp-Name and the
// Mcp-Param-* headers of x-mcp-header properties, with their base64 form.

#include "mcp/modern/routing_headers.h"

#include <string>
#include <utility>
#include <vector>

#include <Poco/Net/NameValueCollection.h>
#include <gtest/gtest.h>

#include "mcp/tool_registry.h"
#include "mcp/wire/json_rpc.h"

namespace crank::mcp::test {
namespace {

Poco::Net::NameValueCollection headers(
    const std::vector<std::pair<std::string, std::string>>& list) {
    Poco::Net::NameValueCollection out;
    for (const auto& [name, value] : list) {
        out.add(name, value);
    }
    return out;
}

/// checkParamHeaders for the headers `schema` declares.
std::optional<EraRefusal> checkSchemaHeaders(const Poco::Net::NameValueCollection& sent,
                                             std::string_view schema, std::string_view arguments) {
    return checkParamHeaders(sent, compileParamHeaders(schema), arguments);
}

JsonRpcMessage message(const std::string& body) {
    const ParsedBody parsed = parseJsonRpcBody(body);
    EXPECT_FALSE(parsed.fatal) << body;
    return std::get<JsonRpcMessage>(parsed.entries.front());
}

constexpr const char* kToolsList = R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})";
constexpr const char* kCallEcho =
    R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}})";

TEST(RoutingHeadersTest, DecodesLiteralsAndBase64) {
    EXPECT_EQ(decodeHeaderValue("us-west1"), "us-west1");
    EXPECT_EQ(decodeHeaderValue("  padded\t"), "padded");
    EXPECT_EQ(decodeHeaderValue("inner space"), "inner space");
    EXPECT_EQ(decodeHeaderValue(""), "");
    EXPECT_EQ(decodeHeaderValue("=?base64?SGVsbG8=?="), "Hello");
    // The prefix is lower case, as a proxy following the specification reads it: in another
    // case the value is literal text.
    EXPECT_EQ(decodeHeaderValue("=?BASE64?SGVsbG8=?="), "=?BASE64?SGVsbG8=?=");
    EXPECT_EQ(decodeHeaderValue("=?Base64?SGVsbG8=?="), "=?Base64?SGVsbG8=?=");
    EXPECT_EQ(decodeHeaderValue("=?base64?5pel5pys?="), "\xe6\x97\xa5\xe6\x9c\xac");  // 日本
    EXPECT_EQ(decodeHeaderValue("=?base64?"
                                "?="),
              "");
    // Without both the prefix and the suffix the value is literal.
    EXPECT_EQ(decodeHeaderValue("=?base64?SGVsbG8="), "=?base64?SGVsbG8=");
    EXPECT_EQ(decodeHeaderValue("SGVsbG8=?="), "SGVsbG8=?=");
}

TEST(RoutingHeadersTest, RefusesMalformedValues) {
    for (const char* bad :
         {"=?base64?SGVsbG8?=", "=?base64?!!!!?=", "=?base64?SGVs=G8=?=", "=?base64?S===?=",
          "=?base64?SGVsbG8=\n?=", "caf\xc3\xa9", "a\x01z", "del\x7f"}) {
        EXPECT_FALSE(decodeHeaderValue(bad)) << bad;
    }
}

TEST(RoutingHeadersTest, McpMethodIsRequiredAndCaseSensitive) {
    const JsonRpcMessage list = message(kToolsList);
    EXPECT_FALSE(checkStandardHeaders(headers({{"Mcp-Method", "tools/list"}}), list));
    EXPECT_FALSE(checkStandardHeaders(headers({{"mcp-method", " tools/list "}}), list));
    EXPECT_FALSE(checkStandardHeaders(headers({{"MCP-METHOD", "tools/list"}}), list));
    for (const auto& sent : std::vector<std::vector<std::pair<std::string, std::string>>>{
             {},
             {{"Mcp-Method", "TOOLS/LIST"}},
             {{"Mcp-Method", "prompts/list"}},
             {{"Mcp-Method", "tools/list"}, {"mcp-method", "tools/list"}},
             {{"Mcp-Method", "=?base64?!!?="}},
             // Method names are plain ASCII: a proxy routes on the header as it is, so its
             // base64 form (of the right name) is refused rather than decoded.
             {{"Mcp-Method", "=?base64?dG9vbHMvbGlzdA==?="}}}) {
        const auto refusal = checkStandardHeaders(headers(sent), list);
        ASSERT_TRUE(refusal);
        EXPECT_EQ(refusal->status, 400);
        EXPECT_EQ(refusal->code, kHeaderMismatch);
        EXPECT_NE(refusal->message.find("Mcp-Method"), std::string::npos) << refusal->message;
    }
    // A notification needs none, but one it sends must agree.
    const JsonRpcMessage note =
        message(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{}})");
    EXPECT_FALSE(checkStandardHeaders(headers({}), note));
    EXPECT_TRUE(checkStandardHeaders(headers({{"Mcp-Method", "tools/list"}}), note));
}

TEST(RoutingHeadersTest, McpNameRepeatsTheTargetOfTheMethod) {
    const JsonRpcMessage call = message(kCallEcho);
    EXPECT_FALSE(
        checkStandardHeaders(headers({{"Mcp-Method", "tools/call"}, {"Mcp-Name", "echo"}}), call));
    EXPECT_FALSE(checkStandardHeaders(
        headers({{"Mcp-Method", "tools/call"}, {"mcp-name", "  echo  "}}), call));
    EXPECT_FALSE(checkStandardHeaders(
        headers({{"Mcp-Method", "tools/call"}, {"Mcp-Name", "=?base64?ZWNobw==?="}}), call));
    for (const auto& name : {std::string("wrong_tool_name"), std::string("ECHO")}) {
        const auto refusal =
            checkStandardHeaders(headers({{"Mcp-Method", "tools/call"}, {"Mcp-Name", name}}), call);
        ASSERT_TRUE(refusal) << name;
        EXPECT_EQ(refusal->code, kHeaderMismatch);
        EXPECT_NE(refusal->message.find("params.name"), std::string::npos) << refusal->message;
    }
    const auto missing = checkStandardHeaders(headers({{"Mcp-Method", "tools/call"}}), call);
    ASSERT_TRUE(missing);
    EXPECT_NE(missing->message.find("Mcp-Name header is required"), std::string::npos);

    const JsonRpcMessage read = message(
        R"({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a%20b.txt"}})");
    EXPECT_FALSE(checkStandardHeaders(
        headers({{"Mcp-Method", "resources/read"}, {"Mcp-Name", "file:///a%20b.txt"}}), read));
    const JsonRpcMessage get =
        message(R"({"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t-1"}})");
    EXPECT_TRUE(
        checkStandardHeaders(headers({{"Mcp-Method", "tasks/get"}, {"Mcp-Name", "t-2"}}), get));
    // tools/list has no name: an Mcp-Name beside it is not looked at.
    EXPECT_FALSE(checkStandardHeaders(
        headers({{"Mcp-Method", "tools/list"}, {"Mcp-Name", "anything"}}), message(kToolsList)));
}

constexpr const char* kSchema = R"({"type":"object","properties":{)"
                                R"("region":{"type":"string","x-mcp-header":"Region"},)"
                                R"("priority":{"type":"integer","x-mcp-header":"Priority"},)"
                                R"("verbose":{"type":"boolean","x-mcp-header":"Verbose"},)"
                                R"("query":{"type":"string"}}})";

TEST(RoutingHeadersTest, ParamHeadersCarryTheirArguments) {
    EXPECT_FALSE(checkSchemaHeaders(
        headers({{"Mcp-Param-Region", "us-west1"},
                 {"mcp-param-priority", "42"},
                 {"MCP-PARAM-VERBOSE", "false"}}),
        kSchema, R"({"region":"us-west1","priority":42,"verbose":false,"query":"q"})"));
    // Numbers compare as numbers; base64 text as its decoded bytes; null means no header.
    EXPECT_FALSE(checkSchemaHeaders(
        headers({{"Mcp-Param-Priority", "4.2e1"}, {"Mcp-Param-Region", "=?base64?IGxlYWQ=?="}}),
        kSchema, R"({"region":" lead","priority":42,"verbose":null})"));
    // No declared property, no header needed; unknown Mcp-Param-* headers are ignored.
    EXPECT_FALSE(checkSchemaHeaders(headers({{"Mcp-Param-Other", "x"}}), R"({"type":"object"})",
                                    R"({"a":1})"));
    EXPECT_FALSE(checkSchemaHeaders(headers({{"Mcp-Param-Other", "x"}}), kSchema, "{}"));
}

TEST(RoutingHeadersTest, ParamHeadersRefuseEveryDisagreement) {
    const struct {
        std::vector<std::pair<std::string, std::string>> sent;
        std::string arguments;
        const char* names;
    } cases[] = {
        {{}, R"({"region":"eu"})", "Mcp-Param-Region header is required"},
        {{{"Mcp-Param-Region", "us"}}, R"({"region":"eu"})", "differs"},
        {{{"Mcp-Param-Region", "EU"}}, R"({"region":"eu"})", "differs"},
        {{{"Mcp-Param-Region", "eu"}}, R"({})", "absent"},
        {{{"Mcp-Param-Verbose", "true"}}, R"({"verbose":null})", "null"},
        {{{"Mcp-Param-Priority", "4 2"}}, R"({"priority":42})", "differs"},
        {{{"Mcp-Param-Priority", "43"}}, R"({"priority":42})", "differs"},
        {{{"Mcp-Param-Verbose", "TRUE"}}, R"({"verbose":true})", "differs"},
        {{{"Mcp-Param-Region", "=?base64?SGVsbG8?="}}, R"({"region":"Hello"})", "malformed"},
        {{{"Mcp-Param-Region", "eu"}, {"Mcp-Param-Region", "eu"}},
         R"({"region":"eu"})",
         "sent 2 times"},
    };
    for (const auto& c : cases) {
        const auto refusal = checkSchemaHeaders(headers(c.sent), kSchema, c.arguments);
        ASSERT_TRUE(refusal) << c.arguments;
        EXPECT_EQ(refusal->status, 400);
        EXPECT_EQ(refusal->code, kHeaderMismatch);
        EXPECT_NE(refusal->message.find(c.names), std::string::npos) << refusal->message;
    }
}

TEST(RoutingHeadersTest, HostileSchemasAndArgumentsAreHarmless) {
    for (const char* schema :
         {"", "x-mcp-header", R"({"properties":[]})", R"({"properties":{"a":"x-mcp-header"}})",
          R"({"properties":{"a":{"x-mcp-header":7}}})",
          R"({"properties":{"a":{"x-mcp-header":""}}})"}) {
        EXPECT_FALSE(checkSchemaHeaders(headers({{"Mcp-Param-A", "1"}}), schema, R"({"a":1})"))
            << schema;
    }
    EXPECT_TRUE(checkSchemaHeaders(headers({}), kSchema, R"({"region":"eu"})"));
    EXPECT_FALSE(checkSchemaHeaders(headers({}), kSchema, "not json"));
    const auto nested = checkSchemaHeaders(headers({}), kSchema, R"({"region":{"nested":1}})");
    ASSERT_TRUE(nested);
    EXPECT_NE(nested->message.find("no Mcp-Param-Region header can carry"), std::string::npos)
        << nested->message;
    EXPECT_TRUE(checkSchemaHeaders(headers({{"Mcp-Param-Priority", "[1]"}}), kSchema,
                                   R"({"priority":[1]})"));
}

// An integer may be spelled 7.0 or 7e0, or lie beyond 64 bits, and still be one the schema
// validator accepts and the tool acts on: its header is checked all the same, by exact value.
TEST(RoutingHeadersTest, EverySpellingOfANumberHasItsHeaderChecked) {
    for (const char* seven : {"7", "7.0", "7e0", "70E-1", "0.7e+1"}) {
        const std::string arguments = std::string(R"({"priority":)") + seven + "}";
        EXPECT_FALSE(checkSchemaHeaders(headers({{"Mcp-Param-Priority", "7"}}), kSchema, arguments))
            << seven;
        EXPECT_FALSE(
            checkSchemaHeaders(headers({{"Mcp-Param-Priority", "7.00"}}), kSchema, arguments))
            << seven;
        const auto absent = checkSchemaHeaders(headers({}), kSchema, arguments);
        ASSERT_TRUE(absent) << seven;
        EXPECT_NE(absent->message.find("Mcp-Param-Priority header is required"), std::string::npos);
        const auto other =
            checkSchemaHeaders(headers({{"Mcp-Param-Priority", "8"}}), kSchema, arguments);
        ASSERT_TRUE(other) << seven;
        EXPECT_NE(other->message.find("differs"), std::string::npos) << other->message;
    }
    constexpr const char* kBeyond = R"({"priority":18446744073709551617})";
    EXPECT_FALSE(checkSchemaHeaders(headers({{"Mcp-Param-Priority", "18446744073709551617"}}),
                                    kSchema, kBeyond));
    EXPECT_TRUE(checkSchemaHeaders(headers({{"Mcp-Param-Priority", "18446744073709551616"}}),
                                   kSchema, kBeyond));
    EXPECT_TRUE(checkSchemaHeaders(headers({}), kSchema, kBeyond));
    EXPECT_TRUE(
        checkSchemaHeaders(headers({{"Mcp-Param-Priority", "7.5"}}), kSchema, R"({"priority":7})"));
    EXPECT_TRUE(checkSchemaHeaders(headers({{"Mcp-Param-Priority", "seven"}}), kSchema,
                                   R"({"priority":7})"));
}

TEST(RoutingHeadersTest, DeclaredHeadersAreCompiledOnceFromTheSchema) {
    const auto declared = compileParamHeaders(
        R"({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},)"
        R"("plain":{"type":"string"},"empty":{"x-mcp-header":""},"odd":{"x-mcp-header":7},)"
        R"("priority":{"type":"integer","x-mcp-header":"Priority"}}})");
    ASSERT_EQ(declared.size(), 2U);
    EXPECT_EQ(declared[0].property, "region");
    EXPECT_EQ(declared[0].header, "Mcp-Param-Region");
    EXPECT_EQ(declared[1].property, "priority");
    EXPECT_EQ(declared[1].header, "Mcp-Param-Priority");
    for (const char* none : {"", "{}", "[]", "not json", R"({"properties":[]})",
                             R"({"properties":{"a":{"x-mcp-header":"A"})"}) {
        EXPECT_TRUE(compileParamHeaders(none).empty()) << none;
    }
    // The registry compiles them when a tool is published.
    FunctionToolRegistry registry;
    ToolDefinition tool;
    tool.name = "t";
    tool.input_schema_json =
        R"({"type":"object","properties":{"id":{"type":"string","x-mcp-header":"Id"}}})";
    registry.add(tool,
                 [](std::string_view, ToolCall&) -> Result<ToolResult> { return ToolResult{}; });
    const auto found = registry.find("t");
    ASSERT_TRUE(found);
    ASSERT_EQ(found->param_headers.size(), 1U);
    EXPECT_EQ(found->param_headers[0].header, "Mcp-Param-Id");
    EXPECT_TRUE(checkParamHeaders(headers({}), found->param_headers, R"({"id":"x"})"));
    EXPECT_FALSE(
        checkParamHeaders(headers({{"Mcp-Param-Id", "x"}}), found->param_headers, R"({"id":"x"})"));
}

}  // namespace
}  // namespace crank::mcp::test
