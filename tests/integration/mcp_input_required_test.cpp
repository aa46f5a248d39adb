// MRTR (MCP 2026-07-28 input_required results) against a real crankd-test-tools: a tool's
// questions and its sealed requestState, the retry that completes it, and every state that must
// not open: replayed, expired, forged, another caller's, another tool's, other arguments, or
// sealed before a restart without a configured key.

#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "mcp_http_client.h"
#include "modern_fixture.h"

namespace {

using crank::testing::kKey;
using crank::testing::meta;
using crank::testing::Reply;
using crank::testing::request;

constexpr const char* kAsking = "test_input_required_result_request_state";
constexpr const char* kConfirmed = R"({"confirm":{"action":"accept","content":{"ok":true}}})";
constexpr const char* kElicitation = R"({"elicitation":{}})";
constexpr const char* kBobKey = "bob-test-key-0123456789abc";

class McpInputRequiredTest : public crank::testing::ModernCrankdTest {
protected:
    /// tools/call of `tool` with `members` (without braces) besides its name, declaring
    /// elicitation, as `key`'s agent ("" for none).
    Reply call(int id, const std::string& tool, const std::string& members = "",
               const std::string& key = "", const std::string& capabilities = kElicitation) {
        crank::testing::Headers extra{{"Mcp-Name", tool}};
        if (!key.empty()) {
            extra.emplace_back("Authorization", "Bearer " + key);
        }
        return post(request(id, "tools/call",
                            R"("name":")" + tool + "\"" + (members.empty() ? "" : ",") + members,
                            meta(crank::testing::kVersion, capabilities)),
                    "tools/call", extra);
    }

    /// The requestState of the input_required answer `reply`; "" (and a failure) otherwise.
    static std::string stateOf(const Reply& reply) {
        EXPECT_EQ(reply.status, 200) << reply.body;
        const auto doc = reply.json();
        if (!doc.IsObject() || !doc.HasMember("result") ||
            !doc["result"].HasMember("requestState")) {
            ADD_FAILURE() << "no requestState in " << reply.body;
            return "";
        }
        return doc["result"]["requestState"].GetString();
    }

    /// The retry members answering the confirmation with `state`.
    static std::string retry(const std::string& state) {
        return std::string(R"("arguments":{},"inputResponses":)") + kConfirmed +
               R"(,"requestState":")" + state + "\"";
    }

    /// One whole round of `key`'s agent, request ids `id` and `id + 1`: the call asks, the retry
    /// with its state completes.
    void expectRoundCompletes(int id, const std::string& key) {
        const std::string state = stateOf(call(id, kAsking, R"("arguments":{})", key));
        EXPECT_EQ(textOf(call(id + 1, kAsking, retry(state), key)).rfind("state-ok", 0), 0U) << id;
    }

    /// Expects `reply` to be -32602 whose message says `why`.
    static void expectRefused(const Reply& reply, const std::string& why) {
        EXPECT_EQ(reply.status, 200) << reply.body;
        const auto doc = reply.json();
        ASSERT_TRUE(doc.IsObject() && doc.HasMember("error")) << reply.body;
        EXPECT_EQ(doc["error"]["code"].GetInt(), -32602);
        EXPECT_NE(std::string(doc["error"]["message"].GetString()).find(why), std::string::npos)
            << reply.body;
    }

    static std::string textOf(const Reply& reply) {
        const auto doc = reply.json();
        if (!doc.IsObject() || !doc.HasMember("result") || !doc["result"].HasMember("content")) {
            ADD_FAILURE() << reply.body;
            return "";
        }
        return doc["result"]["content"][0]["text"].GetString();
    }

    std::string twoAgents() {
        return R"(, "auth": {"mode": "api_key", "agents": [
                    {"id": "alice", "api_key": {"env": "KEY_ALICE"}},
                    {"id": "bob", "api_key": {"env": "KEY_BOB"}}]})";
    }
};

TEST_F(McpInputRequiredTest, AToolAsksThenCompletesWithTheAnswersAndItsStateOnce) {
    startCrankd();
    const Reply asked = call(1, kAsking, R"("arguments":{})");
    ASSERT_EQ(asked.status, 200) << asked.body;
    const auto doc = asked.json();
    const auto& result = doc["result"];
    EXPECT_STREQ(result["resultType"].GetString(), "input_required");
    EXPECT_STREQ(result["inputRequests"]["confirm"]["method"].GetString(), "elicitation/create");
    EXPECT_FALSE(result.HasMember("ttlMs"));  // never cached
    const std::string state = result["requestState"].GetString();
    EXPECT_EQ(state.rfind("v1.", 0), 0U) << state;
    EXPECT_EQ(state.find("awaiting"), std::string::npos);  // the tool's state is not readable

    const Reply done = call(2, kAsking, retry(state));
    ASSERT_EQ(done.status, 200) << done.body;
    EXPECT_STREQ(done.json()["result"]["resultType"].GetString(), "complete");
    EXPECT_EQ(textOf(done).rfind("state-ok", 0), 0U) << done.body;

    expectRefused(call(3, kAsking, retry(state)), "was used already");
}

