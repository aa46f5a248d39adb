// ThreadedStream through the fake host: pause/resume, rejected-full re-emits, cancellation from
// every direction, and exactly one complete() per stream.
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_plugins.h"
#include <crank/sdk.hpp>
#include <crank/testing/fake_host.hpp>

namespace {

namespace sdk = crank::sdk;
using crank::testing::CallResult;
using crank::testing::FakeHost;
using crank::testing::RequestSpec;
using crank::testing::StreamOptions;
using std::chrono::milliseconds;

RequestSpec request(std::string request_json) {
    RequestSpec spec;
    spec.request_json = std::move(request_json);
    return spec;
}

std::vector<std::string> expectedItems(int count) {
    std::vector<std::string> items;
    items.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        items.push_back("{\"i\":" + std::to_string(i) + "}");
    }
    return items;
}

class ThreadedStreamTest : public ::testing::Test {
protected:
    FakeHost host_{&sdk_test_plugin_entry};
};

TEST_F(ThreadedStreamTest, EmitsEverythingAndCompletesOk) {
    CallResult result = host_.runStream("boundary", request(R"({"mode":"count","count":20})"));
    EXPECT_TRUE(result.ok()) << ::testing::PrintToString(result.violations);
    EXPECT_EQ(result.items, expectedItems(20));
    EXPECT_EQ(result.complete_calls, 1U);
    EXPECT_EQ(result.cursor, "20");
    EXPECT_EQ(result.progress.size(), 20U);
    EXPECT_EQ(result.pauses, 0U);
    EXPECT_FALSE(result.host_cancelled);
}

TEST_F(ThreadedStreamTest, PausesUntilResumed) {
    StreamOptions options;
    options.capacity = 3;
    CallResult result =
        host_.runStream("boundary", request(R"({"mode":"count","count":20})"), options);
    EXPECT_TRUE(result.ok()) << ::testing::PrintToString(result.violations);
    EXPECT_EQ(result.items, expectedItems(20));
    EXPECT_EQ(result.pauses, 6U);  // after items 3, 6, ..., 18
    EXPECT_EQ(result.resumes, result.pauses);
    EXPECT_EQ(result.rejections, 0U);
    EXPECT_EQ(result.complete_calls, 1U);
}

TEST_F(ThreadedStreamTest, RejectedFullItemsAreEmittedAgainAfterResume) {
    StreamOptions options;
    options.capacity = 4;
    options.reject_when_full = true;
    CallResult result =
        host_.runStream("boundary", request(R"({"mode":"count","count":17})"), options);
    EXPECT_TRUE(result.ok()) << ::testing::PrintToString(result.violations);
    EXPECT_EQ(result.items, expectedItems(17)) << "nothing lost, nothing twice";
    EXPECT_EQ(result.rejections, 4U);
    EXPECT_EQ(result.resumes, 4U);
    EXPECT_EQ(result.pauses, 0U);
}

TEST_F(ThreadedStreamTest, StaysPausedUntilTheHostCancels) {
    StreamOptions options;
    options.capacity = 2;
    options.resume_when_paused = false;
    options.timeout = milliseconds(100);
    const auto start = std::chrono::steady_clock::now();
    CallResult result = host_.runStream("boundary", request(R"({"mode":"forever"})"), options);
    EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1500));
    EXPECT_EQ(result.status, sdk::Status::cancelled);
    EXPECT_TRUE(result.violations.empty()) << ::testing::PrintToString(result.violations);
    EXPECT_EQ(result.items, expectedItems(2));
    EXPECT_TRUE(result.host_cancelled);
    EXPECT_EQ(result.complete_calls, 1U);
    EXPECT_FALSE(result.error.has_value());
}

