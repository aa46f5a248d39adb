// The C++ layer of the SDK (crank/sdk.hpp) through the fake host: nothing escapes a C entry
// point, struct_size is honoured, registration refusals fail init with a message.
#include <cstddef>
#include <cstring>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "test_plugins.h"
#include <crank/sdk.hpp>
#include <crank/testing/fake_host.hpp>

namespace {

namespace sdk = crank::sdk;
using crank::testing::FakeHost;
using crank::testing::RequestSpec;

RequestSpec request(std::string request_json) {
    RequestSpec spec;
    spec.request_json = std::move(request_json);
    return spec;
}

TEST(SdkJson, NestingDepthSkipsStringsAndEscapes) {
    EXPECT_EQ(sdk::jsonNestingDepth("1"), 0U);
    EXPECT_EQ(sdk::jsonNestingDepth(R"({"a":[1,{"b":[]}]})"), 4U);
    EXPECT_EQ(sdk::jsonNestingDepth(R"(["[[[{{{", "\"[[["])"), 1U);
    EXPECT_EQ(sdk::jsonNestingDepth(std::string(100000, '[')), 100000U);  // unbalanced: counted
    EXPECT_EQ(sdk::jsonNestingDepth("]]]][[1]]"), 2U);
}

TEST(SdkLayer, RegistersEverythingWithItsInfo) {
    FakeHost host(&sdk_test_plugin_entry);
    ASSERT_TRUE(host.loaded()) << host.initError();
    EXPECT_EQ(host.pluginName(), "sdk_test");
    EXPECT_EQ(crank::sdk::toView(host.descriptor().version), "1.2.3");
    EXPECT_EQ(host.descriptor().abi_major, static_cast<std::uint32_t>(CRANK_ABI_MAJOR));
    EXPECT_EQ(host.descriptor().struct_size, sizeof(crank_plugin_descriptor));
    EXPECT_EQ(host.adapterNames(),
              (std::vector<std::string>{"boundary", "chatty", "request_echo"}));
    EXPECT_EQ(host.aggregatorNames(), (std::vector<std::string>{"sum"}));
    const crank_adapter boundary = host.adapter("boundary");
    EXPECT_EQ(sdk::toView(boundary.description), "throws on request");
    EXPECT_EQ(sdk::toView(boundary.config_schema_json), "{\"type\":\"object\"}");
    EXPECT_EQ(boundary.capabilities, CRANK_CAP_UNARY | CRANK_CAP_SERVER_STREAM);
    EXPECT_EQ(boundary.modes, CRANK_MODE_UNARY | CRANK_MODE_WINDOW);
    EXPECT_NE(boundary.stream_open, nullptr);
    const crank_adapter echo = host.adapter("request_echo");
    EXPECT_NE(echo.unary_call, nullptr);
    EXPECT_EQ(echo.stream_open, nullptr) << "no CRANK_CAP_SERVER_STREAM, no stream functions";
    EXPECT_TRUE(host.registrationErrors().empty());
}

TEST(SdkLayer, ShutdownDestroysTheRegisteredObjects) {
    const int before = sdk_tests::live_objects.load();
    {
        FakeHost host(&sdk_test_plugin_entry);
        ASSERT_TRUE(host.loaded());
        EXPECT_EQ(sdk_tests::live_objects.load(), before + 4);
    }
    EXPECT_EQ(sdk_tests::live_objects.load(), before);
    FakeHost again(&sdk_test_plugin_entry);  // and the library can be initialised again
    EXPECT_TRUE(again.loaded()) << again.initError();
}

TEST(SdkLayer, ASecondConcurrentInitIsRefused) {
    FakeHost first(&sdk_test_plugin_entry);
    ASSERT_TRUE(first.loaded());
    FakeHost second(&sdk_test_plugin_entry);
    EXPECT_FALSE(second.loaded());
    EXPECT_NE(second.initError().find("already initialised"), std::string::npos);
}

// --- exceptions at every boundary ------------------------------------------------------------

struct ThrowCase {
    const char* kind;
    sdk::ErrorCode code;
    const char* message;
    const char* details;
};

// Readable names in ctest and gtest output.
// NOLINTNEXTLINE(readability-identifier-naming): the name gtest looks for
void PrintTo(const ThrowCase& c, std::ostream* out) {
    *out << c.kind;
}

class SdkBoundary : public ::testing::TestWithParam<ThrowCase> {
protected:
    FakeHost host_{&sdk_test_plugin_entry};
};

INSTANTIATE_TEST_SUITE_P(
    Kinds, SdkBoundary,
    ::testing::Values(ThrowCase{"error", sdk::ErrorCode::upstream, "upstream said no",
                                R"({"http_status":503})"},
                      ThrowCase{"std", sdk::ErrorCode::internal, "std failure", ""},
                      ThrowCase{"unknown", sdk::ErrorCode::internal, "unknown exception", ""}),
    [](const ::testing::TestParamInfo<ThrowCase>& param_info) {
        return std::string(param_info.param.kind);
    });

TEST_P(SdkBoundary, Validate) {
    const ThrowCase& c = GetParam();
    auto result = host_.validate("boundary", std::string(R"({"throw":")") + c.kind + "\"}");
    EXPECT_EQ(result.status, sdk::Status::error);
    ASSERT_EQ(result.diagnostics.size(), 1U);
    EXPECT_EQ(result.diagnostics[0].code, c.code);
    EXPECT_EQ(result.diagnostics[0].message, c.message);
    EXPECT_EQ(result.diagnostics[0].details_json, c.details);
    EXPECT_TRUE(result.violations.empty());

    auto aggregator = host_.validate("sum", std::string(R"({"validate_throw":")") + c.kind + "\"}");
    EXPECT_EQ(aggregator.status, sdk::Status::error);
    ASSERT_EQ(aggregator.diagnostics.size(), 1U);
    EXPECT_EQ(aggregator.diagnostics[0].message, c.message);
}

TEST_P(SdkBoundary, UnaryCall) {
    const ThrowCase& c = GetParam();
    auto result =
        host_.callUnary("boundary", request(std::string(R"({"throw":")") + c.kind + "\"}"));
    EXPECT_EQ(result.status, sdk::Status::error);
    ASSERT_TRUE(result.error.has_value());
    EXPECT_EQ(result.error->code, c.code);
    EXPECT_EQ(result.error->message, c.message);
    EXPECT_EQ(result.error->details_json, c.details);
    EXPECT_TRUE(result.items.empty());
    EXPECT_TRUE(result.violations.empty());
}

TEST_P(SdkBoundary, StreamOpen) {
    const ThrowCase& c = GetParam();
    auto result =
        host_.runStream("boundary", request(std::string(R"({"throw":")") + c.kind + "\"}"));
    EXPECT_FALSE(result.opened);
    EXPECT_EQ(result.status, sdk::Status::error);
    ASSERT_TRUE(result.error.has_value());
    EXPECT_EQ(result.error->code, c.code);
    EXPECT_EQ(result.error->message, c.message);
    EXPECT_EQ(result.complete_calls, 0U);
    EXPECT_TRUE(result.violations.empty());
}

TEST_P(SdkBoundary, ThreadedStreamRun) {
    const ThrowCase& c = GetParam();
    auto result = host_.runStream(
        "boundary",
        request(std::string(R"({"mode":"count","count":5,"throw_at":2,"stream_throw":")") + c.kind +
                "\"}"));
    EXPECT_TRUE(result.opened);
    EXPECT_EQ(result.status, sdk::Status::error);
    ASSERT_TRUE(result.error.has_value());
    EXPECT_EQ(result.error->code, c.code);
    EXPECT_EQ(result.error->message, c.message);
    EXPECT_EQ(result.items, (std::vector<std::string>{"{\"i\":0}", "{\"i\":1}"}));
    EXPECT_EQ(result.complete_calls, 1U);
    EXPECT_TRUE(result.violations.empty());
}

TEST_P(SdkBoundary, AggregatorCreateAcceptSnapshot) {
    const ThrowCase& c = GetParam();
    for (const char* where : {"create", "accept", "snapshot"}) {
        SCOPED_TRACE(where);
        auto result = host_.aggregate(
            "sum", std::string(R"({"throw_in":")") + where + R"(","throw":")" + c.kind + "\"}",
            {R"({"v":1})", R"({"v":2})"});
        EXPECT_EQ(result.status, sdk::Status::error);
        ASSERT_TRUE(result.error.has_value());
        EXPECT_EQ(result.error->code, c.code);
        EXPECT_EQ(result.error->message, c.message);
        EXPECT_TRUE(result.violations.empty());
    }
}

TEST(SdkLayer, OpenStreamReturningNullIsAnInternalError) {
    FakeHost host(&sdk_test_plugin_entry);
    auto result = host.runStream("boundary", request(R"({"raw":"null"})"));
    EXPECT_FALSE(result.opened);
    ASSERT_TRUE(result.error.has_value());
    EXPECT_EQ(result.error->code, sdk::ErrorCode::internal);
    EXPECT_EQ(result.error->message, "openStream returned no stream");
    EXPECT_TRUE(result.violations.empty());
}

TEST(SdkLayer, StreamStartThrowingFailsTheOpen) {
    FakeHost host(&sdk_test_plugin_entry);
    auto result = host.runStream("boundary", request(R"({"raw":"throw_in_start"})"));
    EXPECT_FALSE(result.opened);
    ASSERT_TRUE(result.error.has_value());
    EXPECT_EQ(result.error->code, sdk::ErrorCode::unavailable);
    EXPECT_TRUE(result.violations.empty());
}

TEST(SdkLayer, StreamCancelThrowingIsLoggedNotPropagated) {
    FakeHost host(&sdk_test_plugin_entry);
    crank::testing::StreamOptions options;
    options.timeout = std::chrono::milliseconds(20);
    auto result = host.runStream("boundary", request(R"({"raw":"throw_on_cancel"})"), options);
    EXPECT_EQ(result.status, sdk::Status::cancelled);
    EXPECT_EQ(result.cancels, 1U);
    bool logged = false;
    for (const auto& line : host.logs()) {
        logged =
            logged || (line.level == sdk::LogLevel::error &&
                       line.message == "Stream::cancel threw: cancel blew up" && line.with_call);
    }
    EXPECT_TRUE(logged);
}

TEST(SdkLayer, AggregatorCreateReturningNullIsAnInternalError) {
    FakeHost host(&sdk_test_plugin_entry);
    auto result = host.aggregate("sum", R"({"null":"yes"})", {});
    ASSERT_TRUE(result.error.has_value());
    EXPECT_EQ(result.error->code, sdk::ErrorCode::internal);
    EXPECT_TRUE(result.violations.empty());
}

TEST(SdkLayer, SnapshotLargerThanTheWriterIsResourceExhausted) {
    FakeHost host(&sdk_test_plugin_entry);
    auto fits = host.aggregate("sum", R"({"big":10})", {R"({"v":4})"}, 100);
    EXPECT_EQ(fits.status, sdk::Status::ok);
    EXPECT_EQ(fits.snapshot, R"({"sum":4,"count":1,"pad":"xxxxxxxxxx"})");
    for (const char* config :
         {R"({"big":200})", R"({"big":200,"throw_in":"overflow_then_throw"})"}) {
        auto result = host.aggregate("sum", config, {R"({"v":4})"}, 100);
        EXPECT_EQ(result.status, sdk::Status::error);
        ASSERT_TRUE(result.error.has_value());
        EXPECT_EQ(result.error->code, sdk::ErrorCode::resource_exhausted);
        EXPECT_EQ(result.error->message, "the result is larger than the host allows");
    }
}

TEST(SdkLayer, AggregateHandleSnapshotsRepeatedlyWithoutReset) {
    FakeHost host(&sdk_test_plugin_entry);
    auto handle = host.createAggregate("sum", "{}");
    ASSERT_TRUE(handle.created());
    EXPECT_EQ(handle.accept(R"({"v":2})"), sdk::Status::ok);
    EXPECT_EQ(handle.snapshot().text, R"({"sum":2,"count":1})");
    EXPECT_EQ(handle.accept(R"({"v":5})"), sdk::Status::ok);
    EXPECT_EQ(handle.snapshot().text, R"({"sum":7,"count":2})");
    EXPECT_EQ(handle.snapshot().text, R"({"sum":7,"count":2})");
}

// --- validation --------------------------------------------------------------------------------

TEST(SdkLayer, DiagnosticsEscapeThePathAndReportEachProblem) {
    FakeHost host(&sdk_test_plugin_entry);
    auto result = host.validate("boundary", R"({"diag":"two"})");
    EXPECT_EQ(result.status, sdk::Status::error);
    ASSERT_EQ(result.diagnostics.size(), 2U);
    EXPECT_EQ(result.diagnostics[0].path, "a\"b\\c");
    EXPECT_EQ(result.diagnostics[0].details_json, R"({"path":"a\"b\\c"})");
    EXPECT_EQ(result.diagnostics[0].code, sdk::ErrorCode::invalid_argument);
    EXPECT_EQ(result.diagnostics[1].path, "items.0");
    EXPECT_EQ(result.diagnostics[1].message, "second problem");
    EXPECT_TRUE(result.violations.empty());
    EXPECT_TRUE(host.validate("boundary", "{}").ok());
    EXPECT_TRUE(host.validate("chatty", "{}").ok()) << "the default validate accepts everything";
    auto sum = host.validate("sum", R"({"big":2000000})");
    ASSERT_EQ(sum.diagnostics.size(), 1U);
    EXPECT_EQ(sum.diagnostics[0].path, "big");
}

TEST(SdkLayer, UnknownNamesThrowInTheFakeHost) {
    FakeHost host(&sdk_test_plugin_entry);
    EXPECT_THROW(host.validate("nope", "{}"), std::invalid_argument);
    EXPECT_THROW(host.callUnary("nope", {}), std::invalid_argument);
    EXPECT_THROW(host.aggregate("nope", "{}", {}), std::invalid_argument);
}

// --- the request and its struct_size -----------------------------------------------------------

TEST(SdkLayer, RequestReadsEveryMember) {
    FakeHost host(&sdk_test_plugin_entry);
    RequestSpec spec;
    spec.operation_name = "op";
    spec.config_json = R"({"c":1})";
    spec.request_json = R"({"r":2})";
    spec.input_json = R"({"i":3})";
    spec.auth_json = R"({"token":"t"})";
    spec.cursor = "cur";
    spec.timeout_ms = 1500;
    spec.max_item_bytes = 4096;
    auto result = host.callUnary("request_echo", spec);
    ASSERT_EQ(result.status, sdk::Status::ok);
    ASSERT_EQ(result.items.size(), 1U);
    EXPECT_EQ(result.items[0],
              R"({"operation_name":"op","config_json":"{\"c\":1}","request_json":"{\"r\":2}",)"
              R"("input_json":"{\"i\":3}","auth_json":"{\"token\":\"t\"}","cursor":"cur",)"
              R"("timeout_ms":1500,"max_item_bytes":4096})");
}

TEST(SdkLayer, RequestHonoursASmallerStructSize) {
    FakeHost host(&sdk_test_plugin_entry);
    RequestSpec spec;
    spec.operation_name = "op";
    spec.auth_json = R"({"token":"t"})";
    spec.cursor = "cur";
    spec.timeout_ms = 1500;
    spec.max_item_bytes = 4096;
    spec.struct_size = offsetof(crank_request, auth_json);  // an older host's request
    auto result = host.callUnary("request_echo", spec);
    ASSERT_EQ(result.items.size(), 1U);
    EXPECT_EQ(result.items[0], R"({"operation_name":"op","config_json":"{}","request_json":"{}",)"
                               R"("input_json":"{}","auth_json":"","cursor":"",)"
                               R"("timeout_ms":0,"max_item_bytes":0})");
}

TEST(SdkLayer, TraceContextIsReadOnlyFromAnAbi14RequestAndNeverDoublesAConfiguredHeader) {
    crank_request raw;
    std::memset(&raw, 0x5a, sizeof raw);  // garbage beyond struct_size must not be read
    raw.struct_size = offsetof(crank_request, traceparent);  // an ABI 1.3 host
    const sdk::Request old(&raw);
    EXPECT_TRUE(old.traceparent.empty());
    EXPECT_TRUE(old.traceHeaders().empty());

    raw.struct_size = sizeof raw;
    const std::string parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    raw.traceparent = crank_str{parent.data(), parent.size()};
    raw.tracestate = crank_str{"a=1", 3};
    const sdk::Request r(&raw);
    EXPECT_EQ(r.traceparent, parent);
    using Pairs = std::vector<std::pair<std::string, std::string>>;
    Pairs out{{"X-Team", "blue"}};
    r.appendTraceHeaders(out);
    ASSERT_EQ(out.size(), 3U);
    EXPECT_EQ(out[1], (std::pair<std::string, std::string>{"traceparent", parent}));
    EXPECT_EQ(out[2], (std::pair<std::string, std::string>{"tracestate", "a=1"}));
    // An operator's own TraceParent (any case) is kept, and not doubled.
    const Pairs configured{{"TraceParent", "00-operator"}};
    Pairs extra;
    r.appendTraceHeaders(extra, &configured);
    ASSERT_EQ(extra.size(), 1U);
    EXPECT_EQ(extra[0].first, "tracestate");
}

TEST(SdkLayer, RequestDirectlyFromACStruct) {
    crank_request raw;
    std::memset(&raw, 0x5a, sizeof raw);  // garbage beyond struct_size must not be read
    raw.struct_size = offsetof(crank_request, timeout_ms);
    raw.operation_name = crank_str{"op", 2};
    raw.config_json = crank_str{nullptr, 0};
    raw.request_json = crank_str{"{}", 2};
    raw.input_json = crank_str{nullptr, 0};
    raw.auth_json = crank_str{"a", 1};
    raw.cursor = crank_str{"c", 1};
    const sdk::Request r(&raw);
    EXPECT_EQ(r.operation_name, "op");
    EXPECT_TRUE(r.config_json.empty());
    EXPECT_EQ(r.request_json, "{}");
    EXPECT_EQ(r.auth_json, "a");
    EXPECT_EQ(r.cursor, "c");
    EXPECT_EQ(r.timeout_ms, 0);
    EXPECT_EQ(r.max_item_bytes, 0);
    const sdk::Request none(nullptr);
    EXPECT_TRUE(none.operation_name.empty());
    raw.struct_size = sizeof(size_t);  // only struct_size itself
    const sdk::Request tiny(&raw);
    EXPECT_TRUE(tiny.operation_name.empty());
    EXPECT_TRUE(tiny.cursor.empty());
}

// --- the call's other callbacks ----------------------------------------------------------------

TEST(SdkLayer, CallProgressCursorLogsAndMalformedItems) {
    FakeHost host(&sdk_test_plugin_entry);
    host.setLogLevel(sdk::LogLevel::info);
    auto result = host.callUnary("chatty", request("{}"));
    EXPECT_EQ(result.status, sdk::Status::ok);
    EXPECT_EQ(result.items, (std::vector<std::string>{"[1,2,3]"}));
    EXPECT_EQ(result.malformed_items, 1U);
    EXPECT_EQ(result.cursor, "c2");
    ASSERT_EQ(result.progress.size(), 2U);
    EXPECT_EQ(result.progress[0].progress, 1);
    EXPECT_EQ(result.progress[0].total, 2);
    EXPECT_EQ(result.progress[0].message, "half");
    EXPECT_LT(result.progress[1].total, 0);
    const auto logs = host.logs();
    ASSERT_EQ(logs.size(), 2U) << "the debug line is filtered by log_enabled";
    EXPECT_EQ(logs[0].message, "with call");
    EXPECT_TRUE(logs[0].with_call);
    EXPECT_EQ(logs[1].message, "warn line");
    EXPECT_FALSE(logs[1].with_call);
}

TEST(SdkLayer, EmitBatchCrossesChunks) {
    FakeHost host(&sdk_test_plugin_entry);
    auto result = host.callUnary("chatty", request("\"batch\""));
    EXPECT_EQ(result.items.size(), 150U);
    EXPECT_EQ(result.items.front(), "0");
    EXPECT_EQ(result.items.back(), "149");
    EXPECT_EQ(result.cursor, "150:accepted");
}

TEST(SdkLayer, UnaryCallSeesCancellation) {
    FakeHost host(&sdk_test_plugin_entry);
    crank::testing::UnaryOptions options;
    options.cancel_after = std::chrono::milliseconds(20);
    auto result = host.callUnary("chatty", request("\"wait_cancel\""), options);
    EXPECT_EQ(result.status, sdk::Status::error);
    ASSERT_TRUE(result.error.has_value());
    EXPECT_EQ(result.error->code, sdk::ErrorCode::timeout);
    EXPECT_TRUE(result.violations.empty());
}

// --- registration ------------------------------------------------------------------------------

TEST(SdkRegistration, HostRefusalFailsInitWithItsMessage) {
    FakeHost host(&sdk_duplicate_plugin_entry);
    EXPECT_FALSE(host.loaded());
    EXPECT_NE(host.initError().find("the host refused adapter \"echo\""), std::string::npos)
        << host.initError();
    ASSERT_EQ(host.registrationErrors().size(), 1U);
    EXPECT_EQ(host.registrationErrors()[0], "duplicate adapter \"echo\"");
    EXPECT_TRUE(host.adapterNames().empty());
    // init failed: the library cleaned up itself and can be initialised again.
    FakeHost again(&sdk_duplicate_plugin_entry);
    EXPECT_FALSE(again.loaded());
    EXPECT_EQ(again.initError(), host.initError());
}

TEST(SdkRegistration, InvalidNameIsRefusedByTheSdk) {
    FakeHost host(&sdk_bad_name_plugin_entry);
    EXPECT_FALSE(host.loaded());
    EXPECT_EQ(host.initError(), "adapter name \"Bad-Name\" is invalid: use 1 to 64 of [a-z0-9_]");
    EXPECT_TRUE(host.registrationErrors().empty()) << "the host never saw it";
}

TEST(SdkRegistration, ExceptionsFromTheRegisterFunction) {
    FakeHost std_throw(&sdk_std_throw_plugin_entry);
    EXPECT_FALSE(std_throw.loaded());
    EXPECT_EQ(std_throw.initError(), "registration exploded");
    FakeHost int_throw(&sdk_int_throw_plugin_entry);
    EXPECT_FALSE(int_throw.loaded());
    EXPECT_EQ(int_throw.initError(), "unknown exception");
}

TEST(SdkRegistration, ARefusalCanBeCaughtByThePlugin) {
    FakeHost host(&sdk_tolerant_plugin_entry);
    ASSERT_TRUE(host.loaded()) << host.initError();
    EXPECT_EQ(host.adapterNames(), std::vector<std::string>{"echo"});
    EXPECT_EQ(sdk::toView(host.adapter("echo").description), "first");
    auto result = host.callUnary("echo", request(R"({"x":1})"));
    EXPECT_EQ(result.status, sdk::Status::ok);
}

TEST(SdkRegistration, OlderOrForeignHostTableIsRefusedByThePlugin) {
    crank::testing::FakeHostOptions older;
    older.api_struct_size = offsetof(crank_host_api, writer_append);
    FakeHost host(&sdk_test_plugin_entry, older);
    EXPECT_FALSE(host.loaded());
    EXPECT_NE(host.initError().find("older than the SDK"), std::string::npos) << host.initError();

    crank::testing::FakeHostOptions foreign;
    foreign.abi_major = CRANK_ABI_MAJOR + 1;
    FakeHost other(&sdk_test_plugin_entry, foreign);
    EXPECT_FALSE(other.loaded());
    EXPECT_NE(other.initError().find("major"), std::string::npos) << other.initError();
}

}  // namespace
