// modernResult(): what every 2026-07-28 result carries, added to the result a method gave.

#include "mcp/modern/modern_result.h"

#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "mcp/wire/json_rpc.h"

namespace crank::mcp::test {
namespace {

constexpr const char* kInfo = R"({"name":"crank","version":"1.0"})";
const char* kServerInfo = "io.modelcontextprotocol/serverInfo";

rapidjson::Document parsed(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.c_str());
    EXPECT_FALSE(doc.HasParseError()) << json;
    EXPECT_TRUE(doc.IsObject()) << json;
    return doc;
}

TEST(ModernResultTest, AddsResultTypeAndServerInfo) {
    const auto doc = parsed(modernResult(R"({"tools":[]})", kInfo, std::nullopt));
    EXPECT_STREQ(doc["resultType"].GetString(), "complete");
    EXPECT_STREQ(doc["_meta"][kServerInfo]["name"].GetString(), "crank");
    EXPECT_TRUE(doc["tools"].IsArray());
    EXPECT_FALSE(doc.HasMember("ttlMs"));
    EXPECT_FALSE(doc.HasMember("cacheScope"));

    const auto empty = parsed(modernResult("{}", kInfo, std::nullopt));
    EXPECT_STREQ(empty["resultType"].GetString(), "complete");
    EXPECT_EQ(empty.MemberCount(), 2U);
    const auto spaced = parsed(modernResult(" { } ", kInfo, std::nullopt));
    EXPECT_EQ(spaced.MemberCount(), 2U);
}

TEST(ModernResultTest, AddsCacheHints) {
    const auto doc = parsed(modernResult(R"({"tools":[]})", kInfo, CacheHint{30000, "private"}));
    EXPECT_EQ(doc["ttlMs"].GetInt64(), 30000);
    EXPECT_STREQ(doc["cacheScope"].GetString(), "private");
    EXPECT_EQ(parsed(modernResult("{}", kInfo, CacheHint{-5, "public"}))["ttlMs"].GetInt64(), 0);
}

TEST(ModernResultTest, KeepsWhatTheResultSaysItself) {
    const auto doc =
        parsed(modernResult(R"({"resultType":"complete","ttlMs":5,"_meta":{"x":1},"content":[]})",
                            kInfo, CacheHint{30000, "public"}));
    EXPECT_STREQ(doc["resultType"].GetString(), "complete");
    EXPECT_EQ(doc["ttlMs"].GetInt64(), 5);
    EXPECT_STREQ(doc["cacheScope"].GetString(), "public");
    EXPECT_EQ(doc["_meta"]["x"].GetInt(), 1);
    EXPECT_STREQ(doc["_meta"][kServerInfo]["name"].GetString(), "crank");

    // An input_required result is never cached: no hints, even on a cacheable method.
    const auto asking = parsed(modernResult(R"({"resultType":"input_required","inputRequests":{}})",
                                            kInfo, CacheHint{30000, "public"}));
    EXPECT_FALSE(asking.HasMember("ttlMs"));
    EXPECT_FALSE(asking.HasMember("cacheScope"));
    EXPECT_STREQ(asking["_meta"][kServerInfo]["name"].GetString(), "crank");

    const auto emptyMeta = parsed(modernResult(R"({"_meta":{}})", kInfo, std::nullopt));
    EXPECT_STREQ(emptyMeta["_meta"][kServerInfo]["version"].GetString(), "1.0");
    const auto theirs = parsed(modernResult(
        R"({"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}})", kInfo, std::nullopt));
    EXPECT_STREQ(theirs["_meta"][kServerInfo]["name"].GetString(), "up");
    // A _meta that is not an object is left alone (and not duplicated).
    const std::string odd = modernResult(R"({"_meta":7})", kInfo, std::nullopt);
    EXPECT_EQ(parsed(odd)["_meta"].GetInt(), 7);
    EXPECT_EQ(odd.find("_meta"), odd.rfind("_meta"));
}

TEST(ModernResultTest, NonObjectsAreReturnedUnchanged) {
    for (const char* text : {"[]", "7", "not json", ""}) {
        EXPECT_EQ(modernResult(text, kInfo, std::nullopt), text);
    }
}

TEST(ModernResultTest, CacheableMethods) {
    for (const char* method : {"server/discover", "tools/list", "prompts/list", "resources/list",
                               "resources/templates/list", "resources/read"}) {
        EXPECT_TRUE(isCacheableMethod(method)) << method;
    }
    for (const char* method : {"tools/call", "prompts/get", "completion/complete", "tasks/get"}) {
        EXPECT_FALSE(isCacheableMethod(method)) << method;
    }
}

}  // namespace
}  // namespace crank::mcp::test