TEST_F(McpInputRequiredTest, AStateOpensOnlyForItsCallerToolAndArguments) {
    startCrankd(twoAgents(), {{"KEY_ALICE", kKey}, {"KEY_BOB", kBobKey}});
    const std::string state = stateOf(call(1, kAsking, R"("arguments":{})", kKey));
    ASSERT_FALSE(state.empty());
    expectRefused(call(2, kAsking, retry(state), kBobKey), "another caller");
    expectRefused(call(3, "test_input_required_result_tampered_state", retry(state), kKey),
                  "another request");
    const std::string otherArguments = std::string(R"("arguments":{"x":1},"inputResponses":)") +
                                       kConfirmed + R"(,"requestState":")" + state + "\"";
    expectRefused(call(4, kAsking, otherArguments, kKey), "other arguments");
    // None of those used it up: its owner's retry still completes.
    EXPECT_EQ(textOf(call(5, kAsking, retry(state), kKey)).rfind("state-ok", 0), 0U);
}

// Issue 45: the arguments a state is bound to compare by exact value, read from their text: 1.0
// and 1 are one number, 1.0 and 1.00000000000000001 are not (through doubles they were).
TEST_F(McpInputRequiredTest, AStatesArgumentsCompareByExactValue) {
    startCrankd();
    const auto retryWith = [](const std::string& arguments, const std::string& state) {
        return R"("arguments":)" + arguments + R"(,"inputResponses":)" + kConfirmed +
               R"(,"requestState":")" + state + "\"";
    };
    const std::string state = stateOf(call(1, kAsking, R"("arguments":{"n":1.0,"s":"a"})"));
    ASSERT_FALSE(state.empty());
    expectRefused(call(2, kAsking, retryWith(R"({"n":1.00000000000000001,"s":"a"})", state)),
                  "other arguments");
    expectRefused(call(3, kAsking, retryWith(R"({"n":"1","s":"a"})", state)), "other arguments");
    EXPECT_EQ(textOf(call(4, kAsking, retryWith(R"({"s":"a","n":1})", state))).rfind("state-ok", 0),
              0U);
}

TEST_F(McpInputRequiredTest, AForgedMalformedOrExpiredStateIsRefusedAndReAsksNothing) {
    startCrankd(R"(, "mcp": {"request_state_ttl_ms": 1})");
    const std::string state = stateOf(call(1, kAsking, R"("arguments":{})"));
    ASSERT_FALSE(state.empty());
    expectRefused(call(2, kAsking, retry(state + "-TAMPERED")), "requestState");
    std::string altered = state;
    altered[10] = altered[10] == 'A' ? 'B' : 'A';
    expectRefused(call(6, kAsking, retry(altered)), "altered");
    expectRefused(call(3, kAsking, retry("not-a-state")), "must start with");
    expectRefused(call(4, kAsking, retry("v1.%%%")), "not base64url");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    expectRefused(call(5, kAsking, retry(state)), "has expired");
}

TEST_F(McpInputRequiredTest, MalformedAnswersAreInvalidParamsNamingTheMember) {
    startCrankd();
    expectRefused(call(1, "test_input_required_result_elicitation",
                       R"("arguments":{},"inputResponses":null)"),
                  "params.inputResponses must be an object");
    expectRefused(call(2, "test_input_required_result_elicitation",
                       R"("arguments":{},"inputResponses":{"user_name":12345})"),
                  R"(params.inputResponses["user_name"])");
    expectRefused(call(3, kAsking, R"("arguments":{},"requestState":7)"),
                  "params.requestState must be the string");
}

TEST_F(McpInputRequiredTest, AQuestionTheRequestCannotAnswerIsMissingCapability) {
    startCrankd();
    const Reply reply = call(1, "test_input_required_result_elicitation", R"("arguments":{})", "",
                             R"({"sampling":{}})");
    EXPECT_EQ(reply.status, 400) << reply.body;
    const auto doc = reply.json();
    EXPECT_EQ(doc["error"]["code"].GetInt(), -32021) << reply.body;
    EXPECT_TRUE(doc["error"]["data"]["requiredCapabilities"]["elicitation"].IsObject());
}

