// RequestStateSeal: a sealed requestState opens once, for its binding, before it expires, with the
// deployment's key; every forged, altered, foreign, stale or replayed one is refused, naming why.
#include "mcp/modern/request_state_seal.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "mcp/modern/used_states.h"
#include "util/clock.h"

namespace crank::mcp {
namespace {

using std::chrono::milliseconds;

constexpr StateOwner kOwner{"ws", "alice"};

StateBinding binding() {
    return StateBinding{"ws", "alice", "tools/call", "book", R"({"room":"a","nights":2})"};
}

RequestStateSeal sealOf(std::string_view key = "a long enough deployment secret",
                        milliseconds ttl = milliseconds(60'000)) {
    return RequestStateSeal(key, "node-1", ttl, std::make_shared<MemoryUsedStates>());
}

void expectRefused(const Result<OpenedState>& opened, std::string_view why) {
    ASSERT_FALSE(opened) << "opened: " << opened->payload;
    EXPECT_EQ(opened.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(opened.error().message.find(why), std::string::npos) << opened.error().message;
}

TEST(RequestStateSeal, AStateOpensForItsBindingWithItsPayloadRoundAndNode) {
    const RequestStateSeal seal = sealOf();
    const std::string sealed = seal.seal(binding(), "step2:Alice \"quoted\" \xC3\xA9", 2);
    EXPECT_EQ(sealed.rfind("v1.", 0), 0U);
    EXPECT_EQ(sealed.find("Alice"), std::string::npos);  // the payload is not readable
    const Result<OpenedState> opened = seal.open(sealed, binding());
    ASSERT_TRUE(opened) << opened.error().message;
    EXPECT_EQ(opened->payload, "step2:Alice \"quoted\" \xC3\xA9");
    EXPECT_EQ(opened->round, 2);
    EXPECT_EQ(opened->node, "node-1");
}

TEST(RequestStateSeal, TheSamePayloadSealsDifferentlyEachTime) {
    const RequestStateSeal seal = sealOf();
    EXPECT_NE(seal.seal(binding(), "x", 1), seal.seal(binding(), "x", 1));
}

TEST(RequestStateSeal, AStateOpensOnceOnly) {
    const RequestStateSeal seal = sealOf();
    const std::string sealed = seal.seal(binding(), "x", 1);
    ASSERT_TRUE(seal.open(sealed, binding()));
    expectRefused(seal.open(sealed, binding()), "was used already");
}

TEST(RequestStateSeal, AnotherNodeWithTheSameKeyAndRegisterOpensIt) {
    auto used = std::make_shared<MemoryUsedStates>();
    const RequestStateSeal a("shared secret of the deployment", "a", milliseconds(60'000), used);
    const RequestStateSeal b("shared secret of the deployment", "b", milliseconds(60'000), used);
    const std::string sealed = a.seal(binding(), "x", 1);
    const Result<OpenedState> opened = b.open(sealed, binding());
    ASSERT_TRUE(opened) << opened.error().message;
    EXPECT_EQ(opened->node, "a");
    expectRefused(a.open(sealed, binding()), "was used already");
}

TEST(RequestStateSeal, AnotherKeyOrARandomKeyDoesNotOpenIt) {
    const std::string sealed = sealOf("the first deployment secret").seal(binding(), "x", 1);
    expectRefused(sealOf("the other deployment secret").open(sealed, binding()),
                  "was altered or was not issued by this deployment");
    const RequestStateSeal random1 = sealOf("");
    const RequestStateSeal random2 = sealOf("");
    expectRefused(random2.open(random1.seal(binding(), "x", 1), binding()), "not issued");
}

TEST(RequestStateSeal, EveryAlteredByteIsRefused) {
    const RequestStateSeal seal = sealOf();
    const std::string sealed = seal.seal(binding(), "payload", 1);
    for (std::size_t i = 3; i < sealed.size(); ++i) {
        std::string altered = sealed;
        altered[i] = altered[i] == 'A' ? 'B' : 'A';
        const Result<OpenedState> opened = seal.open(altered, binding());
        EXPECT_FALSE(opened) << "byte " << i;
    }
    expectRefused(seal.open(sealed + "-TAMPERED", binding()), "requestState");
    expectRefused(seal.open(sealed.substr(0, sealed.size() - 1), binding()), "requestState");
    ASSERT_TRUE(seal.open(sealed, binding()));  // none of them used it up
}

TEST(RequestStateSeal, MalformedStatesAreRefusedNamingWhy) {
    const RequestStateSeal seal = sealOf();
    expectRefused(seal.open("", binding()), "must start with \"v1.\"");
    expectRefused(seal.open("v2.AAAA", binding()), "must start with \"v1.\"");
    expectRefused(seal.open("v1.", binding()), "not issued");
    expectRefused(seal.open("v1.A", binding()), "not base64url");
    expectRefused(seal.open("v1.AAAA+/==", binding()), "not base64url");
    expectRefused(seal.open("v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", binding()),
                  "not issued");
    expectRefused(seal.open("v1." + std::string(70'000, 'A'), binding()), "too long");
    expectRefused(seal.open(std::string("v1.\0AAA", 7), binding()), "not base64url");
}

TEST(RequestStateSeal, AStateOfAnotherCallerToolOrArgumentsIsRefused) {
    const RequestStateSeal seal = sealOf();
    StateBinding other = binding();
    other.agent = "mallory";
    expectRefused(seal.open(seal.seal(binding(), "x", 1), other), "another caller");
    other = binding();
    other.workspace = "other";
    expectRefused(seal.open(seal.seal(binding(), "x", 1), other), "another caller");
    other = binding();
    other.target = "cancel";
    expectRefused(seal.open(seal.seal(binding(), "x", 1), other), "another request");
    other = binding();
    other.method = "prompts/get";
    expectRefused(seal.open(seal.seal(binding(), "x", 1), other), "another request");
    other = binding();
    other.arguments_json = R"({"nights":2,"room":"b"})";
    expectRefused(seal.open(seal.seal(binding(), "x", 1), other),
                  "other arguments");  // The same arguments spelled otherwise (member order,
                                       // whitespace, 2 as 2.0) open it.
    other.arguments_json = R"( {"nights": 2.0, "room": "a"} )";
    EXPECT_TRUE(seal.open(seal.seal(binding(), "x", 1), other));
}

TEST(RequestStateSeal, AnExpiredStateIsRefused) {
    const RequestStateSeal seal = sealOf("a long enough deployment secret", milliseconds(1));
    const std::string sealed = seal.seal(binding(), "x", 1);
    std::this_thread::sleep_for(milliseconds(5));
    expectRefused(seal.open(sealed, binding()), "has expired");
}

TEST(ParamsDigest, IgnoresMemberOrderAndWhitespaceButNotValues) {
    EXPECT_EQ(paramsDigest("t", R"({"a":1,"b":{"c":[1,2],"d":"x"}})"),
              paramsDigest("t", R"( { "b" : { "d":"x", "c":[ 1 , 2 ] }, "a" : 1 } )"));
    EXPECT_NE(paramsDigest("t", R"({"a":1})"), paramsDigest("t", R"({"a":2})"));
    EXPECT_NE(paramsDigest("t", R"({"a":[1,2]})"), paramsDigest("t", R"({"a":[2,1]})"));
    EXPECT_NE(paramsDigest("t", R"({})"), paramsDigest("u", R"({})"));
    // Numbers compare by their exact value, whatever their spelling; never as strings.
    EXPECT_EQ(paramsDigest("t", R"({"a":1})"), paramsDigest("t", R"({"a":1.0})"));
    EXPECT_EQ(paramsDigest("t", R"({"a":[150]})"), paramsDigest("t", R"({"a":[1.5e2]})"));
    EXPECT_NE(paramsDigest("t", R"({"a":1.0})"), paramsDigest("t", R"({"a":1.00000000000000001})"));
    EXPECT_NE(paramsDigest("t", R"({"a":18446744073709551616})"),
              paramsDigest("t", R"({"a":18446744073709551617})"));
    EXPECT_NE(paramsDigest("t", R"({"a":1})"), paramsDigest("t", R"({"a":"n1"})"));
    EXPECT_NE(paramsDigest("t", R"({"a":1})"), paramsDigest("t", R"({"a":"1"})"));
    EXPECT_NE(paramsDigest("t", R"({"a":null})"), paramsDigest("t", R"({"a":"0"})"));
    EXPECT_EQ(paramsDigest("t", R"({"a":"\u00e9"})"), paramsDigest("t", "{\"a\":\"\xc3\xa9\"}"));
    EXPECT_EQ(paramsDigest("t", "not json"), paramsDigest("t", "not json"));
    EXPECT_NE(paramsDigest("t", "not json"), paramsDigest("t", "not json!"));
}

TEST(MemoryUsedStates, AnIdIsFirstOnceAndForgottenWhenItExpires) {
    MemoryUsedStates used(10);
    const std::int64_t soon = nowUnixMs() + 20;
    EXPECT_TRUE(*used.consume("a", kOwner, soon));
    EXPECT_FALSE(*used.consume("a", kOwner, soon));
    std::this_thread::sleep_for(milliseconds(30));
    EXPECT_TRUE(
        *used.consume("a", kOwner, nowUnixMs() + 60'000));  // its state expired: nothing to replay
}

TEST(MemoryUsedStates, AFullRegisterRefusesRatherThanForgetsALiveId) {
    MemoryUsedStates used(3);
    const std::int64_t later = nowUnixMs() + 60'000;
    for (const char* id : {"a", "b", "c"}) {
        EXPECT_TRUE(*used.consume(id, kOwner, later));
    }
    const Result<bool> full = used.consume("d", kOwner, later);
    ASSERT_FALSE(full);
    EXPECT_EQ(full.error().code, ErrorCode::unavailable);
    EXPECT_FALSE(*used.consume("a", kOwner, later));
}

// Issue 45: one agent filling the register refuses only itself, naming its own limit; its
// workspace's share bounds all its agents together; an expired id gives its share back.
TEST(MemoryUsedStates, EachCallerHasItsShareAndTheRefusalNamesOnlyItsOwnLimit) {
    MemoryUsedStates used(1000, StateShares{2, 3});
    const std::int64_t later = nowUnixMs() + 60'000;
    EXPECT_TRUE(*used.consume("a1", {"ws", "mallory"}, later));
    EXPECT_TRUE(*used.consume("a2", {"ws", "mallory"}, later));
    const Result<bool> agentFull = used.consume("a3", {"ws", "mallory"}, later);
    ASSERT_FALSE(agentFull);
    EXPECT_EQ(agentFull.error().code, ErrorCode::unavailable);
    EXPECT_NE(agentFull.error().message.find(R"(agent "mallory")"), std::string::npos);
    EXPECT_NE(agentFull.error().message.find("mcp.max_request_states_per_agent"),
              std::string::npos);
    EXPECT_EQ(agentFull.error().message.find("alice"), std::string::npos);
    // Another agent of the same workspace still opens, up to the workspace's share.
    EXPECT_TRUE(*used.consume("b1", {"ws", "alice"}, later));
    const Result<bool> workspaceFull = used.consume("b2", {"ws", "alice"}, later);
    ASSERT_FALSE(workspaceFull);
    EXPECT_NE(workspaceFull.error().message.find("mcp.max_request_states_per_workspace"),
              std::string::npos);
    // Another workspace is untouched, and a replay is still a replay.
    EXPECT_TRUE(*used.consume("c1", {"other", "mallory"}, later));
    EXPECT_FALSE(*used.consume("a1", {"ws", "mallory"}, later));
    // Expired ids give their share back.
    MemoryUsedStates brief(1000, StateShares{1, -1});
    EXPECT_TRUE(*brief.consume("x", kOwner, nowUnixMs() + 20));
    EXPECT_FALSE(brief.consume("y", kOwner, later));
    std::this_thread::sleep_for(milliseconds(30));
    EXPECT_TRUE(*brief.consume("y", kOwner, later));
}

TEST(PacedUsedStates, AnAgentOpensAtItsPaceAndOthersAreNotSlowed) {
    auto inner = std::make_shared<MemoryUsedStates>();
    PacedUsedStates paced(inner, 3);  // 3 a minute
    const std::int64_t later = nowUnixMs() + 60'000;
    for (const char* id : {"a", "b", "c"}) {
        EXPECT_TRUE(*paced.consume(id, {"ws", "mallory"}, later));
    }
    const Result<bool> fast = paced.consume("d", {"ws", "mallory"}, later);
    ASSERT_FALSE(fast);
    EXPECT_EQ(fast.error().code, ErrorCode::unavailable);
    EXPECT_NE(fast.error().message.find("mcp.max_input_rounds_per_minute: 3"), std::string::npos);
    // The refused id was not recorded: the same state opens once the agent's pace allows.
    EXPECT_TRUE(*inner->consume("d", {"ws", "mallory"}, later));
    EXPECT_TRUE(*paced.consume("e", {"ws", "alice"}, later));
    EXPECT_TRUE(*paced.consume("f", {"other", "mallory"}, later));
}

}  // namespace
}  // namespace crank::mcp
