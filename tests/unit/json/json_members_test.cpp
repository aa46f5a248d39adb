// The small DOM readings every host folder shares: an object parsed strictly and bounded in
// depth (empty text is {}), a string member, a copy with one member set.

#include "json/json_members.h"

#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace crank::json {
namespace {

TEST(JsonMembersTest, ParseObjectTakesObjectsAndEmptyTextOnly) {
    Document doc;
    EXPECT_TRUE(parseObject(R"({"a":"b"})", doc));
    EXPECT_EQ(stringMember(doc, "a"), "b");
    EXPECT_TRUE(parseObject("", doc));  // params left out
    EXPECT_TRUE(doc.IsObject());
    EXPECT_EQ(doc.MemberCount(), 0U);
    EXPECT_FALSE(parseObject("[1]", doc));
    EXPECT_FALSE(parseObject(R"({"a":)", doc));             // truncated
    EXPECT_FALSE(parseObject(R"({"a":1} trailing)", doc));  // garbage after
    // Not UTF-8: passed on as it came (an upstream's Latin-1 description costs only itself).
    EXPECT_TRUE(parseObject("{\"a\":\"\xff\"}", doc));
    EXPECT_EQ(stringMember(doc, "a"), "\xff");
    EXPECT_FALSE(parseValue("", doc));
    EXPECT_TRUE(parseValue(R"("c1")", doc));
    EXPECT_TRUE(doc.IsString());
}

TEST(JsonMembersTest, NestingPastTheBoundIsRefusedBeforeAnythingRecursesOverIt) {
    const auto nested = [](std::size_t depth) {
        return "{\"a\":" + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
    };
    Document doc;
    EXPECT_TRUE(parseObject(nested(kMaxObjectDepth), doc));
    EXPECT_FALSE(parseObject(nested(kMaxObjectDepth + 1), doc));
    // An answer of a million brackets: refused, and the process is still here.
    EXPECT_FALSE(parseValue(std::string(1'000'000, '['), doc));
    const Result<void> why = parseLenient(nested(kMaxObjectDepth + 1), doc);
    ASSERT_FALSE(why);
    EXPECT_NE(why.error().message.find("nested deeper than 128 levels"), std::string::npos)
        << why.error().message;
}

TEST(JsonMembersTest, StringMemberIsEmptyForWhatIsNotAStringMemberOfAnObject) {
    Document doc;
    ASSERT_TRUE(parseObject(R"({"s":"x","n":1,"o":{}})", doc));
    EXPECT_EQ(stringMember(doc, "s"), "x");
    EXPECT_EQ(stringMember(doc, "n"), "");
    EXPECT_EQ(stringMember(doc, "o"), "");
    EXPECT_EQ(stringMember(doc, "missing"), "");
    EXPECT_EQ(stringMember(doc["n"], "s"), "");  // not an object
}

TEST(JsonMembersTest, WithStringMemberReplacesOrAppendsAndLeavesTheOriginal) {
    Document doc;
    ASSERT_TRUE(parseObject(R"({"name":"a","x":[1,2]})", doc));
    EXPECT_EQ(withStringMember(doc, "name", "b"), R"({"name":"b","x":[1,2]})");
    EXPECT_EQ(withStringMember(doc, "taskId", "t\"1"), R"({"name":"a","x":[1,2],"taskId":"t\"1"})");
    EXPECT_EQ(stringMember(doc, "name"), "a");
}

}  // namespace
}  // namespace crank::json
