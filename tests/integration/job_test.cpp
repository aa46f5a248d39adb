// Execution mode `async_job` through the real crankd with the synthetic fixture plugin: the
// _start/_status/_result/_cancel tools, MCP Tasks (tasks/get, tasks/result, tasks/list,
// tasks/cancel) over raw HTTP, per-agent limits, isolation between agents, per-workspace
// endpoints, the cancel/completion race, and the audit trail.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "crankd_suite.h"
#include "mcp_http_client.h"
#include "store/open_store.h"
#include "test_json.h"

namespace {

using crank::testing::CrankdSuite;
using crank::testing::McpClient;
using crank::testing::Reply;
using namespace std::chrono_literals;

constexpr const char* kInputSchema = R"({"type": "object", "additionalProperties": false,
    "properties": {"items": {"type": "integer", "minimum": 0, "maximum": 1000},
                   "delay_ms": {"type": "integer"}, "fail_after": {"type": "integer"}}})";

std::string jobOperation(const std::string& name, const std::string& extra = "") {
    return R"({"name": ")" + name + R"(", "description": "a synthetic job",
        "protocol": "synthetic", "input_schema": )" +
           std::string(kInputSchema) +
           R"(, "config": {"items": "{{items}}", "delay_ms": "{{delay_ms}}",
                          "fail_after_items": "{{fail_after}}", "item_bytes": 40},
           "execution": {"mode": "async_job", "upstream_timeout_ms": 60000, "max_items": 1000,
                         "max_bytes": 1048576, "max_result_bytes": 1048576})" +
           extra + "}";
}

std::string text(const rapidjson::Value& v) {
    return crank::testing::jsonText(v);
}

/// The JSON-RPC message in an answer that is either JSON or an SSE stream (its last data line).
rapidjson::Document message(const Reply& reply) {
    std::string json = reply.body;
    if (reply.header("content-type").find("text/event-stream") != std::string::npos) {
        json.clear();
        std::size_t at = 0;
        while ((at = reply.body.find("data: ", at)) != std::string::npos) {
            const std::size_t end = reply.body.find('\n', at);
            const std::string data = reply.body.substr(at + 6, end - at - 6);
            if (!data.empty()) {
                json = data;
            }
            at = end;
        }
    }
    rapidjson::Document doc;
    doc.Parse(json.c_str());
    if (doc.HasParseError()) {
        doc.SetObject();
    }
    return doc;
}

class JobTest : public CrankdSuite<JobTest> {
protected:
    static void SetUpTestSuite() {
        startCrankd(R"("auth": {"mode": "api_key",
              "workspaces": [{"id": "team"}],
              "agents": [
                {"id": "alice", "api_key": {"env": "KEY_ALICE"}},
                {"id": "bob", "api_key": {"env": "KEY_BOB"}},
                {"id": "carol", "workspace": "team", "api_key": {"env": "KEY_CAROL"},
                 "limits": {"max_jobs": 2}}]},
            "operations": [)" +
                        jobOperation("report") + "," + jobOperation("team_report", R"(,
                            "workspace": "team")") +
                        "]",
                    {{"KEY_ALICE", "alice-key-0123456789"},
                     {"KEY_BOB", "bob-key-0123456789"},
                     {"KEY_CAROL", "carol-key-0123456789"}});
    }

    void SetUp() override {
        ASSERT_NE(port_, 0);
        alice_.emplace(port_, "alice-key-0123456789");
        ASSERT_TRUE(alice_->open());
    }

    static rapidjson::Document structured(const rapidjson::Document& result) {
        rapidjson::Document out;
        if (result.HasMember("structuredContent")) {
            out.CopyFrom(result["structuredContent"], out.GetAllocator());
        } else {
            out.SetObject();
        }
        return out;
    }

    /// structuredContent of a call that must succeed.
    static rapidjson::Document ok(const McpClient& client, const std::string& tool,
                                  const std::string& arguments) {
        const rapidjson::Document result = client.callTool(tool, arguments);
        EXPECT_TRUE(result.HasMember("isError") && !result["isError"].GetBool())
            << tool << " " << arguments << ": " << text(result);
        return structured(result);
    }

    /// The text of a call that must fail.
    static std::string failure(const McpClient& client, const std::string& tool,
                               const std::string& arguments) {
        const rapidjson::Document result = client.callTool(tool, arguments);
        EXPECT_TRUE(result.HasMember("isError") && result["isError"].GetBool()) << text(result);
        return result.HasMember("content") ? result["content"][0]["text"].GetString() : "";
    }

    static std::string start(const McpClient& client, const std::string& op,
                             const std::string& input) {
        const auto r = ok(client, op + "_start", input);
        EXPECT_TRUE(r.HasMember("job_id")) << text(r);
        return r.HasMember("job_id") ? r["job_id"].GetString() : "";
    }

    /// Polls _status until the job is terminal (bounded); the last status document.
    static rapidjson::Document waitTerminal(const McpClient& client, const std::string& op,
                                            const std::string& id) {
        rapidjson::Document status;
        for (int i = 0; i < 400; ++i) {
            status = ok(client, op + "_status", R"({"job_id":")" + id + R"("})");
            const std::string s = status.HasMember("status") ? status["status"].GetString() : "";
            if (s != "queued" && s != "running") {
                return status;
            }
            std::this_thread::sleep_for(50ms);
        }
        ADD_FAILURE() << "job " << id << " did not end: " << text(status);
        return status;
    }

    std::optional<McpClient> alice_;
};

