// RequestId: equality, hashing, order, JSON and log forms.

#include <cstdint>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>

#include <gtest/gtest.h>

#include "mcp/wire/request_id.h"

namespace crank::mcp::test {
namespace {

TEST(JsonRpcRequestIdTest, Kinds) {
    const RequestId number(42);
    EXPECT_TRUE(number.isInteger());
    EXPECT_FALSE(number.isString());
    EXPECT_EQ(number.asInteger(), 42);

    const RequestId text("42");
    EXPECT_TRUE(text.isString());
    EXPECT_FALSE(text.isInteger());
    EXPECT_EQ(text.asString(), "42");

    EXPECT_TRUE(RequestId(0).isInteger());  // not a null const char*
}

TEST(JsonRpcRequestIdTest, Equality) {
    EXPECT_EQ(RequestId(1), RequestId(1));
    EXPECT_EQ(RequestId("a"), RequestId(std::string("a")));
    EXPECT_NE(RequestId(1), RequestId(2));
    EXPECT_NE(RequestId(1), RequestId("1"));
    EXPECT_NE(RequestId(""), RequestId(0));
}

TEST(JsonRpcRequestIdTest, KeysOfUnorderedAndOrderedMaps) {
    std::unordered_map<RequestId, int> pending;
    pending.emplace(RequestId(1), 10);
    pending.emplace(RequestId("1"), 20);
    pending.emplace(RequestId(std::numeric_limits<std::int64_t>::min()), 30);
    EXPECT_EQ(pending.size(), 3U);
    EXPECT_EQ(pending.at(RequestId(1)), 10);
    EXPECT_EQ(pending.at(RequestId("1")), 20);
    EXPECT_EQ(pending.count(RequestId(2)), 0U);
    EXPECT_EQ(std::hash<RequestId>{}(RequestId("x")), RequestId("x").hash());

    std::map<RequestId, int> sorted{
        {RequestId("b"), 1}, {RequestId(5), 2}, {RequestId("a"), 3}, {RequestId(-5), 4}};
    std::string order;
    for (const auto& [id, value] : sorted) {
        order += id.toString() + " ";
    }
    EXPECT_EQ(order, R"(-5 5 "a" "b" )");
}

TEST(JsonRpcRequestIdTest, ToJson) {
    EXPECT_EQ(RequestId(0).toJson(), "0");
    EXPECT_EQ(RequestId(-17).toJson(), "-17");
    EXPECT_EQ(RequestId(std::numeric_limits<std::int64_t>::min()).toJson(), "-9223372036854775808");
    EXPECT_EQ(RequestId("abc").toJson(), R"("abc")");
    EXPECT_EQ(RequestId("").toJson(), R"("")");
    EXPECT_EQ(RequestId("q\"\\\n\x01\xc3\xa9").toJson(), "\"q\\\"\\\\\\n\\u0001\xc3\xa9\"");
}

TEST(JsonRpcRequestIdTest, ToStringCutsLongStrings) {
    EXPECT_EQ(RequestId(7).toString(), "7");
    EXPECT_EQ(RequestId("abc").toString(), R"("abc")");
    EXPECT_EQ(RequestId(std::string(64, 'x')).toString(), "\"" + std::string(64, 'x') + "\"");
    EXPECT_EQ(RequestId(std::string(65, 'x')).toString(), "\"" + std::string(64, 'x') + "\"...");
    // 63 ASCII bytes and then a 2-byte character that would cross byte 64: cut before it.
    EXPECT_EQ(RequestId(std::string(63, 'x') + "\xc3\xa9" + "tail").toString(),
              "\"" + std::string(63, 'x') + "\"...");
    EXPECT_EQ(RequestId("line\nbreak").toString(), R"("line\nbreak")");
}

TEST(JsonRpcRequestIdTest, StreamsAsToString) {
    std::ostringstream out;
    out << RequestId("x") << ' ' << RequestId(3);
    EXPECT_EQ(out.str(), R"("x" 3)");
}

}  // namespace
}  // namespace crank::mcp::test
