// The Tasks extension of MCP 2026-07-28 (io.modelcontextprotocol/tasks) over raw HTTP against a
// real crankd running async_job operations of the synthetic plugin: discover advertises it, a
// declaring request's `_start` becomes a flat task, tasks/get inlines the result or the error,
// tasks/update and tasks/cancel acknowledge, the removed methods and the undeclared extension are
// refused, and a task belongs to the agent that created it.

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "mcp_http_client.h"
#include "modern_fixture.h"
#include "test_json.h"

namespace {

using crank::testing::Headers;
using crank::testing::meta;
using crank::testing::Reply;
using crank::testing::request;
using namespace std::chrono_literals;

constexpr const char* kExtension = "io.modelcontextprotocol/tasks";
constexpr const char* kAlice = "alice-tasks-key-0123456789";
constexpr const char* kBob = "bob-tasks-key-0123456789";

/// The _meta of a request that declares the tasks extension.
std::string declaring() {
    return meta("2026-07-28", R"({"extensions":{"io.modelcontextprotocol/tasks":{}}})");
}

std::string text(const rapidjson::Value& v) {
    return crank::testing::jsonText(v);
}

class ModernTasksTest : public crank::testing::ModernCrankdTest {
protected:
    void SetUp() override {
        startCrankd(R"(, "plugins": {"directories": [")" CRANK_PLUGIN_DIR
                    R"(", ")" CRANK_TEST_PLUGIN_DIR
                    R"("]},
            "auth": {"mode": "api_key", "agents": [
                {"id": "alice", "api_key": {"env": "KEY_ALICE"}},
                {"id": "bob", "api_key": {"env": "KEY_BOB"}}]},
            "operations": [{"name": "report", "description": "a synthetic job",
                "protocol": "synthetic",
                "input_schema": {"type": "object", "additionalProperties": false,
                    "properties": {"items": {"type": "integer", "minimum": 0, "maximum": 100},
                                   "delay_ms": {"type": "integer"},
                                   "fail_after": {"type": "integer"}}},
                "config": {"items": "{{items}}", "delay_ms": "{{delay_ms}}",
                           "fail_after_items": "{{fail_after}}", "item_bytes": 40},
                "execution": {"mode": "async_job", "upstream_timeout_ms": 60000,
                              "max_items": 100, "max_bytes": 1048576,
                              "max_result_bytes": 1048576}}])",
                    {{"KEY_ALICE", kAlice}, {"KEY_BOB", kBob}});
    }

    /// A 2026 request of `method` naming `name` (Mcp-Name; none when empty) as agent `key`.
    Reply call(const std::string& body, const std::string& method, const std::string& name,
               const char* key = kAlice) {
        Headers extra{{"Authorization", std::string("Bearer ") + key}};
        if (!name.empty()) {
            extra.emplace_back("Mcp-Name", name);
        }
        return post(body, method, extra);
    }

    /// tools/call of report_start with `arguments`, the extension declared or not.
    Reply start(const std::string& arguments, bool declare, const char* key = kAlice) {
        return call(request(1, "tools/call", R"("name":"report_start","arguments":)" + arguments,
                            declare ? declaring() : meta()),
                    "tools/call", "report_start", key);
    }

    /// tasks/<verb> of `task_id` (params `extra` members too), the extension declared.
    Reply task(const std::string& verb, const std::string& task_id, const char* key = kAlice,
               const std::string& extra = "") {
        return call(request(2, "tasks/" + verb,
                            R"("taskId":")" + task_id + "\"" + (extra.empty() ? "" : ",") + extra,
                            declaring()),
                    "tasks/" + verb, task_id, key);
    }

    /// The id of a task created by report_start with `arguments`.
    std::string created(const std::string& arguments) {
        const Reply reply = start(arguments, true);
        EXPECT_EQ(reply.status, 200) << reply.body;
        const auto doc = reply.json();
        if (!doc.IsObject() || !doc.HasMember("result") || !doc["result"].HasMember("taskId")) {
            ADD_FAILURE() << reply.body;
            return "";
        }
        return doc["result"]["taskId"].GetString();
    }

    /// tasks/get until the task leaves `working` (bounded); the last result.
    rapidjson::Document settled(const std::string& task_id) {
        rapidjson::Document result;
        for (int i = 0; i < 400; ++i) {
            const Reply got = task("get", task_id);
            EXPECT_EQ(got.status, 200) << got.body;
            auto doc = got.json();
            if (!doc.IsObject() || !doc.HasMember("result")) {
                ADD_FAILURE() << got.body;
                return result;
            }
            result.CopyFrom(doc["result"], result.GetAllocator());
            if (std::string(result["status"].GetString()) != "working") {
                return result;
            }
            std::this_thread::sleep_for(25ms);
        }
        ADD_FAILURE() << "task " << task_id << " did not settle: " << text(result);
        return result;
    }
};

