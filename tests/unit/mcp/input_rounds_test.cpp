// MRTR's pieces without a transport: the input_required result, the 2025-era round that asks the
// client itself, and the retry members of tools/call params.
#include "mcp/input_rounds.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "mcp/wire/tool_call_params.h"

namespace crank::mcp {
namespace {

/// A ToolCall whose client answers from a script (method → answer) and declares `declared`.
class ScriptedCall final : public ToolCall {
public:
    bool cancelled() const override { return cancel_after >= 0 && asked >= cancel_after; }
    void progress(double, std::optional<double>, std::string_view) override {}
    void log(LogLevel, std::string_view, std::string_view) override {}
    ClientAnswer requestClient(std::string_view method, std::string_view params_json,
                               std::chrono::milliseconds timeout) override {
        ++asked;
        seen.emplace_back(std::string(method) + " " + std::string(params_json));
        waits.push_back(timeout);
        const auto it = script.find(std::string(method));
        return it != script.end() ? it->second
                                  : ClientAnswer{false, R"({"code":-32601,"message":"no such"})"};
    }
    bool clientDeclares(std::string_view capability) const override {
        return declared.find(std::string(capability)) != std::string::npos;
    }

    std::map<std::string, ClientAnswer> script;
    std::string declared = "sampling elicitation roots";
    std::vector<std::string> seen;
    std::vector<std::chrono::milliseconds> waits;
    int asked = 0;
    int cancel_after = -1;
};

rapidjson::Document parsed(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.c_str(), json.size());
    EXPECT_FALSE(doc.HasParseError()) << json;
    return doc;
}

InputNeed twoQuestions() {
    return InputNeed{{InputRequest{"name", "elicitation/create", R"({"message":"Name?"})"},
                      InputRequest{"where", "roots/list", "{}"}},
                     "state-1"};
}

TEST(InputRequiredResult, CarriesTheQuestionsInOrderAndTheStateWhenGiven) {
    const auto doc = parsed(inputRequiredResult(twoQuestions(), std::string("v1.sealed")));
    EXPECT_STREQ(doc["resultType"].GetString(), "input_required");
    EXPECT_STREQ(doc["inputRequests"]["name"]["method"].GetString(), "elicitation/create");
    EXPECT_STREQ(doc["inputRequests"]["name"]["params"]["message"].GetString(), "Name?");
    EXPECT_STREQ(doc["inputRequests"]["where"]["method"].GetString(), "roots/list");
    EXPECT_FALSE(doc["inputRequests"]["where"].HasMember("id"));  // no jsonrpc, no id
    EXPECT_STREQ(doc["requestState"].GetString(), "v1.sealed");
    EXPECT_FALSE(
        parsed(inputRequiredResult(twoQuestions(), std::nullopt)).HasMember("requestState"));
    const auto stateOnly = parsed(inputRequiredResult(InputNeed{{}, "s"}, std::string("v1.x")));
    EXPECT_FALSE(stateOnly.HasMember("inputRequests"));
}

TEST(UndeclaredCapability, NamesTheFirstQuestionTheClientCannotAnswer) {
    ScriptedCall call;
    EXPECT_EQ(undeclaredCapability(twoQuestions(), call), "");
    call.declared = "sampling roots";
    EXPECT_EQ(undeclaredCapability(twoQuestions(), call), "elicitation");
    call.declared = "elicitation";
    EXPECT_EQ(undeclaredCapability(twoQuestions(), call), "roots");
}

TEST(AskClient, AsksEveryQuestionAndKeepsTheStateForTheNextRun) {
    ScriptedCall call;
    call.script["elicitation/create"] = {true, R"({"action":"accept","content":{"n":"Al"}})"};
    call.script["roots/list"] = {true, R"({"roots":[]})"};
    const InputStep step = askClient(twoQuestions(), call, std::chrono::milliseconds(1234));
    ASSERT_FALSE(step.answer);
    EXPECT_EQ(step.next.round, 1);
    EXPECT_EQ(step.next.state, "state-1");
    EXPECT_NE(step.next.response("name"), nullptr);
    EXPECT_EQ(step.next.response("nobody"), nullptr);
    EXPECT_EQ(step.next.responses.at("name"), R"({"action":"accept","content":{"n":"Al"}})");
    EXPECT_EQ(step.next.responses.at("where"), R"({"roots":[]})");
    EXPECT_EQ(call.seen, (std::vector<std::string>{R"(elicitation/create {"message":"Name?"})",
                                                   "roots/list {}"}));
    EXPECT_EQ(call.waits[0], std::chrono::milliseconds(1234));
}

TEST(AskClient, ACountsRoundsFromThePreviousOne) {
    ScriptedCall call;
    call.script["roots/list"] = {true, R"({"roots":[]})"};
    InputRound previous;
    previous.round = 4;
    call.setInputRound(previous);
    const InputStep step = askClient(InputNeed{{InputRequest{"r", "roots/list", "{}"}}, ""}, call,
                                     std::chrono::milliseconds(1));
    EXPECT_EQ(step.next.round, 5);
}

TEST(AskClient, AQuestionLeftUnansweredEndsTheCallWithAnIsErrorNamingIt) {
    ScriptedCall call;
    call.script["elicitation/create"] = {false, R"({"code":-32001,"message":"no answer in time"})"};
    const InputStep step = askClient(twoQuestions(), call, std::chrono::milliseconds(1));
    ASSERT_TRUE(step.answer && step.answer->isResult());
    const auto doc = parsed(step.answer->json);
    EXPECT_TRUE(doc["isError"].GetBool());
    const std::string text = doc["content"][0]["text"].GetString();
    EXPECT_NE(text.find("\"name\""), std::string::npos) << text;
    EXPECT_NE(text.find("no answer in time"), std::string::npos) << text;
    EXPECT_EQ(call.asked, 1);  // the next question is not asked
}

TEST(AskClient, ACallCancelledWhileAskingIsNotAnswered) {
    ScriptedCall call;
    call.script["elicitation/create"] = {true, R"({"action":"cancel"})"};
    call.cancel_after = 1;
    const InputStep step = askClient(twoQuestions(), call, std::chrono::milliseconds(1));
    ASSERT_TRUE(step.answer);
    EXPECT_TRUE(step.answer->isNone());
}

TEST(ToolCallRetry, ReadsTheAnswersAndTheStateAsSent) {
    const auto params = parseToolCallParams(
        R"({"name":"t","arguments":{},"inputResponses":{"a":{"action":"accept"},"b":{"roots":[]}},)"
        R"("requestState":"v1.abc\u002d"})");
    ASSERT_TRUE(params) << params.error().message;
    EXPECT_TRUE(params->retry.has_responses);
    EXPECT_EQ(params->retry.responses.at("a"), R"({"action":"accept"})");
    EXPECT_EQ(params->retry.responses.at("b"), R"({"roots":[]})");
    EXPECT_EQ(params->retry.state, "v1.abc-");
    const auto plain = parseToolCallParams(R"({"name":"t"})");
    ASSERT_TRUE(plain);
    EXPECT_FALSE(plain->retry.has_responses);
    EXPECT_FALSE(plain->retry.state);
    const auto empty = parseToolCallParams(R"({"name":"t","inputResponses":{}})");
    ASSERT_TRUE(empty);
    EXPECT_TRUE(empty->retry.has_responses);
}

TEST(ToolCallRetry, MalformedRetryMembersAreRefusedNamingThem) {
    for (const auto& [params, named] : std::vector<std::pair<std::string, std::string>>{
             {R"({"name":"t","inputResponses":null})", "params.inputResponses must be an object"},
             {R"({"name":"t","inputResponses":7})", "params.inputResponses must be an object"},
             {R"({"name":"t","inputResponses":[]})", "params.inputResponses must be an object"},
             {R"({"name":"t","inputResponses":{"user_name":12345}})",
              R"(params.inputResponses["user_name"] must be the result object)"},
             {R"({"name":"t","inputResponses":{"a":{},"a":{}}})", R"(duplicate member "a")"},
             {R"({"name":"t","requestState":12})", "params.requestState must be the string"},
             {R"({"name":"t","requestState":null})", "params.requestState must be the string"},
         }) {
        const auto read = parseToolCallParams(params);
        ASSERT_FALSE(read) << params;
        EXPECT_NE(read.error().message.find(named), std::string::npos)
            << params << " -> " << read.error().message;
    }
}

}  // namespace
}  // namespace crank::mcp
