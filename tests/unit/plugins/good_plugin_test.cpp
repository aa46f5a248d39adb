// The good fixture plugins driven through their handles: every plugin callback reaches the host
// through the real host API table (host_api.cpp) and lands in a TestCall / PluginWriter.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fixture_paths.h"
#include "plugins/plugin_registry.h"
#include "test_call.h"

namespace crank::plugins {
namespace {

using testing::makeRequest;
using testing::scenario;
using testing::TestCall;

class GoodPlugin : public ::testing::Test {
protected:
    void SetUp() override {
        LoadPluginsOptions options;
        options.directories = {scenario("good"), scenario("old_build")};
        registry_ = loadPlugins(options);
        ASSERT_TRUE(registry_.allLoaded());
        echo_ = registry_.adapter("echo");
        ASSERT_NE(echo_, nullptr);
    }

    PluginRegistry registry_;
    const AdapterHandle* echo_ = nullptr;
};

std::vector<std::string> numbered(int count) {
    std::vector<std::string> items;
    for (int n = 0; n < count; ++n) {
        items.push_back("{\"n\":" + std::to_string(n) + "}");
    }
    return items;
}

TEST_F(GoodPlugin, AdapterDescribesItself) {
    EXPECT_EQ(echo_->name(), "echo");
    EXPECT_EQ(echo_->version(), "1.2.0");
    EXPECT_EQ(echo_->description(), "echoes the request");
    EXPECT_EQ(echo_->pluginName(), "good");
    EXPECT_EQ(echo_->capabilities(), CRANK_CAP_UNARY | CRANK_CAP_SERVER_STREAM);
    EXPECT_EQ(echo_->modes(), CRANK_MODE_UNARY | CRANK_MODE_WINDOW | CRANK_MODE_SESSION);
    EXPECT_TRUE(echo_->supportsMode(CRANK_MODE_WINDOW));
    EXPECT_FALSE(echo_->supportsMode(CRANK_MODE_ASYNC_JOB));
    EXPECT_EQ(echo_->configSchemaJson(), R"({"type":"object"})");
}

TEST_F(GoodPlugin, UnaryCallEmitsThroughTheHostApi) {
    TestCall call;
    const crank_request request = makeRequest("get_thing", R"({"x":1})");
    EXPECT_EQ(echo_->unaryCall(call, request), CRANK_OK);
    EXPECT_EQ(call.items(), std::vector<std::string>{R"({"echo":{"x":1}})"});
    EXPECT_FALSE(call.errorCode().has_value());
}

TEST_F(GoodPlugin, UnaryCallReportsErrorsThroughTheHostApi) {
    TestCall call;
    EXPECT_EQ(echo_->unaryCall(call, makeRequest("fail", "{}")), CRANK_ERROR);
    EXPECT_EQ(call.errorCode(), CRANK_ERR_UPSTREAM);
    EXPECT_EQ(call.errorMessage(), "upstream said no");
    EXPECT_TRUE(call.items().empty());
}

TEST_F(GoodPlugin, ValidateCollectsDiagnostics) {
    EXPECT_TRUE(echo_->validate(R"({"url":"x"})").empty());
    const std::vector<Diagnostic> diagnostics = echo_->validate(R"({"bad":1})");
    ASSERT_EQ(diagnostics.size(), 1U);
    EXPECT_EQ(diagnostics[0].path, "bad");
    EXPECT_EQ(diagnostics[0].message, "bad is not allowed");
}

TEST_F(GoodPlugin, StreamEmitsFromItsOwnThreadAndCompletes) {
    TestCall call;
    crank_stream* stream = echo_->streamOpen(call, makeRequest("watch", "{}"));
    ASSERT_NE(stream, nullptr);
    ASSERT_TRUE(call.waitUntil([](const TestCall& c) { return !c.completionsUnlocked().empty(); }));
    echo_->streamDestroy(stream);
    EXPECT_EQ(call.items(), numbered(5));
    EXPECT_EQ(call.completions(), std::vector<crank_status>{CRANK_OK});
    EXPECT_EQ(call.cursor(), "4");
    EXPECT_DOUBLE_EQ(call.lastProgress(), 5.0);
}

TEST_F(GoodPlugin, StreamPausesUntilResumed) {
    TestCall call;
    call.answer = [](std::size_t attempt) {
        return attempt == 1 ? CRANK_EMIT_ACCEPTED_PAUSE : CRANK_EMIT_ACCEPTED;
    };
    crank_stream* stream = echo_->streamOpen(call, makeRequest("watch", "{}"));
    ASSERT_NE(stream, nullptr);
    ASSERT_TRUE(call.waitUntil([](const TestCall& c) { return c.itemsUnlocked().size() == 2; }));
    // Paused: nothing more arrives until stream_resume.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(call.items().size(), 2U);
    EXPECT_TRUE(call.completions().empty());
    echo_->streamResume(stream);
    ASSERT_TRUE(call.waitUntil([](const TestCall& c) { return !c.completionsUnlocked().empty(); }));
    echo_->streamDestroy(stream);
    EXPECT_EQ(call.items(), numbered(5));
    EXPECT_EQ(call.completions(), std::vector<crank_status>{CRANK_OK});
}

TEST_F(GoodPlugin, StreamRetriesAnItemRejectedAsFull) {
    TestCall call;
    call.answer = [](std::size_t attempt) {
        return attempt == 2 ? CRANK_EMIT_REJECTED_FULL : CRANK_EMIT_ACCEPTED;
    };
    crank_stream* stream = echo_->streamOpen(call, makeRequest("watch", "{}"));
    ASSERT_NE(stream, nullptr);
    ASSERT_TRUE(call.waitUntil([](const TestCall& c) { return c.attemptsUnlocked() == 3; }));
    EXPECT_EQ(call.items(), numbered(2));
    echo_->streamResume(stream);
    ASSERT_TRUE(call.waitUntil([](const TestCall& c) { return !c.completionsUnlocked().empty(); }));
    echo_->streamDestroy(stream);
    EXPECT_EQ(call.items(), numbered(5));  // nothing lost, nothing doubled
}

TEST_F(GoodPlugin, StreamCancelEndsWithCancelled) {
    TestCall call;
    crank_stream* stream = echo_->streamOpen(call, makeRequest("endless", "{}"));
    ASSERT_NE(stream, nullptr);
    ASSERT_TRUE(call.waitUntil([](const TestCall& c) { return c.itemsUnlocked().size() >= 3; }));
    echo_->streamCancel(stream);
    ASSERT_TRUE(call.waitUntil([](const TestCall& c) { return !c.completionsUnlocked().empty(); }));
    echo_->streamDestroy(stream);
    EXPECT_EQ(call.completions(), std::vector<crank_status>{CRANK_CANCELLED});
}

TEST_F(GoodPlugin, StreamStopsWhenTheHostSaysCancelledOnEmit) {
    TestCall call;
    call.answer = [](std::size_t attempt) {
        return attempt >= 3 ? CRANK_EMIT_CANCELLED : CRANK_EMIT_ACCEPTED;
    };
    crank_stream* stream = echo_->streamOpen(call, makeRequest("endless", "{}"));
    ASSERT_NE(stream, nullptr);
    ASSERT_TRUE(call.waitUntil([](const TestCall& c) { return !c.completionsUnlocked().empty(); }));
    echo_->streamDestroy(stream);
    EXPECT_EQ(call.items(), numbered(3));
    EXPECT_EQ(call.completions(), std::vector<crank_status>{CRANK_CANCELLED});
}

TEST_F(GoodPlugin, StreamThatCannotStartReportsWhy) {
    TestCall call;
    EXPECT_EQ(echo_->streamOpen(call, makeRequest("refuse", "{}")), nullptr);
    EXPECT_EQ(call.errorCode(), CRANK_ERR_UNAVAILABLE);
    EXPECT_EQ(call.errorMessage(), "cannot connect");
    EXPECT_TRUE(call.completions().empty());
}

TEST_F(GoodPlugin, AggregatorCountsAndWritesThroughTheHostApi) {
    const AggregatorHandle* count = registry_.aggregator("count");
    ASSERT_NE(count, nullptr);
    EXPECT_EQ(count->pluginName(), "good");
    EXPECT_EQ(count->description(), "counts items");
    EXPECT_NE(count->outputSchemaJson().find("integer"), std::string::npos);
    EXPECT_TRUE(count->validate("{}").empty());  // no validate(): nothing to report
    TestCall call;
    crank_aggregate* aggregate = count->create("{}", call);
    ASSERT_NE(aggregate, nullptr);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(count->accept(aggregate, R"({"a":1})"), CRANK_OK);
    }
    PluginWriter writer(100);
    EXPECT_EQ(count->snapshot(aggregate, writer), CRANK_OK);
    EXPECT_EQ(writer.text(), R"({"count":3})");
    PluginWriter tiny(5);
    EXPECT_EQ(count->snapshot(aggregate, tiny), CRANK_ERROR);
    EXPECT_TRUE(tiny.overflowed());
    count->destroy(aggregate);
}

TEST_F(GoodPlugin, OlderBuildWithSmallerStructsWorks) {
    const PluginInfo& info = registry_.plugins()[1];
    EXPECT_EQ(info.name, "old");
    EXPECT_EQ(info.path, CRANK_OLD_BUILD_PLUGIN_PATH);
    EXPECT_EQ(info.status, PluginStatus::loaded);
    const AdapterHandle* old_echo = registry_.adapter("old_echo");
    ASSERT_NE(old_echo, nullptr);
    EXPECT_EQ(old_echo->capabilities(), CRANK_CAP_UNARY);
    EXPECT_TRUE(old_echo->validate("{}").empty());  // no validate
    TestCall call;
    EXPECT_EQ(old_echo->unaryCall(call, makeRequest("x", "{}")), CRANK_OK);
    EXPECT_EQ(call.items(), std::vector<std::string>{R"({"old":true,"state":"kept"})"});
    // Members beyond its struct_size are absent: no stream functions.
    TestCall stream_call;
    EXPECT_EQ(old_echo->streamOpen(stream_call, makeRequest("x", "{}")), nullptr);
    EXPECT_EQ(stream_call.errorCode(), CRANK_ERR_UNSUPPORTED);
    const AggregatorHandle* noop = registry_.aggregator("old_noop");
    ASSERT_NE(noop, nullptr);
    crank_aggregate* aggregate = noop->create("{}", call);
    PluginWriter writer(10);
    EXPECT_EQ(noop->snapshot(aggregate, writer), CRANK_OK);
    EXPECT_EQ(writer.text(), "{}");
    noop->destroy(aggregate);
}

}  // namespace
}  // namespace crank::plugins
