// A 2026-07-28 request as the mcp plugin writes it (plugins/mcp/modern_request.h): the `_meta`
// keys the conformance suite's request-metadata scenario checks, the routing headers of its
// http-standard-headers and http-custom-headers scenarios, and params that cannot be sent.
#include "modern_request.h"

#include <string>
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

/// The value of header `name`, or "(none)".
std::string header(const ModernRequest& r, const std::string& name) {
    for (const auto& [n, v] : r.headers) {
        if (n == name) {
            return v;
        }
    }
    return "(none)";
}

TEST(ModernRequest, MetaCarriesVersionClientAndThisRequestsCapabilitiesKeepingTheRest) {
    ModernRequest r;
    std::string error;
    ModernClient client;
    client.client_version = "1.2";
    ASSERT_TRUE(buildModernRequest(
        7, "tools/list",
        R"({"cursor":"c1","_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"old"}})",
        client, R"({"elicitation":{"form":{}}})", nullptr, r, error))
        << error;
    const rapidjson::Document body = parsed(r.body);
    EXPECT_EQ(body["id"].GetInt64(), 7);
    EXPECT_STREQ(body["method"].GetString(), "tools/list");
    const rapidjson::Value& params = body["params"];
    EXPECT_STREQ(params["cursor"].GetString(), "c1");
    const rapidjson::Value& meta = params["_meta"];
    EXPECT_STREQ(meta["progressToken"].GetString(), "p");
    EXPECT_STREQ(meta["io.modelcontextprotocol/protocolVersion"].GetString(), "2026-07-28");
    EXPECT_STREQ(meta["io.modelcontextprotocol/clientInfo"]["name"].GetString(), "crank");
    EXPECT_STREQ(meta["io.modelcontextprotocol/clientInfo"]["version"].GetString(), "1.2");
    EXPECT_TRUE(meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"].IsObject());
    EXPECT_EQ(meta.MemberCount(), 4U);  // the old version key was replaced, not repeated
    EXPECT_EQ(header(r, "MCP-Protocol-Version"), "2026-07-28");
    EXPECT_EQ(header(r, "Mcp-Method"), "tools/list");
    EXPECT_EQ(header(r, "Mcp-Name"), "(none)");
}

TEST(ModernRequest, NoParamsAndNoCapabilitiesStillCarryTheRequiredKeys) {
    ModernRequest r;
    std::string error;
    ASSERT_TRUE(
        buildModernRequest(1, "server/discover", "", ModernClient{}, "{}", nullptr, r, error));
    const rapidjson::Document body = parsed(r.body);
    const rapidjson::Value& meta = body["params"]["_meta"];
    EXPECT_TRUE(meta["io.modelcontextprotocol/clientCapabilities"].IsObject());
    EXPECT_EQ(meta["io.modelcontextprotocol/clientCapabilities"].MemberCount(), 0U);
    EXPECT_EQ(header(r, "Mcp-Method"), "server/discover");
}

TEST(ModernRequest, McpNameMirrorsTheNamedMemberOfEachMethod) {
    const auto nameOf = [](const char* method, const std::string& params) {
        ModernRequest r;
        std::string error;
        EXPECT_TRUE(buildModernRequest(2, method, params, ModernClient{}, "{}", nullptr, r, error))
            << error;
        return header(r, "Mcp-Name");
    };
    EXPECT_EQ(nameOf("tools/call", R"({"name":"my-hyphenated-tool","arguments":{}})"),
              "my-hyphenated-tool");
    EXPECT_EQ(nameOf("prompts/get", R"({"name":"test_prompt"})"), "test_prompt");
    EXPECT_EQ(nameOf("resources/read", R"({"uri":"file:///path/to/file%20name.txt"})"),
              "file:///path/to/file%20name.txt");
    EXPECT_EQ(nameOf("resources/read", R"({"uri":"https://example.com/resource?id=123"})"),
              "https://example.com/resource?id=123");
    EXPECT_EQ(nameOf("tasks/get", R"({"taskId":"t-1"})"), "t-1");
    EXPECT_EQ(nameOf("tools/call", "{\"name\":\"caf\u00e9\"}"), "=?base64?Y2Fmw6k=?=");
}

TEST(ModernRequest, ToolCallsMirrorTheirAnnotatedArguments) {
    std::string why;
    const rapidjson::Document schema = parsed(
        R"({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},
                                          "method_val":{"type":"string","x-mcp-header":"Method"},
                                          "query":{"type":"string"}}})");
    const auto mirrored = readMirroredParams(schema, why);
    ASSERT_TRUE(mirrored.has_value()) << why;
    ModernRequest r;
    std::string error;
    ASSERT_TRUE(buildModernRequest(
        3, "tools/call",
        R"({"name":"test_custom_headers","arguments":{"region":"us","method_val":"GET","query":"q"}})",
        ModernClient{}, "{}", &*mirrored, r, error))
        << error;
    EXPECT_EQ(header(r, "Mcp-Param-Region"), "us");
    EXPECT_EQ(header(r, "Mcp-Param-Method"), "GET");  // not the Mcp-Method header
    EXPECT_EQ(header(r, "Mcp-Method"), "tools/call");
    EXPECT_EQ(header(r, "Mcp-Param-Query"), "(none)");
}

TEST(ModernRequest, ParamsThatAreNoObjectAreRefusedSayingWhat) {
    ModernRequest r;
    std::string error;
    EXPECT_FALSE(
        buildModernRequest(1, "tools/list", "[1]", ModernClient{}, "{}", nullptr, r, error));
    EXPECT_NE(error.find("not a JSON object"), std::string::npos) << error;
    EXPECT_FALSE(buildModernRequest(1, "tools/list", R"({"_meta":3})", ModernClient{}, "{}",
                                    nullptr, r, error));
    EXPECT_NE(error.find("_meta"), std::string::npos) << error;
    EXPECT_FALSE(
        buildModernRequest(1, "tools/list", "{}", ModernClient{}, "[]", nullptr, r, error));
    EXPECT_NE(error.find("capabilities"), std::string::npos) << error;
    EXPECT_FALSE(buildModernRequest(1, "tools/list", std::string(1000, '['), ModernClient{}, "{}",
                                    nullptr, r, error));
    EXPECT_NE(error.find("nested deeper"), std::string::npos) << error;
}

}  // namespace
}  // namespace crank::mcpc