TEST_F(McpInputRequiredTest, AConfiguredKeyOpensStatesAcrossARestartARandomOneDoesNot) {
    const std::string keyed = R"(, "mcp": {"request_state_key": {"env": "STATE_KEY"}})";
    const std::map<std::string, std::string> env{{"STATE_KEY", "a-deployment-secret-0123456789"}};
    startCrankd(keyed, env);
    const std::string kept = stateOf(call(1, kAsking, R"("arguments":{})"));
    process_->signal(SIGTERM);
    ASSERT_EQ(process_->waitForExit(std::chrono::seconds(20)), 0) << process_->stderrText();
    startCrankd(keyed, env);
    EXPECT_EQ(textOf(call(2, kAsking, retry(kept))).rfind("state-ok", 0), 0U);

    process_->signal(SIGTERM);
    ASSERT_EQ(process_->waitForExit(std::chrono::seconds(20)), 0) << process_->stderrText();
    startCrankd();
    const std::string lost = stateOf(call(3, kAsking, R"("arguments":{})"));
    process_->signal(SIGTERM);
    ASSERT_EQ(process_->waitForExit(std::chrono::seconds(20)), 0) << process_->stderrText();
    startCrankd();
    expectRefused(call(4, kAsking, retry(lost)), "not issued by this deployment");
}

// Issue 45: single use holds for the deployment. Two crankd processes on one store and one key:
// a state completed on the second is refused as used on the first. Before, each node kept its
// own register and the state opened once per node.
TEST_F(McpInputRequiredTest, AStateOpensOnceInTheDeploymentNotOncePerNode) {
    const std::string keyed = R"(, "mcp": {"request_state_key": {"env": "STATE_KEY"}})";
    const std::map<std::string, std::string> env{{"STATE_KEY", "a-deployment-secret-0123456789"}};
    startCrankd(keyed, env);
    crank::testing::ChildProcess second(
        std::vector<std::string>{CRANKD_TEST_TOOLS_PATH, "--config", dir_.file("crank.json"),
                                 "--listen", "127.0.0.1:0"},
        env);
    const auto secondPort = second.waitForListeningPort(std::chrono::seconds(20));
    ASSERT_TRUE(secondPort) << second.stderrText();
    const std::string state = stateOf(call(1, kAsking, R"("arguments":{})"));
    ASSERT_FALSE(state.empty());

    const std::uint16_t first = port_;
    port_ = *secondPort;  // post() goes to the second node
    EXPECT_EQ(textOf(call(2, kAsking, retry(state))).rfind("state-ok", 0), 0U);
    port_ = first;
    expectRefused(call(3, kAsking, retry(state)), "was used already");

    second.signal(SIGTERM);
    EXPECT_EQ(second.waitForExit(std::chrono::seconds(20)), 0) << second.stderrText();
}

// Issue 45: one agent looping "call, retry" fills only its own share of the register (and its
// own pace); the refusal names its own limit, and another agent's rounds still complete. Before,
// one node-wide register of 100,000 ids was shared by every agent of every workspace.
TEST_F(McpInputRequiredTest, OneAgentFillingItsShareOfStatesRefusesOnlyItself) {
    startCrankd(twoAgents() + R"(, "mcp": {"max_request_states_per_agent": 3})",
                {{"KEY_ALICE", kKey}, {"KEY_BOB", kBobKey}});
    for (int i = 0; i < 3; ++i) {
        expectRoundCompletes(10 + 2 * i, kKey);
    }
    const std::string fourth = stateOf(call(20, kAsking, R"("arguments":{})", kKey));
    const Reply refused = call(21, kAsking, retry(fourth), kKey);
    expectRefused(refused, R"(agent "alice" has opened 3 request states)");
    expectRefused(refused, "mcp.max_request_states_per_agent");
    EXPECT_EQ(refused.body.find("bob"), std::string::npos) << refused.body;
    expectRoundCompletes(22, kBobKey);  // Bob is untouched
}

TEST_F(McpInputRequiredTest, AnAgentOpensStatesAtItsPaceAndTheStateStaysUnused) {
    startCrankd(twoAgents() + R"(, "mcp": {"max_input_rounds_per_minute": 2})",
                {{"KEY_ALICE", kKey}, {"KEY_BOB", kBobKey}});
    for (int i = 0; i < 2; ++i) {
        expectRoundCompletes(10 + 2 * i, kKey);
    }
    const std::string third = stateOf(call(20, kAsking, R"("arguments":{})", kKey));
    expectRefused(call(21, kAsking, retry(third), kKey), "mcp.max_input_rounds_per_minute: 2");
    expectRoundCompletes(22, kBobKey);
}

}  // namespace

namespace {

constexpr const char* kPushing = "test_missing_capability";  // asks sampling while it runs
constexpr const char* kSampling = R"({"sampling":{}})";
constexpr const char* kSampled =
    R"({"input_1":{"role":"assistant","content":{"type":"text","text":"hi back"},)"
    R"("model":"m","stopReason":"endTurn"}})";

std::string answered(const std::string& state) {
    return std::string(R"("arguments":{},"inputResponses":)") + kSampled + R"(,"requestState":")" +
           state + "\"";
}

