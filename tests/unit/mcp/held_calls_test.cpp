// HeldCalls: a call that asks the client while it runs, on a thread of its own, answered round by
// round; bounded per agent and per node, and every thread ended when the register goes.
#include "mcp/modern/held_calls.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace crank::mcp {
namespace {

using std::chrono::milliseconds;

/// Asks `rounds` questions one after the other, then answers with the answers joined.
HeldCalls::Run asking(int rounds, milliseconds timeout = milliseconds(5'000)) {
    return [rounds, timeout](const std::shared_ptr<HeldCall>& call) {
        std::string got;
        for (int i = 0; i < rounds; ++i) {
            const auto answer =
                call->ask("elicitation/create", R"({"n":)" + std::to_string(i) + "}", timeout);
            got += (answer.ok ? "ok:" : "error:") + answer.json + ";";
        }
        return MethodAnswer::result(got);
    };
}

TEST(HeldCalls, ACallIsAnsweredRoundByRoundUntilItEnds) {
    HeldCalls held(4, 16, milliseconds(5'000));
    auto call = held.start("alice", asking(2));
    ASSERT_TRUE(call) << call.error().message;
    HeldEvent first = (*call)->wait();
    ASSERT_FALSE(first.finished);
    ASSERT_EQ(first.questions.size(), 1U);
    EXPECT_EQ(first.questions[0].key, "input_1");
    EXPECT_EQ(first.questions[0].method, "elicitation/create");
    EXPECT_EQ(first.questions[0].params_json, R"({"n":0})");

    (*call)->answer({{"unknown", "{}"}});  // ignored: the same question again
    HeldEvent again = (*call)->wait();
    ASSERT_EQ(again.questions.size(), 1U);
    EXPECT_EQ(again.questions[0].key, "input_1");

    (*call)->answer({{"input_1", R"({"a":1})"}});
    HeldEvent second = (*call)->wait();
    ASSERT_FALSE(second.finished);
    ASSERT_EQ(second.questions.size(), 1U);
    EXPECT_EQ(second.questions[0].key, "input_2");
    EXPECT_EQ(held.find((*call)->id(), "alice"), *call);
    EXPECT_EQ(held.find((*call)->id(), "bob"), nullptr);  // another agent's is not found

    (*call)->answer({{"input_2", R"({"b":2})"}});
    HeldEvent done = (*call)->wait();
    ASSERT_TRUE(done.finished);
    EXPECT_EQ(done.finished->json, R"(ok:{"a":1};ok:{"b":2};)");
    for (int i = 0; i < 200 && held.size() != 0; ++i) {
        std::this_thread::sleep_for(milliseconds(5));
    }
    EXPECT_EQ(held.size(), 0U);
}

TEST(HeldCalls, AQuestionNobodyAnswersTimesOutAndTheCallEndsWithoutAWaiter) {
    HeldCalls held(4, 16, milliseconds(30));  // the longest a question waits
    auto call = held.start("alice", asking(1));
    ASSERT_TRUE(call);
    ASSERT_EQ((*call)->wait().questions.size(), 1U);
    // Nobody retries: the question times out, the call ends, and it leaves the register.
    for (int i = 0; i < 400 && held.size() != 0; ++i) {
        std::this_thread::sleep_for(milliseconds(5));
    }
    EXPECT_EQ(held.size(), 0U);
    EXPECT_EQ(held.find((*call)->id(), "alice"), nullptr);
}

TEST(HeldCalls, CallsAreBoundedPerAgentAndInAll) {
    HeldCalls held(1, 2, milliseconds(5'000));
    auto a = held.start("alice", asking(1));
    ASSERT_TRUE(a);
    (*a)->wait();
    const auto refused = held.start("alice", asking(1));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::unavailable);
    EXPECT_NE(refused.error().message.find("mcp.max_held_calls_per_agent"), std::string::npos);
    auto b = held.start("bob", asking(1));
    ASSERT_TRUE(b);
    (*b)->wait();
    const auto full = held.start("carol", asking(1));
    ASSERT_FALSE(full);
    EXPECT_NE(full.error().message.find("mcp.max_held_calls "), std::string::npos);
    (*a)->abandon();
    EXPECT_TRUE((*a)->wait().finished);  // its question got an error, and it ended
    for (int i = 0; i < 200 && held.size() != 1; ++i) {
        std::this_thread::sleep_for(milliseconds(5));
    }
    EXPECT_TRUE(held.start("alice", asking(0)));  // the slot came back
}

TEST(HeldCalls, TheRegisterEndsEveryHeldCallWhenItGoes) {
    std::atomic<int> ended{0};
    {
        HeldCalls held(8, 8, milliseconds(60'000));
        for (int i = 0; i < 4; ++i) {
            auto call = held.start("alice", [&ended](const std::shared_ptr<HeldCall>& c) {
                const auto answer = c->ask("roots/list", "{}", milliseconds(60'000));
                ended += answer.ok ? 0 : 1;
                return MethodAnswer::none();
            });
            ASSERT_TRUE(call);
            (*call)->wait();
        }
    }  // abandons all four and waits for their threads
    EXPECT_EQ(ended.load(), 4);
}

TEST(HeldCalls, AnAbandonedCallsQuestionsFailAtOnce) {
    auto call = std::make_shared<HeldCall>("id", "alice", milliseconds(60'000));
    call->abandon();
    const auto answer = call->ask("roots/list", "{}", milliseconds(60'000));
    EXPECT_FALSE(answer.ok);
    EXPECT_NE(answer.json.find("-32800"), std::string::npos);
    EXPECT_TRUE(call->abandoned());
}

}  // namespace
}  // namespace crank::mcp
