// MRTR relayed from a 2026-era upstream (input_relay.h): its input_required results read and
// bounded, the caller's capabilities put in the request's _meta, the next round's params, and a
// catalog request's rounds asked of the client one question after the other.

#include "federation/input_relay.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "json/json_members.h"
#include "json/json_text.h"

namespace crank::federation {
namespace {

/// A call whose client declares `declared` and answers every question from `answers` in order
/// (an error object when they run out); what it was asked is kept.
class AskedCall final : public mcp::ToolCall {
public:
    explicit AskedCall(std::vector<std::string> declared = {},
                       std::vector<ClientAnswer> answers = {})
        : declared_(std::move(declared)), answers_(std::move(answers)) {}
    bool cancelled() const override { return false; }
    void progress(double, std::optional<double>, std::string_view) override {}
    void log(mcp::LogLevel, std::string_view, std::string_view) override {}
    std::optional<mcp::LogLevel> logLevel() const override { return level; }
    bool clientDeclares(std::string_view capability) const override {
        for (const std::string& d : declared_) {
            if (d == capability) {
                return true;
            }
        }
        return false;
    }
    ClientAnswer requestClient(std::string_view method, std::string_view params_json,
                               std::chrono::milliseconds /*timeout*/) override {
        asked.push_back(std::string(method) + " " + std::string(params_json));
        if (next_ >= answers_.size()) {
            return {false, R"({"code":-32601,"message":"no handler"})"};
        }
        return answers_[next_++];
    }
    std::vector<std::string> asked;
    std::optional<mcp::LogLevel> level;

private:
    std::vector<std::string> declared_;
    std::vector<ClientAnswer> answers_;
    std::size_t next_ = 0;
};

std::string member(const std::string& object_json, const char* name) {
    json::Document doc;
    if (!json::parseObject(object_json, doc) || !doc.HasMember(name)) {
        return "<none>";
    }
    return json::toJsonText(doc[name]);
}

TEST(InputRelayTest, ACompleteResultAsksNothing) {
    for (const char* result :
         {R"({"content":[]})", R"({"resultType":"complete","content":[]})",
          R"({"content":[{"type":"text","text":"input_required"}]})", "not json input_required"}) {
        const InputVerdict v = readInputRequired(result);
        EXPECT_FALSE(v.need.has_value()) << result;
        EXPECT_TRUE(v.fault.empty()) << result;
    }
}

TEST(InputRelayTest, AnInputRequiredResultGivesItsQuestionsInOrderAndItsStateByteForByte) {
    const InputVerdict v = readInputRequired(
        R"({"resultType":"input_required","inputRequests":{"b":{"method":"elicitation/create","params":{"message":"Name?"}},)"
        R"("a":{"method":"roots/list"}},"requestState":"opaque \u00e9 state"})");
    ASSERT_TRUE(v.need.has_value()) << v.fault;
    ASSERT_EQ(v.need->requests.size(), 2U);
    EXPECT_EQ(v.need->requests[0].key, "b");
    EXPECT_EQ(v.need->requests[0].method, "elicitation/create");
    EXPECT_EQ(v.need->requests[0].params_json, R"({"message":"Name?"})");
    EXPECT_EQ(v.need->requests[1].key, "a");
    EXPECT_EQ(v.need->requests[1].params_json, "{}");
    EXPECT_EQ(v.need->state, "opaque \xc3\xa9 state");
}

TEST(InputRelayTest, AMalformedOrOversizedInputRequiredResultIsAFaultThatSaysWhy) {
    const std::string big(kMaxRelayedStateBytes + 1, 'x');
    std::string many = R"({"resultType":"input_required","inputRequests":{)";
    for (std::size_t i = 0; i <= kMaxRelayedQuestions; ++i) {
        many += (i == 0 ? "" : ",") + std::string(R"("k)") + std::to_string(i) +
                R"(":{"method":"roots/list"})";
    }
    many += "}}";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"({"resultType":"input_required","requestState":7})", "not a string"},
        {R"({"resultType":"input_required","requestState":")" + big + "\"}", "more than the 16384"},
        {R"({"resultType":"input_required","inputRequests":[]})", "not an object"},
        {many, "33 questions"},
        {R"({"resultType":"input_required","inputRequests":{"q":{"method":"tools/call"}}})",
         "\"q\" is not a sampling/createMessage"},
        {R"({"resultType":"input_required","inputRequests":{"q":"roots/list"}})", "\"q\" is not"},
        {R"({"resultType":"input_required","inputRequests":{"q":{"method":"roots/list","params":[1]}}})",
         "params of its question \"q\""},
        {R"({"resultType":"input_required"})", "asks nothing"},
        // Beyond what crankd declares upstream for its caller (elicitation {} is form mode,
        // sampling {} has no tools).
        {R"({"resultType":"input_required","inputRequests":{"u":{"method":"elicitation/create","params":{"mode":"url","url":"https://x.invalid"}}}})",
         "asks an elicitation in mode \"url\""},
        {R"({"resultType":"input_required","inputRequests":{"s":{"method":"sampling/createMessage","params":{"messages":[],"tools":[]}}}})",
         "asks sampling with tools"},
    };
    for (const auto& [result, why] : cases) {
        const InputVerdict v = readInputRequired(result);
        EXPECT_FALSE(v.need.has_value()) << result.substr(0, 200);
        EXPECT_NE(v.fault.find(why), std::string::npos) << v.fault;
    }
    // A state alone (no question) is a valid round.
    EXPECT_TRUE(readInputRequired(R"({"resultType":"input_required","requestState":"s"})").need);
}

