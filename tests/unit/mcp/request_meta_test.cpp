// The readers of a request's params at the edge: RequestMeta (`params._meta`, both eras) and
// ToolCallParams (a tools/call's params, read once).

#include "mcp/wire/request_meta.h"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "mcp/wire/tool_call_params.h"

namespace crank::mcp::test {
namespace {

RequestMeta meta(std::string_view paramsJson) {
    Result<RequestMeta> r = readRequestMeta(paramsJson);
    if (!r) {
        ADD_FAILURE() << "readRequestMeta failed: " << r.error().message;
        return {};
    }
    return *r;
}

std::optional<RequestId> token(std::string_view paramsJson) {
    return meta(paramsJson).progress_token;
}

std::string tokenError(std::string_view paramsJson) {
    Result<RequestMeta> r = readRequestMeta(paramsJson);
    if (r) {
        ADD_FAILURE() << "readRequestMeta succeeded";
        return "(no error)";
    }
    EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
    return r.error().message;
}

TEST(RequestMetaProgressTokenTest, StringAndIntegerTokens) {
    EXPECT_EQ(token(R"({"_meta":{"progressToken":"abc"}})"), RequestId("abc"));
    EXPECT_EQ(token(R"({"_meta":{"progressToken":5}})"), RequestId(5));
    EXPECT_EQ(token(R"({"_meta":{"progressToken":-9223372036854775808}})"),
              RequestId(std::numeric_limits<std::int64_t>::min()));
    EXPECT_EQ(token(R"({"name":"x", "_meta" : { "other":1, "progressToken" : "t\u0031" } })"),
              RequestId("t1"));
}

TEST(RequestMetaProgressTokenTest, AbsentToken) {
    EXPECT_EQ(token(""), std::nullopt);
    EXPECT_EQ(token("{}"), std::nullopt);
    EXPECT_EQ(token(R"({"_meta":{}})"), std::nullopt);
    EXPECT_EQ(token(R"({"_meta":{"other":1},"progressToken":1})"), std::nullopt);
}

TEST(RequestMetaProgressTokenTest, MalformedTokens) {
    EXPECT_EQ(tokenError(R"({"_meta":{"progressToken":1.5}})"),
              R"("_meta.progressToken" must be a string or an integer, got 1.5)");
    EXPECT_EQ(tokenError(R"({"_meta":{"progressToken":null}})"),
              R"("_meta.progressToken" must be a string or an integer, got null)");
    EXPECT_EQ(tokenError(R"({"_meta":{"progressToken":{"a":1}}})"),
              R"("_meta.progressToken" must be a string or an integer, got an object)");
    EXPECT_EQ(tokenError(R"({"_meta":{"progressToken":18446744073709551615}})"),
              R"("_meta.progressToken" must be a string or an integer between )"
              R"(-9223372036854775808 and 9223372036854775807, got 18446744073709551615)");
    EXPECT_EQ(tokenError(R"({"_meta":5})"), R"("_meta" must be an object, got 5)");
    EXPECT_EQ(tokenError(R"({"_meta":[{"progressToken":1}]})"),
              R"("_meta" must be an object, got an array)");
    EXPECT_EQ(tokenError("{"), "invalid JSON at byte 1: Missing a name for object member.");
    EXPECT_EQ(tokenError(R"({"_meta":{"progressToken":1,"progressToken":2}})"),
              R"(duplicate member "progressToken" inside "_meta")");
}

TEST(RequestMetaTest, ParamsThatAreNotAnObjectHaveNoMeta) {
    EXPECT_FALSE(meta("[1]").present);
    EXPECT_FALSE(meta("").present);
    EXPECT_FALSE(meta("{}").present);
    EXPECT_TRUE(meta(R"({"_meta":{}})").present);
}

TEST(RequestMetaTest, TheModernEraKeys) {
    const RequestMeta m =
        meta(R"({"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
             R"("io.modelcontextprotocol/clientCapabilities":{ "sampling" : {} },)"
             R"("io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},)"
             R"("io.modelcontextprotocol/logLevel":"debug",)"
             R"("traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",)"
             R"("tracestate":"a=1","baggage":"k=v"}})");
    EXPECT_TRUE(m.claims_version);
    EXPECT_EQ(m.protocol_version, "2026-07-28");
    ASSERT_TRUE(m.client_capabilities);
    EXPECT_EQ(m.client_capabilities->json(), R"({"sampling":{}})");
    EXPECT_TRUE(m.capabilities()->declares("sampling"));
    EXPECT_EQ(m.client_info_json, R"({"name":"c","version":"1"})");
    EXPECT_EQ(m.log_level_json, R"("debug")");
    EXPECT_EQ(m.traceparent, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    EXPECT_EQ(m.tracestate, "a=1");
    EXPECT_EQ(m.baggage, "k=v");
    EXPECT_FALSE(m.progress_token);
}

TEST(RequestMetaTest, AClaimOfAnyTypeIsAClaim) {
    // The claim decides the era; its value is checked by the era's reader.
    const RequestMeta number = meta(R"({"_meta":{"io.modelcontextprotocol/protocolVersion":5}})");
    EXPECT_TRUE(number.claims_version);
    EXPECT_EQ(number.protocol_version, "");
    EXPECT_FALSE(meta(R"({"_meta":{"protocolVersion":"2026-07-28"}})").claims_version);
    // The key outside _meta is no claim.
    EXPECT_FALSE(meta(R"({"io.modelcontextprotocol/protocolVersion":"2026-07-28","_meta":{}})")
                     .claims_version);
}

TEST(RequestMetaTest, TraceContextThatIsNotAStringIsIgnored) {
    const RequestMeta m = meta(R"({"_meta":{"traceparent":5,"tracestate":null}})");
    EXPECT_EQ(m.traceparent, "");
    EXPECT_EQ(m.tracestate, "");
}

ToolCallParams call(std::string_view paramsJson) {
    Result<ToolCallParams> r = parseToolCallParams(paramsJson);
    if (!r) {
        ADD_FAILURE() << "parseToolCallParams failed: " << r.error().message;
        return {};
    }
    return *r;
}

std::string callError(std::string_view paramsJson) {
    Result<ToolCallParams> r = parseToolCallParams(paramsJson);
    if (r) {
        ADD_FAILURE() << "parseToolCallParams succeeded";
        return "(no error)";
    }
    EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
    return r.error().message;
}

TEST(ToolCallParamsTest, OneReadGivesNameArgumentsTaskAndMeta) {
    const ToolCallParams c =
        call(R"({"name":"echo","arguments":{ "n" : 12345678901234567890123, "s":"\u00e9" },)"
             R"("task":{"ttl":5},"_meta":{"progressToken":"p1"}})");
    EXPECT_EQ(c.name, "echo");
    EXPECT_EQ(c.arguments_json, R"({"n":12345678901234567890123,"s":"\u00e9"})");
    EXPECT_EQ(c.task_json, R"({"ttl":5})");
    ASSERT_TRUE(c.meta.progress_token);
    EXPECT_EQ(*c.meta.progress_token, RequestId("p1"));
    const ToolCallParams bare = call(R"({"name":"x"})");
    EXPECT_EQ(bare.arguments_json, "{}");
    EXPECT_EQ(bare.task_json, "");
    EXPECT_FALSE(bare.meta.present);
}

TEST(ToolCallParamsTest, ErrorsNameTheMember) {
    EXPECT_EQ(callError(""), "params.name is required (a string)");  // absent params: {}
    EXPECT_EQ(callError("[1]"), "params must be an object");
    EXPECT_EQ(callError(R"({"name":""})"), "params.name is required (a string)");
    EXPECT_EQ(callError(R"({"name":null})"), "params.name is required (a string)");
    EXPECT_EQ(callError(R"({"name":"a","arguments":null})"), "params.arguments must be an object");
    EXPECT_EQ(callError(R"({"name":"a","_meta":"x"})"), R"("_meta" must be an object, got "x")");
    EXPECT_EQ(callError(R"({"name":"a","_meta":{"progressToken":true}})"),
              R"("_meta.progressToken" must be a string or an integer, got true)");
    EXPECT_EQ(callError(R"({"name":"a","arguments":{"k":1,"k":2}})"),
              R"(duplicate member "k" inside "arguments")");
    EXPECT_EQ(callError(R"({"name":"a","name":"b"})"), R"(duplicate member "name")");
}

}  // namespace
}  // namespace crank::mcp::test
