// Reading members of params for method handlers: extractMember().

#include <string>

#include <gtest/gtest.h>

#include "mcp/wire/json_rpc.h"

namespace crank::mcp::test {
namespace {

/// The member text of a call that must succeed.
std::string member(std::string_view objectJson, std::string_view key) {
    Result<std::string> r = extractMember(objectJson, key);
    if (!r) {
        ADD_FAILURE() << "extractMember failed: " << r.error().message;
        return "(error)";
    }
    return *r;
}

/// The error message of a call that must fail.
std::string memberError(std::string_view objectJson, std::string_view key) {
    Result<std::string> r = extractMember(objectJson, key);
    if (r) {
        ADD_FAILURE() << "extractMember succeeded with " << *r;
        return "(no error)";
    }
    EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
    return r.error().message;
}

TEST(JsonRpcExtractMemberTest, MembersOfEveryType) {
    const std::string params =
        R"({"name":"echo","arguments":{ "x" : [1, 2] },"n":-12345678901234567890123,)"
        R"("f":1.50,"b":false,"z":null,"s":"a\u00e9\n"})";
    EXPECT_EQ(member(params, "name"), R"("echo")");
    EXPECT_EQ(member(params, "arguments"), R"({"x":[1,2]})");
    EXPECT_EQ(member(params, "n"), "-12345678901234567890123");
    EXPECT_EQ(member(params, "f"), "1.50");
    EXPECT_EQ(member(params, "b"), "false");
    EXPECT_EQ(member(params, "z"), "null");
    EXPECT_EQ(member(params, "s"), R"("a\u00e9\n")");
}

TEST(JsonRpcExtractMemberTest, AbsentMemberIsEmpty) {
    EXPECT_EQ(member(R"({"a":1})", "b"), "");
    EXPECT_EQ(member("{}", "a"), "");
    EXPECT_EQ(member(R"({"outer":{"name":1}})", "name"), "");  // only top-level members
    EXPECT_EQ(member(R"({"Name":1})", "name"), "");            // names are case-sensitive
}

TEST(JsonRpcExtractMemberTest, EmptyTextIsAnEmptyObject) {
    EXPECT_EQ(member("", "cursor"), "");
}

TEST(JsonRpcExtractMemberTest, EscapedNamesMatch) {
    EXPECT_EQ(member(R"({"n\u0061me":"x"})", "name"), R"("x")");
    EXPECT_EQ(member("{\"\xc3\xa9\":1}", "\xc3\xa9"), "1");
}

TEST(JsonRpcExtractMemberTest, MemberNamedErrorIsAnOrdinaryMember) {
    EXPECT_EQ(member(R"({"error":{"code":1}})", "error"), R"({"code":1})");
}

TEST(JsonRpcExtractMemberTest, NotAnObject) {
    EXPECT_EQ(memberError("[1,2]", "a"), "expected an object, got an array");
    EXPECT_EQ(memberError(R"("text")", "a"), R"(expected an object, got "text")");
    EXPECT_EQ(memberError("null", "a"), "expected an object, got null");
    EXPECT_EQ(memberError("5", "a"), "expected an object, got 5");
}

TEST(JsonRpcExtractMemberTest, NotJson) {
    EXPECT_EQ(memberError(R"({"a":)", "a"), "invalid JSON at byte 5: Invalid value.");
    EXPECT_EQ(memberError(" ", "a"), "invalid JSON at byte 1: The document is empty.");
    EXPECT_EQ(memberError("{\"a\":\"\xff\"}", "a"),
              "invalid JSON at byte 6: Invalid encoding in string.");
    EXPECT_EQ(memberError(R"({"a":"\udc00"})", "a"),
              "invalid JSON at byte 5: a \\u escape encodes a lone UTF-16 surrogate");
    EXPECT_EQ(memberError(std::string("{}\0", 3), "a"),
              "invalid JSON at byte 2: a NUL byte is not allowed");
}

TEST(JsonRpcExtractMemberTest, DuplicatesAreRefused) {
    EXPECT_EQ(memberError(R"({"a":1,"a":2})", "a"), R"(duplicate member "a")");
    EXPECT_EQ(memberError(R"({"a":1,"b":{"c":1,"c":1}})", "a"),
              R"(duplicate member "c" inside "b")");
}

TEST(JsonRpcExtractMemberTest, DeepObjectsDoNotExhaustTheStack) {
    std::string deep;
    for (int i = 0; i < 100'000; ++i) {
        deep += R"({"a":)";
    }
    deep += "1";
    deep += std::string(100'000, '}');
    const std::string text = R"({"x":)" + deep + "}";
    EXPECT_EQ(member(text, "x").size(), deep.size());
}

}  // namespace
}  // namespace crank::mcp::test