TEST_F(JobTest, StartReturnsAtOnceAndTheResultIsThereWhenTheJobEnds) {
    const auto started = ok(*alice_, "report_start", R"({"items": 3, "delay_ms": 300})");
    ASSERT_TRUE(started.HasMember("job_id"));
    const std::string id = started["job_id"].GetString();
    EXPECT_EQ(id.rfind("job_", 0), 0U);
    EXPECT_STREQ(started["status"].GetString(), "queued");
    EXPECT_STREQ(started["status_tool"].GetString(), "report_status");
    EXPECT_TRUE(started.HasMember("expires_at"));

    // Not finished yet: the result says so, and it is not an error.
    const auto early = ok(*alice_, "report_result", R"({"job_id":")" + id + R"("})");
    EXPECT_FALSE(early["ready"].GetBool()) << text(early);

    const auto status = waitTerminal(*alice_, "report", id);
    EXPECT_STREQ(status["status"].GetString(), "succeeded") << text(status);
    EXPECT_TRUE(status["result_ready"].GetBool());
    EXPECT_TRUE(status["finished_at"].IsString());

    const auto result = ok(*alice_, "report_result", R"({"job_id":")" + id + R"("})");
    ASSERT_TRUE(result["ready"].GetBool()) << text(result);
    ASSERT_TRUE(result["result"].IsObject()) << text(result);
    // The synthetic unary response: {"items": [3 items], ...}.
    ASSERT_TRUE(result["result"]["items"].IsArray()) << text(result);
    EXPECT_EQ(result["result"]["items"].Size(), 3U);
    // Asking again gives the same result.
    EXPECT_EQ(text(ok(*alice_, "report_result", R"({"job_id":")" + id + R"("})")), text(result));
}

TEST_F(JobTest, AFailedJobSaysWhyInStatusAndResult) {
    const std::string id = start(*alice_, "report", R"({"items": 3, "fail_after": 1})");
    const auto status = waitTerminal(*alice_, "report", id);
    EXPECT_STREQ(status["status"].GetString(), "failed");
    EXPECT_NE(std::string(status["error"].GetString()).find("synthetic upstream failure"),
              std::string::npos)
        << text(status);
    const std::string why = failure(*alice_, "report_result", R"({"job_id":")" + id + R"("})");
    EXPECT_NE(why.find("synthetic upstream failure after 1 items"), std::string::npos) << why;
}