namespace crank::mcp {
namespace {

// Issue 45: an upstream's result cannot carry the members crankd sets on a 2026-era answer.
TEST(WithoutModernMembers, TheMembersCrankdSetsAreRemovedWhereverTheyStand) {
    EXPECT_EQ(withoutModernMembers(
                  R"({"resultType":"input_required","inputRequests":{"q":{}},"ttlMs":9})"),
              R"({"inputRequests":{"q":{}}})");
    EXPECT_EQ(withoutModernMembers(R"({ "content" : [] , "cacheScope" : "public" })"),
              R"({ "content" : []  })");
    EXPECT_EQ(withoutModernMembers(R"({"ttlMs":1,"cacheScope":"public","resultType":"complete"})"),
              "{}");
    EXPECT_EQ(withoutModernMembers(R"({"a":1,"ttlMs":2,"b":3})"), R"({"a":1,"b":3})");
    // Names compare decoded; members of nested objects are the result's own content.
    EXPECT_EQ(withoutModernMembers(R"({"result\u0054ype":"input_required","x":{"ttlMs":5}})"),
              R"({"x":{"ttlMs":5}})");
    EXPECT_EQ(withoutModernMembers(R"({"k\"ey":"v","ttlMs":7})"), R"({"k\"ey":"v"})");
    // Without them, or not an object: unchanged.
    for (const char* same : {R"({"content":[{"type":"text","text":"ttlMs"}]})", "[]", "not json",
                             R"({"isError":true})"}) {
        EXPECT_EQ(withoutModernMembers(same), same);
    }
}

// Issue 26: a task keeps what is its own, and only where a task may stand.
TEST(WithoutModernMembers, ATaskKeepsItsResultTypeAndTtlByTheMethodItAnswers) {
    const char* created = R"({"resultType":"task","taskId":"t","ttlMs":600,"cacheScope":"x"})";
    EXPECT_EQ(withoutModernMembers(created, "tools/call"),
              R"({"resultType":"task","taskId":"t","ttlMs":600})");
    // A task from a method that creates none is no task; a complete tools/call has no ttlMs.
    EXPECT_EQ(withoutModernMembers(created, "prompts/get"), R"({"taskId":"t"})");
    EXPECT_EQ(withoutModernMembers(R"({"resultType":"complete","ttlMs":5})", "tools/call"), "{}");
    // A task method's answer: the task's ttlMs stays, resultType is crankd's to set.
    EXPECT_EQ(
        withoutModernMembers(R"({"resultType":"complete","taskId":"t","ttlMs":null})", "tasks/get"),
        R"({"taskId":"t","ttlMs":null})");
}

// An upstream's result that names crankd's members but cannot be read, or a task where no task
// may stand, is refused rather than passed on.
TEST(UpstreamResult, ADuplicateKeyOrAMisplacedTaskIsRefused) {
    const auto dup = upstreamResult(
        R"({"resultType":"complete","content":[],"resultType":"task","taskId":"U"})", "tools/call");
    ASSERT_FALSE(dup.ok());
    EXPECT_NE(dup.error().message.find("not a JSON object crankd can read"), std::string::npos)
        << dup.error().message;
    const auto misplaced = upstreamResult(R"({"resultType":"task","taskId":"U"})", "prompts/get");
    ASSERT_FALSE(misplaced.ok());
    EXPECT_NE(misplaced.error().message.find("only a tools/call"), std::string::npos);
    EXPECT_EQ(*upstreamResult(R"({"resultType":"task","taskId":"U","ttlMs":5})", "tools/call"),
              R"({"resultType":"task","taskId":"U","ttlMs":5})");
    EXPECT_EQ(*upstreamResult(R"({"resultType":"complete","messages":[]})", "prompts/get"),
              R"({"messages":[]})");
    // Nothing of them named: as it came, read or not.
    EXPECT_EQ(*upstreamResult(R"({"a":1,"a":2})", "tools/call"), R"({"a":1,"a":2})");
}

TEST(WithoutModernMembers, ThenModernResultSetsItsOwn) {
    const std::string upstream =
        R"({"resultType":"input_required","cacheScope":"public","ttlMs":86400000,"contents":[]})";
    const std::string out = modernResult(withoutModernMembers(upstream), R"({"name":"crank"})",
                                         CacheHint{0, "private"});
    EXPECT_NE(out.find(R"("resultType":"complete")"), std::string::npos) << out;
    EXPECT_NE(out.find(R"("cacheScope":"private")"), std::string::npos) << out;
    EXPECT_EQ(out.find("input_required"), std::string::npos) << out;
    EXPECT_EQ(out.find("86400000"), std::string::npos) << out;
}

TEST(ModernResultMessage, IsTheEnvelopeOfModernResult) {
    const std::string info = R"({"name":"crank","version":"1"})";
    for (const char* result :
         {R"({"content":[],"isError":false})", "{}", " { } ", R"( {"a":1} )",
          R"({"_meta":{"k":1},"content":[]})", R"({"resultType":"input_required"})",
          R"({"ttlMs":5,"tools":[]})", "[]", ""}) {
        for (const std::optional<CacheHint>& hint :
             {std::optional<CacheHint>(), std::optional<CacheHint>(CacheHint{60000, "private"})}) {
            EXPECT_EQ(modernResultMessage(RequestId(7), result, info, hint),
                      makeResult(RequestId(7), modernResult(result, info, hint)))
                << result;
        }
    }
    EXPECT_EQ(modernResultMessage(RequestId("a"), R"({"isError":false})", info, std::nullopt),
              R"({"jsonrpc":"2.0","id":"a","result":{"resultType":"complete","_meta":{)"
              R"("io.modelcontextprotocol/serverInfo":{"name":"crank","version":"1"}},)"
              R"("isError":false}})");
}

}  // namespace
}  // namespace crank::mcp
