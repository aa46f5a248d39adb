// MethodTable: tools/list, tools/call and catalog methods as both protocol eras answer them, with
// a RequestScope of the test's own (no transport, no crankd).
#include "mcp/method_table.h"

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "util/json_string.h"

namespace crank::mcp {
namespace {

/// The ToolCall the scope hands out: cancellation the test controls, calls counted.
class TestCall final : public ToolCall {
public:
    TestCall(std::shared_ptr<std::atomic<bool>> cancelled, std::atomic<int>& open,
             std::optional<RequestId> progress)
        : cancelled_(std::move(cancelled)), open_(open), progress_(std::move(progress)) {
        ++open_;
    }
    ~TestCall() override { --open_; }
    TestCall(const TestCall&) = delete;
    TestCall& operator=(const TestCall&) = delete;
    bool cancelled() const override { return cancelled_->load(); }
    bool progressRequested() const override { return progress_.has_value(); }
    void progress(double, std::optional<double>, std::string_view) override {}
    void log(LogLevel, std::string_view, std::string_view) override {}
    Caller caller() const override { return {"ws", "alice"}; }

private:
    std::shared_ptr<std::atomic<bool>> cancelled_;
    std::atomic<int>& open_;
    std::optional<RequestId> progress_;
};

class TestScope final : public RequestScope {
public:
    explicit TestScope(Who who) : who_(std::move(who)) {}
    const Who& who() const override { return who_; }
    std::unique_ptr<ToolCall> beginCall(const RequestId& id,
                                        std::optional<RequestId> progress_token) override {
        began.push_back(id);
        return std::make_unique<TestCall>(cancelled, open, std::move(progress_token));
    }
    std::string sessionId() const override { return "session-1"; }
    bool showsTaskSupport() const override { return tasks; }
    /// Answers every question with {"answer":"<key>"} (the tool runs again), or with `stop`.
    InputStep inputRequired(const InputNeed& need, ToolCall& call, std::string_view /*tool*/,
                            std::chrono::milliseconds /*wait*/) override {
        needs.push_back(need);
        InputStep step;
        if (stop) {
            step.answer = *stop;
            return step;
        }
        step.next.round = (call.inputRound() != nullptr ? call.inputRound()->round : 0) + 1;
        step.next.state = need.state;
        for (const InputRequest& request : need.requests) {
            step.next.responses[request.key] = R"({"answer":")" + request.key + R"("})";
        }
        return step;
    }

    std::vector<InputNeed> needs;
    std::optional<MethodAnswer> stop;
    std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
    std::atomic<int> open{0};
    std::vector<RequestId> began;
    bool tasks = false;

private:
    Who who_;
};

/// A catalog that answers resources/list and refuses prompts/get with an error object.
class TestCatalog final : public Catalog {
public:
    CatalogCapabilities capabilities() const override {
        CatalogCapabilities c;
        c.resources = true;
        return c;
    }
    std::optional<CatalogReply> handle(std::string_view method, std::string_view params_json,
                                       ToolCall& /*call*/, const std::string& session_id) override {
        lastSession = session_id;
        if (method == "resources/list") {
            return CatalogReply{R"({"resources":[],"params":)" +
                                    std::string(params_json.empty() ? "{}" : params_json) + "}",
                                {}};
        }
        if (method == "prompts/get") {
            return CatalogReply{{}, R"({"code":-32602,"message":"no such prompt"})"};
        }
        return std::nullopt;
    }
    void subscribe(Listener) override {}
    std::string lastSession;
};

ToolDefinition named(std::string name) {
    ToolDefinition d;
    d.name = std::move(name);
    return d;
}

JsonRpcMessage request(std::int64_t id, std::string method, std::string params = {}) {
    JsonRpcMessage m;
    m.kind = JsonRpcKind::request;
    m.id = RequestId(id);
    m.method = std::move(method);
    m.params_json = std::move(params);
    return m;
}

rapidjson::Document parsed(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.c_str());
    EXPECT_FALSE(doc.HasParseError()) << json;
    return doc;
}

class MethodTableTest : public ::testing::Test {
protected:
    MethodTableTest() {
        for (const char* name : {"a", "b", "c", "d", "e"}) {
            ToolDefinition d;
            d.name = name;
            d.description = std::string("tool ") + name;
            d.task_support = name == std::string("c") ? "optional" : "";
            registry.add(d, [name](std::string_view args, ToolCall&) -> Result<ToolResult> {
                ToolResult r;
                r.content_json = R"([{"type":"text","text":)" +
                                 jsonString(std::string(name) + " " + std::string(args)) + "}]";
                return r;
            });
        }
        config.tools_page_size = 2;
        who.agent = "alice";
        who.workspace = "ws";
        who.tools = &registry;
    }