TEST_F(JobTest, InvalidInputIsRefusedAtStartNamingThePath) {
    const std::string why = failure(*alice_, "report_start", R"({"items": "many"})");
    EXPECT_NE(why.find("input.items"), std::string::npos) << why;
    EXPECT_NE(failure(*alice_, "report_status", R"({})").find("job_id is required"),
              std::string::npos);
    EXPECT_NE(failure(*alice_, "report_status", R"({"job_id":"job_nope"})").find("no job"),
              std::string::npos);
}

TEST_F(JobTest, CancelIsExplicitAndIdempotent) {
    const std::string id = start(*alice_, "report", R"({"items": 1, "delay_ms": 30000})");
    // Wait until it runs (the worker picked it up).
    for (int i = 0; i < 100; ++i) {
        const auto s = ok(*alice_, "report_status", R"({"job_id":")" + id + R"("})");
        if (std::string(s["status"].GetString()) == "running") {
            break;
        }
        std::this_thread::sleep_for(20ms);
    }
    const auto t0 = std::chrono::steady_clock::now();
    const auto cancelled = ok(*alice_, "report_cancel", R"({"job_id":")" + id + R"("})");
    EXPECT_TRUE(cancelled["cancelled"].GetBool()) << text(cancelled);
    EXPECT_STREQ(cancelled["status"].GetString(), "cancelled");
    // The status is cancelled as soon as the cancel answered.
    const auto status = ok(*alice_, "report_status", R"({"job_id":")" + id + R"("})");
    EXPECT_STREQ(status["status"].GetString(), "cancelled");
    const auto again = ok(*alice_, "report_cancel", R"({"job_id":")" + id + R"("})");
    EXPECT_TRUE(again["cancelled"].GetBool());
    EXPECT_STREQ(again["status"].GetString(), "cancelled");
    const std::string why = failure(*alice_, "report_result", R"({"job_id":")" + id + R"("})");
    EXPECT_NE(why.find("cancelled"), std::string::npos) << why;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
}

TEST_F(JobTest, CancellingAFinishedJobChangesNothing) {
    const std::string id = start(*alice_, "report", R"({"items": 1})");
    EXPECT_STREQ(waitTerminal(*alice_, "report", id)["status"].GetString(), "succeeded");
    const auto r = ok(*alice_, "report_cancel", R"({"job_id":")" + id + R"("})");
    EXPECT_FALSE(r["cancelled"].GetBool());
    EXPECT_STREQ(r["status"].GetString(), "succeeded");
    EXPECT_TRUE(ok(*alice_, "report_result", R"({"job_id":")" + id + R"("})")["ready"].GetBool());
}

TEST_F(JobTest, CancelRacingCompletionNeverLosesAnUpdate) {
    // Jobs that end within a few ms of the cancel: whichever wins, the answer of the cancel and
    // the final status agree, and a succeeded job keeps its result.
    int cancelledCount = 0;
    int succeededCount = 0;
    for (int i = 0; i < 20; ++i) {
        const std::string id =
            start(*alice_, "report", R"({"items": 1, "delay_ms": )" + std::to_string(i % 5) + "}");
        const auto r = ok(*alice_, "report_cancel", R"({"job_id":")" + id + R"("})");
        const auto status = waitTerminal(*alice_, "report", id);
        const std::string final = status["status"].GetString();
        if (r["cancelled"].GetBool()) {
            EXPECT_EQ(final, "cancelled") << text(r);
            ++cancelledCount;
        } else {
            EXPECT_EQ(final, "succeeded") << text(r);
            EXPECT_TRUE(status["result_ready"].GetBool());
            ++succeededCount;
        }
    }
    EXPECT_EQ(cancelledCount + succeededCount, 20);
}

TEST_F(JobTest, AnotherAgentsJobIsNotFound) {
    const std::string id = start(*alice_, "report", R"({"items": 1})");
    McpClient bob(port_, "bob-key-0123456789");
    ASSERT_TRUE(bob.open());
    for (const char* tool : {"report_status", "report_result", "report_cancel"}) {
        const std::string why = failure(bob, tool, R"({"job_id":")" + id + R"("})");
        EXPECT_NE(why.find("no job"), std::string::npos) << tool << ": " << why;
    }
    // And it is untouched for its owner.
    EXPECT_STREQ(waitTerminal(*alice_, "report", id)["status"].GetString(), "succeeded");
}

