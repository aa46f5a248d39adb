// Host tools as tasks (ToolTasks) without crankd: a task runs on its own thread, waits in
// input_required until every question is answered (partial answers keep it waiting, unknown keys
// are ignored), ends completed, failed or cancelled, belongs to its creator, and is bounded.

#include "mcp/tool_tasks.h"

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace crank::mcp {
namespace {

using namespace std::chrono_literals;

ToolDefinition taskTool(std::string name) {
    ToolDefinition d;
    d.name = std::move(name);
    d.description = "test";
    d.task_support = "required";
    return d;
}

ToolResult text(const std::string& t) {
    ToolResult r;
    r.content_json = R"([{"type":"text","text":")" + t + R"("}])";
    return r;
}

class ToolTasksTest : public ::testing::Test {
protected:
    void SetUp() override {
        registry_.add(
            taskTool("two_questions"), [](std::string_view, ToolCall& call) -> Result<ToolResult> {
                const InputRound* round = call.inputRound();
                if (round == nullptr) {
                    return ToolResult::inputRequired(
                        InputNeed{{InputRequest{"a", "elicitation/create", "{}"},
                                   InputRequest{"b", "elicitation/create", "{}"}},
                                  "state-1"});
                }
                return text(std::string("answered ") + (round->response("a") ? "a" : "-") +
                            (round->response("b") ? "b" : "-") + " " + round->state);
            });
        registry_.add(taskTool("forever"),
                      [](std::string_view, ToolCall& call) -> Result<ToolResult> {
                          for (int i = 0; i < 5000 && !call.cancelled(); ++i) {
                              std::this_thread::sleep_for(2ms);
                          }
                          return text("stopped");
                      });
        registry_.add(taskTool("rpc_error"), [](std::string_view, ToolCall&) -> Result<ToolResult> {
            ToolResult r;
            r.rpc_error_json = R"({"code":-32000,"message":"planned"})";
            return r;
        });
        registry_.add(
            taskTool("asks_forever"), [](std::string_view, ToolCall& call) -> Result<ToolResult> {
                const int next = call.inputRound() != nullptr ? call.inputRound()->round + 1 : 1;
                return ToolResult::inputRequired(InputNeed{
                    {InputRequest{"q" + std::to_string(next), "elicitation/create", "{}"}}, ""});
            });
        ToolDefinition plain = taskTool("plain");
        plain.task_support.clear();
        registry_.add(plain,
                      [](std::string_view, ToolCall&) -> Result<ToolResult> { return text("x"); });
    }

    /// The task's info once `done` holds for it (bounded).
    template <typename Done>
    TaskInfo waitFor(ToolTasks& tasks, const std::string& id, const Caller& who, Done done) {
        TaskInfo last;
        for (int i = 0; i < 500; ++i) {
            auto got = tasks.get(id, who);
            EXPECT_TRUE(got);
            if (!got) {
                return last;
            }
            last = *got;
            if (done(last)) {
                return last;
            }
            std::this_thread::sleep_for(10ms);
        }
        ADD_FAILURE() << "task " << id << " stayed " << toString(last.status);
        return last;
    }

    static bool ended(const TaskInfo& t) { return isTerminal(t.status); }

    FunctionToolRegistry registry_;
    const Caller alice_{"default", "alice"};
    const Caller bob_{"default", "bob"};
};

TEST_F(ToolTasksTest, AnswersMayComeInPartsAndOnlyAskedKeysCount) {
    ToolTasks tasks({}, {{"default", &registry_}});
    auto created = tasks.create("two_questions", "{}", alice_, std::nullopt);
    ASSERT_TRUE(created) << created.error().message;
    const std::string id = created->task_id;
    TaskInfo waiting = waitFor(tasks, id, alice_, [](const TaskInfo& t) {
        return t.status == TaskStatus::input_required;
    });
    EXPECT_NE(waiting.input_requests_json.find("\"a\""), std::string::npos);
    EXPECT_NE(waiting.input_requests_json.find("\"b\""), std::string::npos);
    // One answer, and one for a key nobody asked: still waiting, on "b" only, at once.
    ASSERT_TRUE(tasks.update(id, alice_,
                             {{"a", R"({"action":"accept"})"}, {"zz", R"({"action":"accept"})"}}));
    auto partial = tasks.get(id, alice_);
    ASSERT_TRUE(partial);
    EXPECT_EQ(partial->status, TaskStatus::input_required);
    EXPECT_EQ(partial->input_requests_json.find("\"a\""), std::string::npos);
    EXPECT_NE(partial->input_requests_json.find("\"b\""), std::string::npos);
    // Another agent cannot answer, see or cancel it.
    EXPECT_FALSE(tasks.update(id, bob_, {{"b", "{}"}}));
    EXPECT_FALSE(tasks.get(id, bob_));
    EXPECT_FALSE(tasks.cancel(id, bob_));
    ASSERT_TRUE(tasks.update(id, alice_, {{"b", R"({"action":"accept"})"}}));
    const TaskInfo done = waitFor(tasks, id, alice_, ended);
    EXPECT_EQ(done.status, TaskStatus::completed);
    auto result = tasks.result(id, alice_);
    ASSERT_TRUE(result && *result);
    EXPECT_NE((*result)->content_json.find("answered ab state-1"), std::string::npos)
        << (*result)->content_json;
    // Answers after the end wait for nothing: acknowledged, ignored.
    EXPECT_TRUE(tasks.update(id, alice_, {{"a", "{}"}}));
}

TEST_F(ToolTasksTest, CancelEndsARunningOrWaitingTaskAndAnEndedOneStays) {
    ToolTasks tasks({}, {{"default", &registry_}});
    auto running = tasks.create("forever", "{}", alice_, std::nullopt);
    auto waiting = tasks.create("two_questions", "{}", alice_, std::nullopt);
    ASSERT_TRUE(running && waiting);
    waitFor(tasks, waiting->task_id, alice_,
            [](const TaskInfo& t) { return t.status == TaskStatus::input_required; });
    ASSERT_TRUE(tasks.cancel(running->task_id, alice_));
    ASSERT_TRUE(tasks.cancel(waiting->task_id, alice_));
    EXPECT_EQ(waitFor(tasks, running->task_id, alice_, ended).status, TaskStatus::cancelled);
    EXPECT_EQ(waitFor(tasks, waiting->task_id, alice_, ended).status, TaskStatus::cancelled);
    auto again = tasks.cancel(running->task_id, alice_);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code, ErrorCode::invalid_argument);
}

TEST_F(ToolTasksTest, AJsonRpcErrorFailsTheTaskWithThatError) {
    ToolTasks tasks({}, {{"default", &registry_}});
    auto created = tasks.create("rpc_error", "{}", alice_, std::nullopt);
    ASSERT_TRUE(created);
    const TaskInfo done = waitFor(tasks, created->task_id, alice_, ended);
    EXPECT_EQ(done.status, TaskStatus::failed);
    EXPECT_NE(done.error_json.find("-32000"), std::string::npos) << done.error_json;
}

TEST_F(ToolTasksTest, RoundsAndWaitsAreBounded) {
    ToolTasks::Options options;
    options.max_rounds = 2;
    options.input_wait_ms = 200;
    ToolTasks tasks(options, {{"default", &registry_}});
    auto created = tasks.create("asks_forever", "{}", alice_, std::nullopt);
    ASSERT_TRUE(created);
    for (int round = 1; round <= 2; ++round) {
        const std::string key = "q" + std::to_string(round);
        waitFor(tasks, created->task_id, alice_, [&](const TaskInfo& t) {
            return t.input_requests_json.find(key) != std::string::npos;
        });
        ASSERT_TRUE(tasks.update(created->task_id, alice_, {{key, "{}"}}));
    }
    const TaskInfo done = waitFor(tasks, created->task_id, alice_, ended);
    EXPECT_EQ(done.status, TaskStatus::failed);
    EXPECT_NE(done.error_json.find("more than 2 times"), std::string::npos) << done.error_json;
    // Unanswered questions end the task after input_wait_ms.
    auto idle = tasks.create("two_questions", "{}", alice_, std::nullopt);
    ASSERT_TRUE(idle);
    const TaskInfo gaveUp = waitFor(tasks, idle->task_id, alice_, ended);
    EXPECT_EQ(gaveUp.status, TaskStatus::failed);
    EXPECT_NE(gaveUp.error_json.find("not answered within 200 ms"), std::string::npos);
}

TEST_F(ToolTasksTest, TasksAreBoundedPerAgentAndOnlyTaskToolsRun) {
    ToolTasks::Options options;
    options.max_tasks_per_agent = 2;
    ToolTasks tasks(options, {{"default", &registry_}});
    ASSERT_TRUE(tasks.create("forever", "{}", alice_, std::nullopt));
    ASSERT_TRUE(tasks.create("forever", "{}", alice_, std::nullopt));
    auto third = tasks.create("forever", "{}", alice_, std::nullopt);
    ASSERT_FALSE(third);
    EXPECT_EQ(third.error().code, ErrorCode::unavailable);
    EXPECT_NE(third.error().message.find("2 per agent"), std::string::npos);
    EXPECT_TRUE(tasks.create("forever", "{}", bob_, std::nullopt));  // bob has his own share
    auto plain = tasks.create("plain", "{}", alice_, std::nullopt);
    ASSERT_FALSE(plain);
    EXPECT_EQ(plain.error().code, ErrorCode::not_found);
    auto elsewhere = tasks.create("forever", "{}", Caller{"other", "alice"}, std::nullopt);
    ASSERT_FALSE(elsewhere);
    EXPECT_EQ(elsewhere.error().code, ErrorCode::not_found);
    // The destructor cancels the running ones and joins their threads.
}

TEST(TaskBackendsTest, CreatesInTheFirstThatRunsTheToolAndFindsTasksWhereTheyAre) {
    FunctionToolRegistry first;
    FunctionToolRegistry second;
    second.add(taskTool("only_second"),
               [](std::string_view, ToolCall&) -> Result<ToolResult> { return text("2"); });
    ToolTasks a({}, {{"default", &first}});
    ToolTasks b({}, {{"default", &second}});
    TaskBackends both({&a, nullptr, &b});
    const Caller alice{"default", "alice"};
    auto created = both.create("only_second", "{}", alice, std::nullopt);
    ASSERT_TRUE(created) << created.error().message;
    EXPECT_TRUE(both.get(created->task_id, alice));
    EXPECT_TRUE(b.get(created->task_id, alice));
    EXPECT_FALSE(a.get(created->task_id, alice));
    EXPECT_FALSE(both.get("task_nope", alice));
    EXPECT_FALSE(both.update("task_nope", alice, {}));
    EXPECT_FALSE(both.create("missing", "{}", alice, std::nullopt));
}

}  // namespace
}  // namespace crank::mcp