TEST_F(ModernTasksTest, DiscoverAdvertisesTheExtensionAndNoTasksCapability) {
    const Reply reply = call(request(1, "server/discover"), "server/discover", "");
    ASSERT_EQ(reply.status, 200) << reply.body;
    const auto doc = reply.json();
    const auto& capabilities = doc["result"]["capabilities"];
    ASSERT_TRUE(capabilities.HasMember("extensions")) << reply.body;
    ASSERT_TRUE(capabilities["extensions"].HasMember(kExtension)) << reply.body;
    EXPECT_TRUE(capabilities["extensions"][kExtension].IsObject());
    EXPECT_FALSE(capabilities.HasMember("tasks")) << reply.body;
}

TEST_F(ModernTasksTest, ADeclaringStartIsAFlatTaskWhoseResultIsInlinedWhenItEnds) {
    const Reply reply = start(R"({"items": 2})", true);
    ASSERT_EQ(reply.status, 200) << reply.body;
    const auto doc = reply.json();
    const auto& created = doc["result"];
    EXPECT_STREQ(created["resultType"].GetString(), "task") << reply.body;
    ASSERT_TRUE(created["taskId"].IsString());
    EXPECT_STREQ(created["status"].GetString(), "working");
    EXPECT_TRUE(created["ttlMs"].IsInt64()) << reply.body;
    EXPECT_TRUE(created["pollIntervalMs"].IsInt64()) << reply.body;
    EXPECT_TRUE(created["createdAt"].IsString());
    EXPECT_TRUE(created["lastUpdatedAt"].IsString());
    for (const char* legacy : {"task", "ttl", "pollInterval", "requestState", "content"}) {
        EXPECT_FALSE(created.HasMember(legacy)) << legacy << " in " << reply.body;
    }
    const std::string id = created["taskId"].GetString();

    const rapidjson::Document done = settled(id);
    EXPECT_STREQ(done["resultType"].GetString(), "complete") << text(done);
    EXPECT_STREQ(done["taskId"].GetString(), id.c_str());
    EXPECT_STREQ(done["status"].GetString(), "completed") << text(done);
    ASSERT_TRUE(done.HasMember("result")) << text(done);
    EXPECT_FALSE(done.HasMember("error"));
    const auto& result = done["result"];
    EXPECT_FALSE(result["isError"].GetBool()) << text(done);
    ASSERT_TRUE(result.HasMember("structuredContent")) << text(done);
    EXPECT_EQ(result["structuredContent"]["items"].Size(), 2U) << text(done);
    EXPECT_FALSE(result.HasMember("_meta") &&
                 result["_meta"].HasMember("io.modelcontextprotocol/related-task"));
}