TEST(InputRelayTest, TheCallersCapabilitiesReplaceWhatTheParamsSaid) {
    const AskedCall both({"elicitation", "roots"});
    const std::string params = withCallerMeta(
        R"({"name":"t","_meta":{"progressToken":1,"io.modelcontextprotocol/clientCapabilities":{"sampling":{"tools":{}}}}})",
        both);
    EXPECT_EQ(member(member(params, "_meta"), "io.modelcontextprotocol/clientCapabilities"),
              R"({"elicitation":{},"roots":{}})");
    EXPECT_EQ(member(member(params, "_meta"), "progressToken"), "1");
    // Nothing declared: the member goes, and an _meta left empty with it.
    const AskedCall none;
    EXPECT_EQ(
        withCallerMeta(
            R"({"name":"t","_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{}}}})",
            none),
        R"({"name":"t"})");
    EXPECT_EQ(withCallerMeta(R"({"name":"t"})", none), R"({"name":"t"})");
    EXPECT_EQ(
        withCallerMeta("", both),
        R"({"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"roots":{}}}})");
    EXPECT_EQ(withCallerMeta("[1]", both), "[1]");  // not an object: as it was
    // The Tasks extension, declared when asked (a caller that declared it, a task method).
    EXPECT_EQ(withCallerMeta(R"({"name":"t"})", none, true),
              R"({"name":"t","_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":)"
              R"({"io.modelcontextprotocol/tasks":{}}}}})");
    EXPECT_EQ(member(member(withCallerMeta("{}", both, true), "_meta"),
                     "io.modelcontextprotocol/clientCapabilities"),
              R"({"elicitation":{},"roots":{},"extensions":{"io.modelcontextprotocol/tasks":{}}})");
    // The level the caller takes logs at, replacing the params' own.
    AskedCall logging;
    logging.level = mcp::LogLevel::warning;
    EXPECT_EQ(withCallerMeta(R"({"_meta":{"io.modelcontextprotocol/logLevel":"debug"}})", logging),
              R"({"_meta":{"io.modelcontextprotocol/logLevel":"warning"}})");
}

