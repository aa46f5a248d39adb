// classifyPost(): which era one POST belongs to, and the envelope rules a 2026-07-28 request must
// meet before any method runs (the conformance suite's server-stateless checks).

#include "mcp/modern/protocol_era.h"

#include <string>

#include <gtest/gtest.h>

#include "mcp/wire/json_rpc.h"

namespace crank::mcp::test {
namespace {

const std::string kClaim = R"("io.modelcontextprotocol/protocolVersion":"2026-07-28")";
const std::string kCaps = R"("io.modelcontextprotocol/clientCapabilities":{})";

/// A request of `method` whose _meta holds `meta` (the members, without braces; none: no _meta).
std::string request(const std::string& method, const std::string& meta) {
    std::string params = meta.empty() ? "{}" : R"({"_meta":{)" + meta + "}}";
    return R"({"jsonrpc":"2.0","id":7,"method":")" + method + R"(","params":)" + params + "}";
}

EraVerdict classify(const std::string& body, std::string_view header) {
    return classifyPost(parseJsonRpcBody(body), header);
}

TEST(ProtocolEraTest, ClaimlessRequestsAreLegacy) {
    for (const std::string& body :
         {request("initialize", ""), request("tools/list", ""),
          std::string(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])"),
          std::string(R"({"jsonrpc":"2.0","id":1,"result":{}})"), std::string("not json"),
          std::string(R"({"jsonrpc":"1.0","id":1,"method":"x"})")}) {
        EXPECT_EQ(classify(body, "2025-11-25").era, Era::legacy) << body;
        EXPECT_EQ(classify(body, "").era, Era::legacy) << body;
    }
}

TEST(ProtocolEraTest, AClaimMakesAnyMethodModern) {
    for (const char* method : {"initialize", "ping", "logging/setLevel", "tools/list"}) {
        const EraVerdict verdict = classify(request(method, kClaim + "," + kCaps), "2026-07-28");
        EXPECT_EQ(verdict.era, Era::modern) << method;
        EXPECT_FALSE(verdict.refusal) << method;
        EXPECT_EQ(verdict.meta.protocol_version, "2026-07-28");
    }
}

TEST(ProtocolEraTest, AModernHeaderWithoutTheClaimIsRefused) {
    const EraVerdict verdict = classify(request("server/discover", ""), "2026-07-28");
    EXPECT_EQ(verdict.era, Era::modern);
    ASSERT_TRUE(verdict.refusal);
    EXPECT_EQ(verdict.refusal->status, 400);
    EXPECT_EQ(verdict.refusal->code, kInvalidParams);
    EXPECT_NE(verdict.refusal->message.find("protocolVersion"), std::string::npos);
    // A notification is accepted as it comes.
    const EraVerdict notification =
        classify(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})",
                 "2026-07-28");
    EXPECT_EQ(notification.era, Era::modern);
    EXPECT_FALSE(notification.refusal);
}

TEST(ProtocolEraTest, TheHeaderMustEqualTheClaim) {
    const EraVerdict missing = classify(request("tools/list", kClaim + "," + kCaps), "");
    ASSERT_TRUE(missing.refusal);
    EXPECT_EQ(missing.refusal->code, kHeaderMismatch);
    const EraVerdict other = classify(
        request("tools/list", R"("io.modelcontextprotocol/protocolVersion":"v999.0.0",)" + kCaps),
        "2026-07-28");
    ASSERT_TRUE(other.refusal);
    EXPECT_EQ(other.refusal->code, kHeaderMismatch);
    EXPECT_EQ(other.refusal->status, 400);
}

TEST(ProtocolEraTest, AnUnknownVersionNamesTheSupportedOnes) {
    const EraVerdict verdict = classify(
        request("tools/list", R"("io.modelcontextprotocol/protocolVersion":"v999.0.0",)" + kCaps),
        "v999.0.0");
    EXPECT_EQ(verdict.era, Era::modern);
    ASSERT_TRUE(verdict.refusal);
    EXPECT_EQ(verdict.refusal->status, 400);
    EXPECT_EQ(verdict.refusal->code, kUnsupportedProtocolVersion);
    EXPECT_EQ(verdict.refusal->data_json, R"({"supported":["2026-07-28"],"requested":"v999.0.0"})");
}

