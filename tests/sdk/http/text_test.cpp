#include <string>

#include <gtest/gtest.h>

#include <crank/sdk/base64.hpp>
#include <crank/sdk/http/text.hpp>

namespace crank::sdk::http {
namespace {

TEST(HttpText, InvalidUtf8IsReplaced) {
    EXPECT_EQ(validUtf8("a\xC3\xA9z"), "a\xC3\xA9z");
    EXPECT_EQ(validUtf8("a\xFFz"), "a\xEF\xBF\xBDz");
    EXPECT_EQ(validUtf8("\xC3"), "\xEF\xBF\xBD");                                  // truncated
    EXPECT_EQ(validUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong
    EXPECT_EQ(validUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
}

TEST(HttpText, ExcerptsCutOnCharacterBoundaries) {
    EXPECT_EQ(excerpt("short", 10), "short");
    EXPECT_EQ(excerpt("0123456789abc", 10), "0123456789...");
    EXPECT_EQ(excerpt("\xC3\xA9\xC3\xA9\xC3\xA9", 3), "\xC3\xA9...");
}

TEST(HttpText, JsonValidity) {
    EXPECT_TRUE(isValidJson(R"({"a":[1,2,{"b":null}]})"));
    EXPECT_TRUE(isValidJson("  42 "));
    EXPECT_FALSE(isValidJson(R"({"a":)"));
    EXPECT_FALSE(isValidJson("{} {}"));
    EXPECT_FALSE(isValidJson("\"\xFF\""));
    EXPECT_FALSE(isValidJson(""));
    EXPECT_TRUE(isValidJson(std::string(200000, '[') + std::string(200000, ']')));
    EXPECT_EQ(jsonError(R"({"a":1,})"), "Missing a name for object member. at byte 7");
    EXPECT_EQ(jsonError("[1]"), "");
}

TEST(HttpText, Base64) {
    EXPECT_EQ(base64(""), "");
    EXPECT_EQ(base64("f"), "Zg==");
    EXPECT_EQ(base64("fo"), "Zm8=");
    EXPECT_EQ(base64("foo"), "Zm9v");
    EXPECT_EQ(base64("user:p\xC3\xA4ss"), "dXNlcjpww6Rzcw==");
}

}  // namespace
}  // namespace crank::sdk::http