TEST(InputRelayTest, TheNextRoundCarriesTheAnswersAndTheStateReplacingTheLastOnes) {
    const std::string params =
        withInputRound(R"({"name":"t","inputResponses":{"old":{}},"requestState":"old"})",
                       {{"name", R"({"action":"accept","content":{"name":"Ann"}})"}}, "s2");
    EXPECT_EQ(
        params,
        R"({"name":"t","inputResponses":{"name":{"action":"accept","content":{"name":"Ann"}}},"requestState":"s2"})");
    EXPECT_EQ(withInputRound(R"({"name":"t","requestState":"old"})", {}, ""),
              R"({"name":"t","inputResponses":{}})");
}

Answer inputAnswer(const std::string& key, const std::string& state) {
    Answer a{true, "{}", mcp::InputNeed{}};
    a.input->requests.push_back(mcp::InputRequest{key, "elicitation/create", R"({"message":"?"})"});
    a.input->state = state;
    return a;
}

TEST(InputRelayTest, ACatalogRequestAsksTheClientRoundAfterRoundAndSendsTheAnswersBack) {
    AskedCall call({"elicitation"}, {{true, R"({"action":"accept","content":{"x":1}})"},
                                     {true, R"({"action":"accept","content":{"x":2}})"}});
    std::vector<std::string> sent;
    const auto send = [&](const std::string& params) {
        sent.push_back(params);
        if (sent.size() == 1) {
            return inputAnswer("first", "s1");
        }
        if (sent.size() == 2) {
            return inputAnswer("second", "s2");
        }
        return Answer{true, R"({"messages":[]})"};
    };
    // The client's own inputResponses and requestState are not passed on.
    const Answer a = relayInputRounds(
        send, R"({"name":"p","requestState":"forged","inputResponses":{"first":{}}})", call,
        "upstream u: prompts/get", 16, std::chrono::milliseconds(1000));
    ASSERT_TRUE(a.ok) << a.json;
    EXPECT_EQ(a.json, R"({"messages":[]})");
    ASSERT_EQ(sent.size(), 3U);
    EXPECT_EQ(sent[0], R"({"name":"p"})");
    EXPECT_EQ(member(sent[1], "requestState"), R"("s1")");
    EXPECT_EQ(member(sent[1], "inputResponses"),
              R"({"first":{"action":"accept","content":{"x":1}}})");
    EXPECT_EQ(member(sent[2], "requestState"), R"("s2")");
    EXPECT_EQ(member(sent[2], "inputResponses"),
              R"({"second":{"action":"accept","content":{"x":2}}})");
    ASSERT_EQ(call.asked.size(), 2U);
    EXPECT_EQ(call.asked[0], R"(elicitation/create {"message":"?"})");
}

TEST(InputRelayTest, EndlessRoundsAndUnansweredQuestionsEndTheRequestWithAnErrorNamingThem) {
    std::vector<AskedCall::ClientAnswer> plenty(40, {true, R"({"action":"decline"})"});
    AskedCall patient({"elicitation"}, plenty);
    int sends = 0;
    const Answer endless = relayInputRounds(
        [&](const std::string&) {
            ++sends;
            return inputAnswer("again", "s");
        },
        "{}", patient, "upstream u: prompts/get", 3, std::chrono::milliseconds(1000));
    EXPECT_FALSE(endless.ok);
    EXPECT_NE(endless.json.find("asked for input more than 3 times"), std::string::npos)
        << endless.json;
    EXPECT_EQ(sends, 4);

    AskedCall mute({"elicitation"});
    const Answer unanswered =
        relayInputRounds([&](const std::string&) { return inputAnswer("who", ""); }, "{}", mute,
                         "upstream u: resources/read", 3, std::chrono::milliseconds(1000));
    EXPECT_FALSE(unanswered.ok);
    EXPECT_NE(unanswered.json.find(R"(question \"who\" (elicitation/create): no handler)"),
              std::string::npos)
        << unanswered.json;
}

}  // namespace
}  // namespace crank::federation