    MethodTable table(std::int64_t node_calls = -1) {
        return MethodTable(
            config, std::make_shared<CallerQuotas>(std::map<std::string, CallerQuotas::Bounds>{},
                                                   std::map<std::string, CallerQuotas::Bounds>{},
                                                   CallerQuotas::Bounds{node_calls, -1, -1}));
    }

    config::McpConfig config;
    FunctionToolRegistry registry;
    Who who;
};

TEST_F(MethodTableTest, ToolsListPagesWithAnOpaqueCursorUntilTheLastPage) {
    TestScope scope(who);
    const MethodTable methods = table();
    std::vector<std::string> names;
    std::string cursor;
    for (int page = 0; page < 10; ++page) {
        const auto answer = methods.toolsList(
            request(1, "tools/list", cursor.empty() ? "" : R"({"cursor":")" + cursor + "\"}"),
            scope);
        ASSERT_TRUE(answer.isResult()) << answer.json;
        const auto doc = parsed(answer.json);
        for (const auto& tool : doc["tools"].GetArray()) {
            names.emplace_back(tool["name"].GetString());
            EXPECT_FALSE(tool.HasMember("execution"));  // not shown unless the scope says so
        }
        if (!doc.HasMember("nextCursor")) {
            break;
        }
        cursor = doc["nextCursor"].GetString();
    }
    EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
}

TEST_F(MethodTableTest, ToolsListShowsTaskSupportOnlyWhenTheScopeOffersTasks) {
    TestScope scope(who);
    scope.tasks = true;
    const auto answer = table().toolsList(request(1, "tools/list", R"({"cursor":"c2"})"), scope);
    const auto doc = parsed(answer.json);
    ASSERT_EQ(doc["tools"].Size(), 2U);
    EXPECT_STREQ(doc["tools"][0]["execution"]["taskSupport"].GetString(), "optional");
    EXPECT_FALSE(doc["tools"][1].HasMember("execution"));
}

TEST_F(MethodTableTest, AForgedOrMalformedCursorIsInvalidParams) {
    TestScope scope(who);
    const MethodTable methods = table();
    for (const char* params :
         {R"({"cursor":"zz"})", R"({"cursor":"c"})", R"({"cursor":"c99"})", R"({"cursor":"c-1"})",
          R"({"cursor":7})", R"({"cursor":"c2x"})", R"([1])"}) {
        const auto answer = methods.toolsList(request(1, "tools/list", params), scope);
        ASSERT_TRUE(answer.isError()) << params;
        EXPECT_EQ(parsed(answer.json)["code"].GetInt(), kInvalidParams) << params;
    }
}

TEST_F(MethodTableTest, ToolsCallRunsTheToolWithItsArgumentsAndEndsTheCall) {
    TestScope scope(who);
    const auto answer =
        table().answer(request(7, "tools/call", R"({"name":"b","arguments":{"x":1.50}})"), scope);
    ASSERT_TRUE(answer && answer->isResult()) << (answer ? answer->json : "none");
    EXPECT_STREQ(parsed(answer->json)["content"][0]["text"].GetString(), R"(b {"x":1.50})");
    ASSERT_EQ(scope.began.size(), 1U);
    EXPECT_EQ(scope.began[0], RequestId(std::int64_t{7}));
    EXPECT_EQ(scope.open.load(), 0);  // the running side ended with the call
}