TEST_F(McpInputRequiredTest, ACallThatAsksWhileItRunsIsHeldAndAnsweredThroughARound) {
    startCrankd();
    const Reply asked = call(1, kPushing, R"("arguments":{})", "", kSampling);
    ASSERT_EQ(asked.status, 200) << asked.body;
    const auto doc = asked.json();
    EXPECT_STREQ(doc["result"]["resultType"].GetString(), "input_required") << asked.body;
    EXPECT_STREQ(doc["result"]["inputRequests"]["input_1"]["method"].GetString(),
                 "sampling/createMessage");
    EXPECT_EQ(doc["result"]["inputRequests"]["input_1"]["params"]["maxTokens"].GetInt(), 10);
    const std::string state = doc["result"]["requestState"].GetString();

    const Reply done = call(2, kPushing, answered(state), "", kSampling);
    ASSERT_EQ(done.status, 200) << done.body;
    EXPECT_STREQ(done.json()["result"]["resultType"].GetString(), "complete");
    EXPECT_NE(textOf(done).find("hi back"), std::string::npos) << done.body;
    expectRefused(call(3, kPushing, answered(state), "", kSampling), "was used already");
}

TEST_F(McpInputRequiredTest, AHeldCallIsItsAgentsAndAnAbandonedOneGivesItsSlotBack) {
    startCrankd(
        twoAgents() + R"(, "mcp": {"request_state_ttl_ms": 300, "max_held_calls_per_agent": 1})",
        {{"KEY_ALICE", kKey}, {"KEY_BOB", kBobKey}});
    const std::string state = stateOf(call(1, kPushing, R"("arguments":{})", kKey, kSampling));
    ASSERT_FALSE(state.empty());
    expectRefused(call(2, kPushing, answered(state), kBobKey, kSampling), "another caller");
    // Alice holds as many as she may: another is refused in words the model reads.
    const Reply second = call(3, kPushing, R"("arguments":{})", kKey, kSampling);
    ASSERT_EQ(second.status, 200) << second.body;
    EXPECT_TRUE(second.json()["result"]["isError"].GetBool()) << second.body;
    EXPECT_NE(textOf(second).find("mcp.max_held_calls_per_agent"), std::string::npos);
    // Nobody answers: the question times out, the call ends upstream, the slot comes back.
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    expectRefused(call(4, kPushing, answered(state), kKey, kSampling), "has expired");
    EXPECT_FALSE(stateOf(call(5, kPushing, R"("arguments":{})", kKey, kSampling)).empty());
}

}  // namespace

namespace crank::testing {
namespace {

// Issue 45: a held call lives on the node that runs it. Its retry on another node of the same
// store and key is refused, and the refusal names no node (node names are the deployment's).
TEST_F(McpInputRequiredTest, AHeldCallsRetryOnAnotherNodeIsRefusedWithoutNamingNodes) {
    const std::map<std::string, std::string> env{{"STATE_KEY", "a-deployment-secret-0123456789"}};
    startCrankd(R"(, "server": {"node_id": "node-alpha"},
        "mcp": {"request_state_key": {"env": "STATE_KEY"}})",
                env);
    std::ostringstream text;
    text << std::ifstream(dir_.file("crank.json")).rdbuf();
    std::string config = text.str();
    config.replace(config.find("node-alpha"), 10, "node-bravo");
    crank::testing::ChildProcess second(
        std::vector<std::string>{CRANKD_TEST_TOOLS_PATH, "--config",
                                 dir_.write("crank-bravo.json", config), "--listen", "127.0.0.1:0"},
        env);
    const auto secondPort = second.waitForListeningPort(std::chrono::seconds(20));
    ASSERT_TRUE(secondPort) << second.stderrText();
    const std::string state = stateOf(call(1, kPushing, R"("arguments":{})", "", kSampling));
    ASSERT_FALSE(state.empty());

    const std::uint16_t first = port_;
    port_ = *secondPort;
    const Reply elsewhere = call(2, kPushing, answered(state), "", kSampling);
    port_ = first;
    expectRefused(elsewhere, "held by another node of this deployment");
    EXPECT_EQ(elsewhere.body.find("node-alpha"), std::string::npos) << elsewhere.body;
    EXPECT_EQ(elsewhere.body.find("node-bravo"), std::string::npos) << elsewhere.body;
    // On its own node the retry completes the call.
    const Reply done = call(3, kPushing, answered(state), "", kSampling);
    EXPECT_NE(textOf(done).find("hi back"), std::string::npos) << done.body;

    second.signal(SIGTERM);
    EXPECT_EQ(second.waitForExit(std::chrono::seconds(20)), 0) << second.stderrText();
}

}  // namespace
}  // namespace crank::testing
