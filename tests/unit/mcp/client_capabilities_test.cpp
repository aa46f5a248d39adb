// keptClientCapabilities: a session keeps only the capabilities crankd reads, each bounded.
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

}  // namespace
}  // namespace crank::mcp