TEST_F(MethodTableTest, ToolsCallParamsAreCheckedNamingTheMember) {
    for (const auto& [params, member] : std::vector<std::pair<std::string, std::string>>{
             {"[]", "params must be an object"},
             {"{}", "params.name is required"},
             {R"({"name":""})", "params.name is required"},
             {R"({"name":3})", "params.name is required"},
             {R"({"name":"a","arguments":[1]})", "params.arguments must be an object"},
             {R"({"name":"a","arguments":"x"})", "params.arguments must be an object"},
         }) {
        TestScope scope(who);
        const auto answer = table().answer(request(1, "tools/call", params), scope);
        ASSERT_TRUE(answer && answer->isError()) << params;
        EXPECT_NE(answer->json.find(member), std::string::npos) << answer->json;
        EXPECT_TRUE(scope.began.empty()) << params;
    }
    const auto task = parseToolCallParams(R"({"name":"a","task":{"ttl":5}})");
    ASSERT_TRUE(task);
    EXPECT_EQ(task->task_json, R"({"ttl":5})");
    EXPECT_EQ(task->arguments_json, "{}");
}

TEST_F(MethodTableTest, AnUnknownToolIsInvalidParams) {
    TestScope scope(who);
    const auto answer = table().answer(request(1, "tools/call", R"({"name":"nope"})"), scope);
    ASSERT_TRUE(answer && answer->isError());
    EXPECT_EQ(parsed(answer->json)["code"].GetInt(), kInvalidParams);
}

TEST_F(MethodTableTest, ACallCancelledWhileItRanIsNotAnswered) {
    TestScope scope(who);
    registry.add(named("slow"), [&](std::string_view, ToolCall&) {
        scope.cancelled->store(true);  // notifications/cancelled arrives while it runs
        return Result<ToolResult>(ToolResult{});
    });
    const auto answer = table().answer(request(1, "tools/call", R"({"name":"slow"})"), scope);
    ASSERT_TRUE(answer);
    EXPECT_TRUE(answer->isNone());
}

TEST_F(MethodTableTest, AToolThatThrowsIsAnInternalErrorAndTheCallStillEnds) {
    TestScope scope(who);
    registry.add(named("boom"), [](std::string_view, ToolCall&) -> Result<ToolResult> {
        throw std::runtime_error("kaput");
    });
    const auto answer = table().answer(request(1, "tools/call", R"({"name":"boom"})"), scope);
    ASSERT_TRUE(answer && answer->isError());
    EXPECT_EQ(parsed(answer->json)["code"].GetInt(), kInternalError);
    EXPECT_NE(answer->json.find("kaput"), std::string::npos);
    EXPECT_EQ(scope.open.load(), 0);
}

TEST_F(MethodTableTest, AnUpstreamsErrorObjectIsPassedOnAsItIs) {
    TestScope scope(who);
    registry.add(named("up"), [](std::string_view, ToolCall&) {
        ToolResult r;
        r.rpc_error_json = R"({"code":-32099,"message":"upstream says no","data":{"k":1}})";
        return Result<ToolResult>(r);
    });
    const auto answer = table().answer(request(3, "tools/call", R"({"name":"up"})"), scope);
    ASSERT_TRUE(answer && answer->isError());
    EXPECT_EQ(answer->json, R"({"code":-32099,"message":"upstream says no","data":{"k":1}})");
    EXPECT_EQ(
        toMessage(RequestId(std::int64_t{3}), *answer),
        R"({"jsonrpc":"2.0","id":3,"error":{"code":-32099,"message":"upstream says no","data":{"k":1}}})");
}

