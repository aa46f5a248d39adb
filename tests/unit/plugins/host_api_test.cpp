// The host API table on its own: handle translation, defaults of PluginCall, null safety.
#include "plugins/host_api.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plugins/plugin_host.h"
#include "plugins/plugin_writer.h"
#include "test_call.h"

namespace crank::plugins {
namespace {

using testing::TestCall;

crank_str str(std::string_view text) {
    return {text.data(), text.size()};
}

TEST(HostApi, TableCarriesTheAbiVersionAndEveryFunction) {
    const crank_host_api* api = hostApi();
    EXPECT_EQ(api->struct_size, sizeof(crank_host_api));
    EXPECT_EQ(api->abi_major, static_cast<uint32_t>(CRANK_ABI_MAJOR));
    EXPECT_EQ(api->abi_minor, static_cast<uint32_t>(CRANK_ABI_MINOR));
    EXPECT_NE(api->log_enabled, nullptr);
    EXPECT_NE(api->log, nullptr);
    EXPECT_NE(api->register_adapter, nullptr);
    EXPECT_NE(api->register_aggregator, nullptr);
    EXPECT_NE(api->set_init_error, nullptr);
    EXPECT_NE(api->set_error, nullptr);
    EXPECT_NE(api->emit, nullptr);
    EXPECT_NE(api->emit_batch, nullptr);
    EXPECT_NE(api->progress, nullptr);
    EXPECT_NE(api->is_cancelled, nullptr);
    EXPECT_NE(api->complete, nullptr);
    EXPECT_NE(api->set_cursor, nullptr);
    EXPECT_NE(api->writer_append, nullptr);
}

TEST(HostApi, CallFunctionsReachThePluginCall) {
    const crank_host_api* api = hostApi();
    TestCall call;
    EXPECT_EQ(api->emit(call.handle(), str("1")), CRANK_EMIT_ACCEPTED);
    api->set_error(call.handle(), CRANK_ERR_TIMEOUT, str("too slow"), str(""));
    api->set_cursor(call.handle(), str("c1"));
    api->progress(call.handle(), 2.0, -1.0, str("half"));
    EXPECT_EQ(api->is_cancelled(call.handle()), 0);
    call.cancel();
    EXPECT_EQ(api->is_cancelled(call.handle()), 1);
    api->complete(call.handle(), CRANK_ERROR);
    EXPECT_EQ(call.items(), std::vector<std::string>{"1"});
    EXPECT_EQ(call.errorCode(), CRANK_ERR_TIMEOUT);
    EXPECT_EQ(call.errorMessage(), "too slow");
    EXPECT_EQ(call.cursor(), "c1");
    EXPECT_DOUBLE_EQ(call.lastProgress(), 2.0);
    EXPECT_EQ(call.completions(), std::vector<crank_status>{CRANK_ERROR});
}

TEST(HostApi, EmitBatchDefaultStopsAtPauseAndCountsWhatWasTaken) {
    const crank_host_api* api = hostApi();
    TestCall call;
    call.answer = [](std::size_t attempt) {
        return attempt == 1 ? CRANK_EMIT_ACCEPTED_PAUSE : CRANK_EMIT_ACCEPTED;
    };
    const std::vector<crank_str> items = {str("1"), str("2"), str("3")};
    std::size_t accepted = 99;
    EXPECT_EQ(api->emit_batch(call.handle(), items.data(), items.size(), &accepted),
              CRANK_EMIT_ACCEPTED_PAUSE);
    EXPECT_EQ(accepted, 2U);
    EXPECT_EQ(call.items(), (std::vector<std::string>{"1", "2"}));
}

TEST(HostApi, EmitBatchDefaultDoesNotCountARejectedItem) {
    const crank_host_api* api = hostApi();
    TestCall call;
    call.answer = [](std::size_t attempt) {
        return attempt == 1 ? CRANK_EMIT_REJECTED_FULL : CRANK_EMIT_ACCEPTED;
    };
    const std::vector<crank_str> items = {str("1"), str("2"), str("3")};
    std::size_t accepted = 99;
    EXPECT_EQ(api->emit_batch(call.handle(), items.data(), items.size(), &accepted),
              CRANK_EMIT_REJECTED_FULL);
    EXPECT_EQ(accepted, 1U);
    EXPECT_EQ(api->emit_batch(call.handle(), items.data(), 0, &accepted), CRANK_EMIT_ACCEPTED);
    EXPECT_EQ(accepted, 0U);
    // All taken.
    TestCall all;
    EXPECT_EQ(api->emit_batch(all.handle(), items.data(), items.size(), &accepted),
              CRANK_EMIT_ACCEPTED);
    EXPECT_EQ(accepted, 3U);
}

TEST(HostApi, WriterAppendStopsAtTheBound) {
    const crank_host_api* api = hostApi();
    PluginWriter writer(6);
    EXPECT_EQ(api->writer_append(writer.handle(), str("{\"a\"")), CRANK_OK);
    EXPECT_EQ(api->writer_append(writer.handle(), str(":12}")), CRANK_ERROR);
    EXPECT_EQ(api->writer_append(writer.handle(), str("}")), CRANK_ERROR);  // refuses after
    EXPECT_EQ(writer.text(), "{\"a\"");
}

TEST(HostApi, NullHandlesAndBrokenViewsAreHarmless) {
    const crank_host_api* api = hostApi();
    EXPECT_EQ(api->emit(nullptr, str("1")), CRANK_EMIT_CANCELLED);
    EXPECT_EQ(api->is_cancelled(nullptr), 1);
    EXPECT_EQ(api->writer_append(nullptr, str("x")), CRANK_ERROR);
    EXPECT_EQ(api->register_adapter(nullptr, nullptr), CRANK_ERROR);
    EXPECT_EQ(api->register_aggregator(nullptr, nullptr), CRANK_ERROR);
    api->set_error(nullptr, CRANK_ERR_INTERNAL, str("x"), str(""));
    api->complete(nullptr, CRANK_OK);
    api->set_cursor(nullptr, str("x"));
    api->progress(nullptr, 1, 1, str(""));
    api->set_init_error(nullptr, str("x"));
    api->log(nullptr, nullptr, CRANK_LOG_ERROR, crank_str{nullptr, 12});
    std::size_t accepted = 7;
    EXPECT_EQ(api->emit_batch(nullptr, nullptr, 0, &accepted), CRANK_EMIT_CANCELLED);
    EXPECT_EQ(accepted, 0U);
    EXPECT_EQ(api->emit_batch(nullptr, nullptr, 0, nullptr), CRANK_EMIT_CANCELLED);
    TestCall call;
    EXPECT_EQ(api->emit(call.handle(), crank_str{nullptr, 5}), CRANK_EMIT_ACCEPTED);
    EXPECT_EQ(call.items(), std::vector<std::string>{""});
}

TEST(HostApi, LogGoesThroughTheHostLog) {
    const crank_host_api* api = hostApi();
    PluginHost host("fixture");
    TestCall call;
    EXPECT_EQ(api->log_enabled(host.handle(), CRANK_LOG_ERROR), 1);
    EXPECT_EQ(api->log_enabled(host.handle(), CRANK_LOG_TRACE), 0);  // default level is info
    api->log(host.handle(), call.handle(), CRANK_LOG_WARN, str("from a plugin"));
    api->log(host.handle(), nullptr, static_cast<crank_log_level>(42), str("odd level"));
    EXPECT_EQ(logLevelFromPlugin(static_cast<crank_log_level>(42)), log::Level::error);
    EXPECT_EQ(logLevelFromPlugin(CRANK_LOG_DEBUG), log::Level::debug);
}

}  // namespace
}  // namespace crank::plugins