TEST_F(JobTest, AWorkspacePublishesItsOperationsOnItsOwnEndpoint) {
    // alice (workspace default) sees report_*, not team_report_*.
    const Reply list =
        alice_->post(R"({"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}})");
    EXPECT_NE(list.body.find("\"report_start\""), std::string::npos);
    EXPECT_EQ(list.body.find("team_report"), std::string::npos);
    // carol (workspace team) on /mcp and on /w/team/mcp: the team's operations.
    for (const char* path : {"/mcp", "/w/team/mcp"}) {
        McpClient carol(port_, "carol-key-0123456789", path);
        ASSERT_TRUE(carol.open()) << path;
        const Reply teamList =
            carol.post(R"({"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}})");
        EXPECT_NE(teamList.body.find("\"team_report_start\""), std::string::npos) << path;
        EXPECT_EQ(teamList.body.find("\"report_start\""), std::string::npos) << path;
    }
    // alice at the team's endpoint: there is none for her.
    McpClient intruder(port_, "alice-key-0123456789", "/w/team/mcp");
    const Reply refused = intruder.post(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
        R"("2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
    EXPECT_EQ(refused.status, 404) << refused.body;
}

TEST_F(JobTest, AnAgentsJobLimitIsEnforcedAndNamed) {
    McpClient carol(port_, "carol-key-0123456789");
    ASSERT_TRUE(carol.open());
    const std::string a = start(carol, "team_report", R"({"items": 1, "delay_ms": 30000})");
    const std::string b = start(carol, "team_report", R"({"items": 1, "delay_ms": 30000})");
    const std::string why =
        failure(carol, "team_report_start", R"({"items": 1, "delay_ms": 30000})");
    EXPECT_NE(why.find("auth.agents[].limits.max_jobs"), std::string::npos) << why;
    EXPECT_NE(why.find("carol"), std::string::npos) << why;
    // A cancelled job frees its place.
    ok(carol, "team_report_cancel", R"({"job_id":")" + a + R"("})");
    const std::string c = start(carol, "team_report", R"({"items": 1})");
    EXPECT_FALSE(c.empty());
    ok(carol, "team_report_cancel", R"({"job_id":")" + b + R"("})");
    EXPECT_STREQ(waitTerminal(carol, "team_report", c)["status"].GetString(), "succeeded");
}