TEST_F(MethodTableTest, ACallPastTheNodesBoundIsARefusalTheModelReadsNotAnError) {
    TestScope scope(who);
    std::optional<MethodAnswer> inner;
    const MethodTable methods = table(1);  // one call at a time on the node
    registry.add(named("nested"), [&](std::string_view, ToolCall&) {
        inner = methods.answer(request(2, "tools/call", R"({"name":"a"})"), scope);
        return Result<ToolResult>(ToolResult{});
    });
    const auto outer = methods.answer(request(1, "tools/call", R"({"name":"nested"})"), scope);
    ASSERT_TRUE(outer && outer->isResult());
    ASSERT_TRUE(inner && inner->isResult()) << (inner ? inner->json : "none");
    const auto doc = parsed(inner->json);
    EXPECT_TRUE(doc["isError"].GetBool());
    EXPECT_NE(inner->json.find("max_concurrent_calls"), std::string::npos) << inner->json;
    // The slot is given back: the next call runs.
    const auto after = methods.answer(request(3, "tools/call", R"({"name":"a"})"), scope);
    ASSERT_TRUE(after && after->isResult());
    EXPECT_FALSE(parsed(after->json).HasMember("isError") &&
                 parsed(after->json)["isError"].GetBool());
}

/// A tool that asks `rounds` rounds of one question each (key "q<round>"), carrying the round in
/// its state, then answers with every answer it got.
void addAskingTool(FunctionToolRegistry& registry, int rounds) {
    registry.add(ToolDefinition{"ask", "", "", R"({"type":"object"})", "", "", "", true, "", false},
                 [rounds](std::string_view, ToolCall& call) -> Result<ToolResult> {
                     const InputRound* round = call.inputRound();
                     const int done = round == nullptr ? 0 : std::stoi(round->state);
                     if (round != nullptr) {
                         const std::string key = "q" + std::to_string(done);
                         if (round->response(key) == nullptr) {
                             return Error{ErrorCode::invalid_argument, "no answer to " + key};
                         }
                     }
                     if (done < rounds) {
                         InputNeed need;
                         need.requests.push_back(InputRequest{"q" + std::to_string(done + 1),
                                                              "elicitation/create", "{}"});
                         need.state = std::to_string(done + 1);
                         return ToolResult::inputRequired(std::move(need));
                     }
                     ToolResult r;
                     r.content_json =
                         R"([{"type":"text","text":"rounds )" + std::to_string(done) + R"("}])";
                     return r;
                 });
}

TEST_F(MethodTableTest, AToolAskingForInputRunsAgainWithTheAnswersUntilItAnswers) {
    addAskingTool(registry, 3);
    TestScope scope(who);
    const auto answer = table().answer(request(1, "tools/call", R"({"name":"ask"})"), scope);
    ASSERT_TRUE(answer && answer->isResult()) << (answer ? answer->json : "none");
    EXPECT_STREQ(parsed(answer->json)["content"][0]["text"].GetString(), "rounds 3");
    ASSERT_EQ(scope.needs.size(), 3U);
    EXPECT_EQ(scope.needs[2].requests[0].key, "q3");
    EXPECT_EQ(scope.needs[2].state, "3");
    EXPECT_EQ(scope.open.load(), 0);
}

TEST_F(MethodTableTest, TheScopesAnswerToANeedIsTheRequestsAnswer) {
    addAskingTool(registry, 1);
    TestScope scope(who);
    scope.stop = MethodAnswer::result(R"({"resultType":"input_required"})");
    const auto answer = table().answer(request(1, "tools/call", R"({"name":"ask"})"), scope);
    ASSERT_TRUE(answer && answer->isResult());
    EXPECT_EQ(answer->json, R"({"resultType":"input_required"})");
    EXPECT_EQ(scope.needs.size(), 1U);
}