TEST_F(ThreadedStreamTest, RejectedAndNeverResumedEndsCancelled) {
    StreamOptions options;
    options.capacity = 2;
    options.reject_when_full = true;
    options.resume_when_paused = false;
    options.timeout = milliseconds(50);
    CallResult result = host_.runStream("boundary", request(R"({"mode":"forever"})"), options);
    EXPECT_EQ(result.status, sdk::Status::cancelled);
    EXPECT_EQ(result.items, expectedItems(2));
    EXPECT_EQ(result.rejections, 1U);
    EXPECT_TRUE(result.violations.empty()) << ::testing::PrintToString(result.violations);
}

TEST_F(ThreadedStreamTest, MaxItemsAnswersCancelled) {
    StreamOptions options;
    options.max_items = 7;
    options.capacity = 3;
    CallResult result = host_.runStream("boundary", request(R"({"mode":"forever"})"), options);
    EXPECT_EQ(result.status, sdk::Status::cancelled);
    EXPECT_EQ(result.items, expectedItems(7));
    EXPECT_TRUE(result.host_cancelled);
    EXPECT_EQ(result.complete_calls, 1U);
    EXPECT_TRUE(result.violations.empty()) << ::testing::PrintToString(result.violations);
}

TEST_F(ThreadedStreamTest, CancelWakesAWaitAndAnExceptionAfterCancelIsNotAnError) {
    StreamOptions options;
    options.timeout = milliseconds(30);
    const auto start = std::chrono::steady_clock::now();
    CallResult result =
        host_.runStream("boundary", request(R"({"mode":"wait","stream_throw":"error"})"), options);
    EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1500));
    EXPECT_EQ(result.status, sdk::Status::cancelled);
    EXPECT_FALSE(result.error.has_value());
    EXPECT_EQ(result.complete_calls, 1U);
    EXPECT_TRUE(result.violations.empty()) << ::testing::PrintToString(result.violations);
}

TEST_F(ThreadedStreamTest, ManyStreamsInParallel) {
    std::vector<std::thread> threads;
    std::vector<CallResult> results(8);
    for (std::size_t t = 0; t < results.size(); ++t) {
        threads.emplace_back([&, t] {
            StreamOptions options;
            options.capacity = 1 + t % 3;
            options.reject_when_full = t % 2 == 0;
            results[t] =
                host_.runStream("boundary", request(R"({"mode":"count","count":50})"), options);
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    for (const CallResult& result : results) {
        EXPECT_TRUE(result.ok()) << ::testing::PrintToString(result.violations);
        EXPECT_EQ(result.items, expectedItems(50));
    }
}

// The fake host catches the plugin's protocol mistakes.

TEST(FakeHostStreams, TwoCompletesAndEmitAfterCompleteAreViolations) {
    FakeHost host(&sdk_test_plugin_entry);
    CallResult result = host.runStream("boundary", request(R"({"raw":"twice"})"));
    EXPECT_EQ(result.status, sdk::Status::ok);
    EXPECT_EQ(result.items, std::vector<std::string>{"{\"a\":1}"});
    EXPECT_EQ(result.complete_calls, 2U);
    EXPECT_EQ(result.violations, (std::vector<std::string>{"emit after complete()",
                                                           "complete() called more than once"}));
}

TEST(FakeHostStreams, AStreamThatNeverCompletesIsReportedNotHung) {
    FakeHost host(&sdk_hang_plugin_entry);
    ASSERT_TRUE(host.loaded()) << host.initError();
    StreamOptions options;
    options.timeout = milliseconds(20);
    options.grace = milliseconds(50);
    const auto start = std::chrono::steady_clock::now();
    CallResult result = host.runStream("hang", {}, options);
    EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1500));
    EXPECT_EQ(result.status, sdk::Status::error);
    EXPECT_EQ(result.complete_calls, 0U);
    ASSERT_EQ(result.violations.size(), 1U);
    EXPECT_EQ(result.violations[0],
              "the stream did not complete within the grace period after cancel");
    EXPECT_TRUE(host.abandoned());
}

}  // namespace