TEST_F(ModernTasksTest, WithoutTheExtensionStartAnswersTheJobHandle) {
    const Reply reply = start(R"({"items": 1})", false);
    ASSERT_EQ(reply.status, 200) << reply.body;
    const auto doc = reply.json();
    EXPECT_STREQ(doc["result"]["resultType"].GetString(), "complete") << reply.body;
    EXPECT_FALSE(doc["result"].HasMember("taskId")) << reply.body;
    EXPECT_TRUE(doc["result"]["structuredContent"]["job_id"].IsString()) << reply.body;
    // A legacy `task` member asks for nothing in this era.
    const Reply legacy = call(request(3, "tools/call",
                                      R"("name":"report_start","arguments":{"items":1},)"
                                      R"("task":{"ttl":60000})"),
                              "tools/call", "report_start");
    ASSERT_EQ(legacy.status, 200) << legacy.body;
    EXPECT_STREQ(legacy.json()["result"]["resultType"].GetString(), "complete") << legacy.body;
}

TEST_F(ModernTasksTest, AFailedJobCompletesWithAToolErrorNotAProtocolOne) {
    // The extension keeps `failed` for JSON-RPC errors; a job's failure is the tool's.
    const std::string id = created(R"({"items": 3, "fail_after": 1})");
    ASSERT_FALSE(id.empty());
    const rapidjson::Document done = settled(id);
    EXPECT_STREQ(done["status"].GetString(), "completed") << text(done);
    ASSERT_TRUE(done.HasMember("result")) << text(done);
    EXPECT_TRUE(done["result"]["isError"].GetBool()) << text(done);
    EXPECT_FALSE(std::string(done["result"]["content"][0]["text"].GetString()).empty());
    EXPECT_FALSE(done.HasMember("error")) << text(done);
}

TEST_F(ModernTasksTest, CancelAndUpdateAreAcknowledgedLiveOrEnded) {
    const std::string id = created(R"({"items": 1, "delay_ms": 30000})");
    ASSERT_FALSE(id.empty());
    const Reply update = task("update", id, kAlice, R"("inputResponses":{"nobody_asked":{}})");
    ASSERT_EQ(update.status, 200) << update.body;
    EXPECT_STREQ(update.json()["result"]["resultType"].GetString(), "complete") << update.body;

    const Reply cancel = task("cancel", id);
    ASSERT_EQ(cancel.status, 200) << cancel.body;
    const auto ack = cancel.json();
    EXPECT_STREQ(ack["result"]["resultType"].GetString(), "complete") << cancel.body;
    EXPECT_FALSE(ack["result"].HasMember("status")) << cancel.body;
    const rapidjson::Document after = settled(id);
    EXPECT_STREQ(after["status"].GetString(), "cancelled") << text(after);
    EXPECT_FALSE(after.HasMember("result"));
    // An ended task's cancel is acknowledged too, and changes nothing.
    const Reply again = task("cancel", id);
    ASSERT_EQ(again.status, 200) << again.body;
    EXPECT_STREQ(settled(id)["status"].GetString(), "cancelled");
}

TEST_F(ModernTasksTest, TaskMethodsAreRefusedWithTheirErrors) {
    const std::string id = created(R"({"items": 1})");
    ASSERT_FALSE(id.empty());
    // Not declared: -32021 naming the extension it needs.
    const Reply undeclared =
        call(request(5, "tasks/get", R"("taskId":")" + id + "\""), "tasks/get", id);
    expectError(undeclared, 400, -32021, 5);
    const auto refusal = undeclared.json();  // kept: `data` points into it
    const auto& data = refusal["error"]["data"];
    EXPECT_TRUE(data["requiredCapabilities"]["extensions"].HasMember(kExtension))
        << undeclared.body;
    // Not part of the extension: -32601 (404).
    expectError(call(request(6, "tasks/result", R"("taskId":")" + id + "\"", declaring()),
                     "tasks/result", id),
                404, -32601, 6);
    expectError(call(request(7, "tasks/list", "", declaring()), "tasks/list", ""), 404, -32601, 7);
    // Unknown ids, and a missing one.
    expectError(task("get", "job_nope"), 200, -32602, 2);
    expectError(task("update", "job_nope", kAlice, R"("inputResponses":{})"), 200, -32602, 2);
    expectError(task("cancel", "job_nope"), 200, -32602, 2);
    expectError(call(request(8, "tasks/get", "", declaring()), "tasks/get", ""), 200, -32602, 8);
    // Mcp-Name must repeat the taskId.
    expectError(call(request(9, "tasks/get", R"("taskId":")" + id + "\"", declaring()), "tasks/get",
                     "job_other"),
                400, -32020, 9);
    // inputResponses must be an object.
    expectError(task("update", id, kAlice, R"("inputResponses":[1])"), 200, -32602, 2);
}