TEST_F(JobTest, TasksRunTheSameJobsOverMcp) {
    // initialize (2025-11-25) declares tasks; tools/list marks the _start tool.
    McpClient client(port_, "alice-key-0123456789");
    const Reply init =
        client.post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
                    R"("2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
    const auto initDoc = message(init);
    ASSERT_TRUE(initDoc.HasMember("result")) << init.body;
    EXPECT_TRUE(initDoc["result"]["capabilities"]["tasks"]["requests"]["tools"].HasMember("call"))
        << init.body;
    EXPECT_TRUE(initDoc["result"]["capabilities"]["tasks"].HasMember("list"));
    ASSERT_TRUE(client.open());
    const auto tools =
        message(client.post(R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}})"));
    bool marked = false;
    for (const auto& tool : tools["result"]["tools"].GetArray()) {
        if (std::string(tool["name"].GetString()) == "report_start") {
            marked = std::string(tool["execution"]["taskSupport"].GetString()) == "optional";
        } else {
            EXPECT_FALSE(tool.HasMember("execution")) << tool["name"].GetString();
        }
    }
    EXPECT_TRUE(marked) << text(tools);

    // tools/call with params.task: a CreateTaskResult at once.
    const auto created = message(client.post(
        R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"report_start",)"
        R"("arguments":{"items":2,"delay_ms":400},"task":{"ttl":120000}}})"));
    ASSERT_TRUE(created.HasMember("result")) << text(created);
    const auto& task = created["result"]["task"];
    const std::string taskId = task["taskId"].GetString();
    EXPECT_STREQ(task["status"].GetString(), "working");
    EXPECT_EQ(task["ttl"].GetInt64(), 120000);
    EXPECT_TRUE(task["createdAt"].IsString());
    EXPECT_TRUE(task["pollInterval"].IsInt64());

    const auto got = message(client.post(
        R"({"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":")" + taskId + "\"}}"));
    EXPECT_STREQ(got["result"]["taskId"].GetString(), taskId.c_str()) << text(got);

    // tasks/result blocks until the end, then returns the operation's own CallToolResult.
    const auto t0 = std::chrono::steady_clock::now();
    const Reply waited = client.post(R"({"jsonrpc":"2.0","id":5,"method":"tasks/result",)"
                                     R"("params":{"taskId":")" +
                                     taskId + "\"}}");
    const auto result = message(waited);
    ASSERT_TRUE(result.HasMember("result")) << waited.body;
    EXPECT_EQ(result["id"].GetInt(), 5);
    EXPECT_FALSE(result["result"]["isError"].GetBool());
    EXPECT_EQ(result["result"]["structuredContent"]["items"].Size(), 2U) << text(result);
    EXPECT_STREQ(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"].GetString(),
        taskId.c_str());
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);

    // The same job is visible through the job tools.
    const auto status = ok(client, "report_status", R"({"job_id":")" + taskId + R"("})");
    EXPECT_STREQ(status["status"].GetString(), "succeeded");

    const auto listed =
        message(client.post(R"({"jsonrpc":"2.0","id":6,"method":"tasks/list","params":{}})"));
    bool found = false;
    for (const auto& t : listed["result"]["tasks"].GetArray()) {
        found = found || std::string(t["taskId"].GetString()) == taskId;
        if (std::string(t["taskId"].GetString()) == taskId) {
            EXPECT_STREQ(t["status"].GetString(), "completed");
        }
    }
    EXPECT_TRUE(found) << text(listed);

    // Cancelling a terminal task is -32602; so is an unknown id.
    const auto terminal = message(
        client.post(R"({"jsonrpc":"2.0","id":7,"method":"tasks/cancel","params":{"taskId":")" +
                    taskId + "\"}}"));
    EXPECT_EQ(terminal["error"]["code"].GetInt(), -32602) << text(terminal);
    EXPECT_NE(std::string(terminal["error"]["message"].GetString()).find("terminal status"),
              std::string::npos);
    const auto unknown = message(client.post(
        R"({"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":"job_nope"}})"));
    EXPECT_EQ(unknown["error"]["code"].GetInt(), -32602);
}

TEST_F(JobTest, TasksCancelMovesALiveTaskToCancelledBeforeAnswering) {
    const auto created = message(alice_->post(
        R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"report_start",)"
        R"("arguments":{"items":1,"delay_ms":30000},"task":{}}})"));
    const std::string taskId = created["result"]["task"]["taskId"].GetString();
    const auto cancelled = message(
        alice_->post(R"({"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{"taskId":")" +
                     taskId + "\"}}"));
    EXPECT_STREQ(cancelled["result"]["status"].GetString(), "cancelled") << text(cancelled);
    const auto got = message(alice_->post(
        R"({"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":")" + taskId + "\"}}"));
    EXPECT_STREQ(got["result"]["status"].GetString(), "cancelled");
    // Another agent cannot see it.
    McpClient bob(port_, "bob-key-0123456789");
    ASSERT_TRUE(bob.open());
    const auto hidden = message(bob.post(
        R"({"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":")" + taskId + "\"}}"));
    EXPECT_EQ(hidden["error"]["code"].GetInt(), -32602);
    // A tool that is not a job cannot run as a task.
    const auto refused = message(alice_->post(
        R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"report_status",)"
        R"("arguments":{"job_id":"x"},"task":{}}})"));
    EXPECT_EQ(refused["error"]["code"].GetInt(), -32601) << text(refused);
}