TEST_F(MethodTableTest, ACallAskingPastMaxInputRoundsEndsWithAnIsErrorResult) {
    config.max_input_rounds = 2;
    addAskingTool(registry, 5);
    TestScope scope(who);
    const auto answer = table().answer(request(1, "tools/call", R"({"name":"ask"})"), scope);
    ASSERT_TRUE(answer && answer->isResult()) << (answer ? answer->json : "none");
    const auto doc = parsed(answer->json);
    EXPECT_TRUE(doc["isError"].GetBool());
    EXPECT_NE(std::string(doc["content"][0]["text"].GetString()).find("mcp.max_input_rounds"),
              std::string::npos);
    EXPECT_EQ(scope.needs.size(), 2U);
}

TEST_F(MethodTableTest, AMalformedNeedIsTheToolsInternalErrorNamingWhatIsWrong) {
    const std::vector<std::pair<InputNeed, std::string>> cases = {
        {InputNeed{}, "neither a question nor a state"},
        {InputNeed{{InputRequest{"k", "tools/call", "{}"}}, ""}, "cannot carry"},
        {InputNeed{{InputRequest{"k", "roots/list", "{}"}, InputRequest{"k", "roots/list", "{}"}},
                   ""},
         "two questions"},
        {InputNeed{{InputRequest{"k", "roots/list", "[]"}}, ""}, "not an object"},
    };
    for (const auto& [need, why] : cases) {
        registry.add(
            ToolDefinition{"bad", "", "", R"({"type":"object"})", "", "", "", true, "", false},
            [need = need](std::string_view, ToolCall&) -> Result<ToolResult> {
                return ToolResult::inputRequired(need);
            });
        TestScope scope(who);
        const auto answer = table().answer(request(1, "tools/call", R"({"name":"bad"})"), scope);
        ASSERT_TRUE(answer && answer->isError()) << why;
        const auto doc = parsed(answer->json);
        EXPECT_EQ(doc["code"].GetInt(), kInternalError);
        EXPECT_NE(std::string(doc["message"].GetString()).find(why), std::string::npos)
            << doc["message"].GetString();
        EXPECT_TRUE(scope.needs.empty());
    }
}

TEST_F(MethodTableTest, CatalogMethodsGoToTheWorkspacesCatalogWithTheSession) {
    TestCatalog catalog;
    who.catalog = &catalog;
    TestScope scope(who);
    const MethodTable methods = table();
    const auto listed = methods.answer(request(1, "resources/list", R"({"cursor":"x"})"), scope);
    ASSERT_TRUE(listed && listed->isResult());
    EXPECT_EQ(listed->json, R"({"resources":[],"params":{"cursor":"x"}})");
    EXPECT_EQ(catalog.lastSession, "session-1");
    const auto refused = methods.answer(request(2, "prompts/get", "{}"), scope);
    ASSERT_TRUE(refused && refused->isError());
    EXPECT_EQ(refused->json, R"({"code":-32602,"message":"no such prompt"})");
    EXPECT_FALSE(methods.answer(request(3, "unknown/method"), scope));
    EXPECT_EQ(scope.open.load(), 0);
}

TEST_F(MethodTableTest, WithoutACatalogOnlyToolMethodsAreTheTables) {
    TestScope scope(who);
    EXPECT_FALSE(table().answer(request(1, "resources/list"), scope));
    EXPECT_FALSE(table().answer(request(1, "ping"), scope));
}

}  // namespace
}  // namespace crank::mcp

namespace crank::mcp {
namespace {

TEST(CatalogCapabilitiesTest, WrittenAsTheServerCapabilitiesMembersOfWhatIsOffered) {
    EXPECT_EQ(capabilitiesJson(CatalogCapabilities{}), "");
    EXPECT_EQ(capabilitiesJson(CatalogCapabilities{true, true, true, true, true, true}),
              R"("resources":{"subscribe":true,"listChanged":true},)"
              R"("prompts":{"listChanged":true},"completions":{})");
    CatalogCapabilities some;
    some.resources = true;
    some.resources_list_changed = true;
    some.prompts = true;
    EXPECT_EQ(capabilitiesJson(some), R"("resources":{"listChanged":true},"prompts":{})");
}

}  // namespace
}  // namespace crank::mcp
