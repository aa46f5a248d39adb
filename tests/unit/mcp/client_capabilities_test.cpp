// keptClientCapabilities: a session keeps only the capabilities crankd reads, each bounded.
// ClientCapabilities: what a client declared, read once and asked as values.
#include "mcp/wire/client_capabilities.h"

#include <string>

#include <gtest/gtest.h>

namespace crank::mcp {
namespace {

std::string kept(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.c_str());
    return keptClientCapabilities(doc);
}

TEST(ClientCapabilities, OnlyTheMembersCrankdReadsAreKept) {
    EXPECT_EQ(kept(R"({"roots":{"listChanged":true},"experimental":{"x":1},"sampling":{},)"
                   R"("elicitation":{"form":{}},"tasks":{"cancel":{}},"other":{}})"),
              R"({"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{}},)"
              R"("tasks":{"cancel":{}}})");
}

TEST(ClientCapabilities, AnOversizedMemberStaysDeclaredButEmpty) {
    const std::string big = R"({"sampling":{"junk":")" + std::string(1 << 20, 'x') + R"("}})";
    EXPECT_EQ(kept(big), R"({"sampling":{}})");
}

TEST(ClientCapabilities, MembersThatAreNotObjectsAreDropped) {
    EXPECT_EQ(kept(R"({"roots":true,"sampling":"yes","elicitation":[1]})"), "{}");
    EXPECT_EQ(kept("[]"), "{}");
}

TEST(ClientCapabilities, AMemberDeclaresWhateverItsValue) {
    const ClientCapabilities caps(R"({ "sampling" : {}, "roots": null, "x-vendor": 1 })");
    EXPECT_TRUE(caps.declares("sampling"));
    EXPECT_TRUE(caps.declares("roots"));
    EXPECT_FALSE(caps.declares("elicitation"));
    EXPECT_TRUE(caps.declares("x-vendor"));  // one crankd does not read itself, asked of the text
    EXPECT_FALSE(caps.declares("x-other"));
    EXPECT_TRUE(caps.declaresClientInput());
    EXPECT_EQ(caps.json(), R"({ "sampling" : {}, "roots": null, "x-vendor": 1 })");
}

TEST(ClientCapabilities, NoneAskableIsNoClientInput) {
    EXPECT_FALSE(ClientCapabilities(R"({"experimental":{},"tasks":{}})").declaresClientInput());
    EXPECT_TRUE(ClientCapabilities(R"({"elicitation":{"form":{}}})").declaresClientInput());
}

TEST(ClientCapabilities, AnExtensionIsDeclaredAsAnObjectUnderExtensions) {
    const std::string tasks(kTasksExtension);
    EXPECT_TRUE(ClientCapabilities(R"({"extensions":{")" + tasks + R"(":{}}})")
                    .declaresExtension(kTasksExtension));
    EXPECT_FALSE(ClientCapabilities(R"({"extensions":{")" + tasks + R"(":true}})")
                     .declaresExtension(kTasksExtension));
    EXPECT_FALSE(ClientCapabilities(R"({"extensions":[")" + tasks + R"("]})")
                     .declaresExtension(kTasksExtension));
    EXPECT_FALSE(
        ClientCapabilities(R"({")" + tasks + R"(":{}})").declaresExtension(kTasksExtension));
    const ClientCapabilities other(R"({"extensions":{"com.example/x":{"v":1}}})");
    EXPECT_TRUE(other.declaresExtension("com.example/x"));
    EXPECT_FALSE(other.declaresExtension(kTasksExtension));
    EXPECT_FALSE(other.declaresExtension("com.example/y"));
}

TEST(ClientCapabilities, TextThatIsNotAnObjectDeclaresNothing) {
    for (const char* text : {"", "[]", "true", R"("sampling")", "{", R"({"sampling":{})",
                             R"({"sampling":{}} trailing)"}) {
        const ClientCapabilities caps{std::string(text)};
        EXPECT_FALSE(caps.declares("sampling")) << text;
        EXPECT_FALSE(caps.declaresClientInput()) << text;
        EXPECT_FALSE(caps.declaresExtension(kTasksExtension)) << text;
        EXPECT_EQ(caps.json(), text);
    }
    EXPECT_FALSE(noClientCapabilities()->declaresClientInput());
    EXPECT_EQ(noClientCapabilities()->json(), "");
}

}  // namespace
}  // namespace crank::mcp