TEST_F(JobTest, HostileTaskParamsGetNamedErrors) {
    const auto rpc = [&](const std::string& method, const std::string& params) {
        return message(alice_->post(R"({"jsonrpc":"2.0","id":9,"method":")" + method +
                                    R"(","params":)" + params + "}"));
    };
    const auto expectError = [](const rapidjson::Document& doc, int code, const char* needle) {
        ASSERT_TRUE(doc.HasMember("error")) << text(doc);
        EXPECT_EQ(doc["error"]["code"].GetInt(), code) << text(doc);
        EXPECT_NE(std::string(doc["error"]["message"].GetString()).find(needle), std::string::npos)
            << text(doc);
    };
    expectError(rpc("tools/call", R"({"name":"report_start","arguments":{},"task":"now"})"), -32602,
                "params.task must be an object");
    expectError(rpc("tools/call", R"({"name":"report_start","arguments":{},"task":{"ttl":-5}})"),
                -32602, "params.task.ttl");
    expectError(rpc("tools/call", R"({"name":"report_start","arguments":{"items":"x"},"task":{}})"),
                -32602, "input.items");
    expectError(rpc("tools/call", R"({"name":"nope_start","arguments":{},"task":{}})"), -32602,
                "unknown tool");
    expectError(rpc("tasks/get", R"({})"), -32602, "params.taskId is required");
    expectError(rpc("tasks/get", R"({"taskId":42})"), -32602, "params.taskId is required");
    expectError(rpc("tasks/get", R"({"taskId":")" + std::string(100'000, 'j') + R"("})"), -32602,
                "Task not found");
    expectError(rpc("tasks/cancel", R"({"taskId":"job_\u0000"})"), -32602, "Task not found");
    expectError(rpc("tasks/list", R"({"cursor":"zz"})"), -32602, "invalid cursor");
    expectError(rpc("tasks/list", R"({"cursor":"offffffffffffffffffffff"})"), -32602,
                "invalid cursor");
    // A job id that is not a string is refused by the tool with the reason.
    EXPECT_NE(failure(*alice_, "report_status", R"({"job_id": 7})").find("job_id is required"),
              std::string::npos);
    // crankd is still serving.
    EXPECT_FALSE(start(*alice_, "report", R"({"items": 1})").empty());
}

TEST_F(JobTest, EveryCallIsAudited) {
    const std::string id = start(*alice_, "report", R"({"items": 1})");
    waitTerminal(*alice_, "report", id);
    ok(*alice_, "report_result", R"({"job_id":")" + id + R"("})");
    ok(*alice_, "report_cancel", R"({"job_id":")" + id + R"("})");
    McpClient bob(port_, "bob-key-0123456789");
    ASSERT_TRUE(bob.open());
    failure(bob, "report_status", R"({"job_id":")" + id + R"("})");

    crank::store::StoreOptions options;
    options.path = storePath();
    auto store = crank::store::openStore(options);
    ASSERT_TRUE(static_cast<bool>(store)) << store.error().message;
    crank::store::AuditQuery q;
    q.operation_id = "report";
    q.limit = 1000;
    std::vector<std::string> seen;
    // The trail is written behind the calls, in their order: bob's read is the last one.
    EXPECT_TRUE(crank::testing::eventually(
        [&] {
            auto events = (*store)->queryAudit(q);
            EXPECT_TRUE(static_cast<bool>(events));
            seen.clear();
            for (const auto& e : events ? *events : std::vector<crank::store::AuditEvent>{}) {
                if (e.detail_json.find(id) != std::string::npos) {
                    seen.push_back(e.action + ":" + e.agent_id + ":" + e.outcome);
                }
            }
            return std::find(seen.begin(), seen.end(), "job.status:bob:not_found") != seen.end();
        },
        10s));
    for (const char* expected : {"job.start:alice:ok", "job.status:alice:ok", "job.result:alice:ok",
                                 "job.cancel:alice:ok", "job.status:bob:not_found"}) {
        EXPECT_NE(std::find(seen.begin(), seen.end(), expected), seen.end()) << expected;
    }
}

}  // namespace
