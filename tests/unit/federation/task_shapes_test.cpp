// A task crossing eras: a 2026 upstream's flat task as a 2025 session reads it, the completed
// task crankd keeps for an answer given at once, and the related-task _meta of a 2025 result.

#include "federation/task_shapes.h"

#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "json/json_members.h"

namespace crank::federation {
namespace {

json::Document read(const std::string& text) {
    json::Document doc;
    EXPECT_TRUE(json::parseObject(text, doc)) << text;
    return doc;
}

TEST(TaskShapesTest, AFlatTaskBecomesA2025TaskWithItsTtlAndPollIntervalRenamed) {
    const json::Document flat =
        read(R"({"resultType":"complete","taskId":"up-1","status":"input_required",)"
             R"("statusMessage":"asks","createdAt":"2026-12-07T10:00:00Z",)"
             R"("lastUpdatedAt":"2026-12-07T10:00:01Z","ttlMs":60000,"pollIntervalMs":250,)"
             R"("inputRequests":{"k":{"method":"elicitation/create"}},"_meta":{"x":1}})");
    EXPECT_EQ(legacyTaskJson(flat, 0),
              R"({"taskId":"up-1","status":"input_required","statusMessage":"asks",)"
              R"("createdAt":"2026-12-07T10:00:00Z","lastUpdatedAt":"2026-12-07T10:00:01Z",)"
              R"("ttl":60000,"pollInterval":250})");
    // What the 2025 Task requires is always there: an unlimited (or missing, or wrong) ttl is
    // null, a timestamp that is missing or no string is now; what is optional and wrong is left
    // out, not passed on.
    EXPECT_EQ(legacyTaskJson(read(R"({"taskId":"t","status":"completed","ttlMs":null,)"
                                  R"("pollIntervalMs":-5,"createdAt":7,"result":{}})"),
                             0),
              R"({"taskId":"t","status":"completed","createdAt":"1970-01-01T00:00:00.000Z",)"
              R"("lastUpdatedAt":"1970-01-01T00:00:00.000Z","ttl":null})");
    EXPECT_EQ(legacyTaskJson(read(R"({"taskId":"t","status":"working","ttlMs":"1"})"), 0),
              R"({"taskId":"t","status":"working","createdAt":"1970-01-01T00:00:00.000Z",)"
              R"("lastUpdatedAt":"1970-01-01T00:00:00.000Z","ttl":null})");
    json::Document array;
    array.SetArray();
    EXPECT_EQ(legacyTaskJson(array, 0), "{}");
}

TEST(TaskShapesTest, A2025TaskBecomesTheExtensionsFlatTask) {
    EXPECT_EQ(modernTaskMembers(read(R"({"taskId":"up-1","status":"working","statusMessage":"m",)"
                                     R"("createdAt":"a","lastUpdatedAt":"b","ttl":60000,)"
                                     R"("pollInterval":500,"_meta":{}})"),
                                0),
              R"("taskId":"up-1","status":"working","statusMessage":"m","createdAt":"a",)"
              R"("lastUpdatedAt":"b","ttlMs":60000,"pollIntervalMs":500)");
    // The extension's required members are always there.
    EXPECT_EQ(modernTaskMembers(read(R"({"taskId":"t","status":"completed","ttl":null})"), 0),
              R"("taskId":"t","status":"completed","createdAt":"1970-01-01T00:00:00.000Z",)"
              R"("lastUpdatedAt":"1970-01-01T00:00:00.000Z","ttlMs":null)");
    json::Document result =
        read(R"({"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}})");
    EXPECT_EQ(withoutRelatedTask(result), R"({"content":[]})");
    json::Document kept =
        read(R"({"_meta":{"a":1,"io.modelcontextprotocol/related-task":{"taskId":"t"}}})");
    EXPECT_EQ(withoutRelatedTask(kept), R"({"_meta":{"a":1}})");
}

TEST(TaskShapesTest, ASettledTaskIsCompletedInEitherEra) {
    const std::string legacy = settledTaskJson("up-9", 0, false);
    EXPECT_EQ(legacy,
              R"({"taskId":"up-9","status":"completed","createdAt":"1970-01-01T00:00:00.000Z",)"
              R"("lastUpdatedAt":"1970-01-01T00:00:00.000Z","ttl":null})");
    const json::Document modern = read(settledTaskJson("up-9", 0, true, R"({"content":[]})"));
    EXPECT_EQ(json::stringMember(modern, "status"), "completed");
    EXPECT_TRUE(modern["ttlMs"].IsNull());
    EXPECT_TRUE(modern["result"]["content"].IsArray());
    EXPECT_FALSE(modern.HasMember("ttl"));
}

TEST(TaskShapesTest, A2025ResultNamesItsTaskInItsMeta) {
    EXPECT_EQ(withRelatedTask(R"({"content":[],"_meta":{"a":1}})", "up-1"),
              R"({"content":[],"_meta":{"a":1,"io.modelcontextprotocol/related-task":)"
              R"({"taskId":"up-1"}}})");
    // The upstream's own related-task is replaced, a _meta that is no object too.
    EXPECT_EQ(withRelatedTask(
                  R"({"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"u"}}})", "up-2"),
              R"({"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-2"}}})");
    EXPECT_EQ(withRelatedTask(R"({"_meta":3})", "up-3"),
              R"({"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-3"}}})");
    EXPECT_EQ(withRelatedTask("not json", "up-4"), "not json");
}

}  // namespace
}  // namespace crank::federation