TEST_F(ModernTasksTest, AnotherAgentsTaskIsNotFound) {
    const std::string id = created(R"({"items": 1, "delay_ms": 30000})");
    ASSERT_FALSE(id.empty());
    expectError(task("get", id, kBob), 200, -32602, 2);
    expectError(task("update", id, kBob, R"("inputResponses":{})"), 200, -32602, 2);
    expectError(task("cancel", id, kBob), 200, -32602, 2);
    // Bob's cancel did nothing.
    const Reply mine = task("get", id);
    ASSERT_EQ(mine.status, 200) << mine.body;
    EXPECT_STREQ(mine.json()["result"]["status"].GetString(), "working") << mine.body;
    EXPECT_EQ(task("cancel", id).status, 200);
}

TEST_F(ModernTasksTest, AListenFollowsTheCallersOwnTasksOnly) {
    const std::string id = created(R"({"items": 1, "delay_ms": 800})");
    const std::string bobs = [&] {
        const Reply reply = start(R"({"items": 1, "delay_ms": 30000})", true, kBob);
        return std::string(reply.json()["result"]["taskId"].GetString());
    }();
    ASSERT_FALSE(id.empty());
    // Without the extension declared: -32021.
    const Reply undeclared =
        call(request(20, "subscriptions/listen", R"("notifications":{"taskIds":[")" + id + "\"]}"),
             "subscriptions/listen", "");
    expectError(undeclared, 400, -32021, 20);
    // Declared: the acknowledgement names alice's task, not bob's nor an unknown one.
    crank::testing::SseReader listen(
        port_, "POST",
        {{"Content-Type", "application/json"},
         {"Accept", crank::testing::kAccept},
         {"MCP-Protocol-Version", "2026-07-28"},
         {"Mcp-Method", "subscriptions/listen"},
         {"Authorization", std::string("Bearer ") + kAlice}},
        request(21, "subscriptions/listen",
                R"("notifications":{"taskIds":[")" + id + R"(",")" + bobs + R"(","job_nope"]})",
                declaring()));
    const auto first = listen.next();
    ASSERT_TRUE(first) << listen.head();
    const std::string ack = first->data;
    EXPECT_NE(ack.find("notifications/subscriptions/acknowledged"), std::string::npos) << ack;
    EXPECT_NE(ack.find(id), std::string::npos) << ack;
    EXPECT_EQ(ack.find(bobs), std::string::npos) << ack;
    EXPECT_EQ(ack.find("job_nope"), std::string::npos) << ack;
    // The task's end arrives as notifications/tasks with the result, tagged with the listen.
    std::string done;
    for (int i = 0; i < 20 && done.find("\"completed\"") == std::string::npos; ++i) {
        const auto event = listen.next();
        if (!event) {
            break;
        }
        done = event->data;
    }
    EXPECT_NE(done.find("notifications/tasks"), std::string::npos) << done;
    EXPECT_NE(done.find("\"completed\""), std::string::npos) << done;
    EXPECT_NE(done.find("\"result\""), std::string::npos) << done;
    EXPECT_NE(done.find("io.modelcontextprotocol/subscriptionId"), std::string::npos) << done;
    // Told once: the watch tick (every second) does not tell the same end again.
    listen.setReceiveTimeout(std::chrono::milliseconds(2500));
    for (int i = 0; i < 5; ++i) {
        const auto again = listen.next();
        if (!again) {
            break;
        }
        EXPECT_EQ(again->data.find(id), std::string::npos) << "told twice: " << again->data;
    }
    EXPECT_EQ(task("cancel", bobs, kBob).status, 200);
}

}  // namespace