TEST(ProtocolEraTest, CapabilitiesAreRequiredAndClientInfoIsNot) {
    const EraVerdict none = classify(request("server/discover", kClaim), "2026-07-28");
    ASSERT_TRUE(none.refusal);
    EXPECT_EQ(none.refusal->code, kInvalidParams);
    EXPECT_NE(none.refusal->message.find("clientCapabilities"), std::string::npos);
    const EraVerdict wrong = classify(
        request("server/discover", kClaim + R"(,"io.modelcontextprotocol/clientCapabilities":[])"),
        "2026-07-28");
    ASSERT_TRUE(wrong.refusal);
    EXPECT_EQ(wrong.refusal->code, kInvalidParams);
    EXPECT_FALSE(classify(request("server/discover", kClaim + "," + kCaps), "2026-07-28").refusal);
}

TEST(ProtocolEraTest, AClaimThatIsNotAStringIsRefused) {
    const EraVerdict verdict = classify(
        request("tools/list", R"("io.modelcontextprotocol/protocolVersion":20260728,)" + kCaps),
        "2026-07-28");
    EXPECT_EQ(verdict.era, Era::modern);
    ASSERT_TRUE(verdict.refusal);
    EXPECT_EQ(verdict.refusal->code, kInvalidParams);
}

TEST(ProtocolEraTest, AnUnreadableMetaIsModernOnlyByTheHeader) {
    const std::string body =
        R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":5}})";
    EXPECT_EQ(classify(body, "2025-11-25").era, Era::legacy);
    const EraVerdict verdict = classify(body, "2026-07-28");
    EXPECT_EQ(verdict.era, Era::modern);
    ASSERT_TRUE(verdict.refusal);
    EXPECT_EQ(verdict.refusal->code, kInvalidParams);
}

TEST(ProtocolEraTest, AClaimBesideABadProgressTokenIsStillModern) {
    const std::string body =
        request("tools/list", kClaim + "," + kCaps + R"(,"progressToken":1.5)");
    const EraVerdict verdict = classify(body, "");
    EXPECT_EQ(verdict.era, Era::modern);
    ASSERT_TRUE(verdict.refusal);
    EXPECT_EQ(verdict.refusal->code, kInvalidParams);
    EXPECT_NE(verdict.refusal->message.find("progressToken"), std::string::npos);
}

TEST(ProtocolEraTest, AToolCallsParamsAreReadOnceForBothEras) {
    const std::string legacyCall =
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",)"
        R"("arguments":{"text":"x"},"_meta":{"progressToken":"p"}}})";
    const EraVerdict legacy = classify(legacyCall, "2025-11-25");
    EXPECT_EQ(legacy.era, Era::legacy);
    ASSERT_TRUE(legacy.tool_call && *legacy.tool_call);
    EXPECT_EQ((*legacy.tool_call)->name, "echo");
    EXPECT_EQ((*legacy.tool_call)->arguments_json, R"({"text":"x"})");
    EXPECT_EQ((*legacy.tool_call)->meta.progress_token, RequestId("p"));

    const std::string modernCall =
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",)"
        R"("_meta":{)" +
        kClaim + "," + kCaps + "}}}";
    const EraVerdict modern = classify(modernCall, "2026-07-28");
    EXPECT_EQ(modern.era, Era::modern);
    EXPECT_FALSE(modern.refusal);
    ASSERT_TRUE(modern.tool_call && *modern.tool_call);
    EXPECT_EQ(modern.meta.protocol_version, "2026-07-28");
    EXPECT_EQ((*modern.tool_call)->meta.protocol_version, "2026-07-28");

    // Params the call refuses (no name) still say which era the request is of.
    const EraVerdict nameless = classify(request("tools/call", kClaim + "," + kCaps), "2026-07-28");
    EXPECT_EQ(nameless.era, Era::modern);
    EXPECT_FALSE(nameless.refusal);
    ASSERT_TRUE(nameless.tool_call);
    EXPECT_FALSE(*nameless.tool_call);
    // Other methods carry none.
    EXPECT_FALSE(classify(request("tools/list", ""), "").tool_call);
}

TEST(ProtocolEraTest, AClaimWrittenWithEscapesIsStillFound) {
    // "io.modelcontextprotocol\/protocolVersion" is the same key: the text is read in full.
    const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{)"
                             R"("io.modelcontextprotocol\/protocolVersion":"2026-07-28",)" +
                             kCaps + "}}}";
    const EraVerdict verdict = classify(body, "");
    EXPECT_EQ(verdict.era, Era::modern);
    ASSERT_TRUE(verdict.refusal);
    EXPECT_EQ(verdict.refusal->code, kHeaderMismatch);
}

}  // namespace
}  // namespace crank::mcp::test
