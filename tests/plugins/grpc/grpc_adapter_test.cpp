// The gRPC adapter through the SDK's FakeHost (the C ABI, as crankd drives it) against the real
// crank-grpc-fixture: config checks with their paths, describe(), unary calls with every field
// kind, metadata and auth, deadlines, cancels, status mapping with details, large messages,
// unknown fields, channel reuse, and server streams (bounded, never-ending, failing midway,
// paused). Loopback only; the fixtures are stopped by pid when the suite ends.
#include "grpc_adapter.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "grpc_status.h"
#include <crank/sdk.hpp>
#include <crank/testing/fake_host.hpp>

CRANK_PLUGIN_NAMED(grpcAdapterTestEntry, "grpc", "1.0.0", "the gRPC plugin, for its tests",
                   crank::grpc_plugin::registerGrpcPlugin);

namespace crank::grpc_plugin {
namespace {

using crank::testing::CallResult;
using crank::testing::ChildProcess;
using crank::testing::FakeHost;
using crank::testing::RequestSpec;
using crank::testing::StreamOptions;
using crank::testing::UnaryOptions;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

rapidjson::Document parse(std::string_view text) {
    rapidjson::Document doc;
    doc.Parse(text.data(), text.size());
    EXPECT_FALSE(doc.HasParseError()) << text;
    if (doc.HasParseError()) {
        doc.SetObject();
    }
    return doc;
}

std::string str(const rapidjson::Value& object, const char* name) {
    const auto it = object.FindMember(name);
    if (it == object.MemberEnd() || !it->value.IsString()) {
        return "<missing>";
    }
    return {it->value.GetString(), it->value.GetStringLength()};
}

class GrpcAdapterTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        fixture_ = std::make_unique<ChildProcess>(
            std::vector<std::string>{CRANK_GRPC_FIXTURE_PATH, "--listen", "127.0.0.1:0"});
        const std::optional<std::uint16_t> port = fixture_->waitForListeningPort(10s);
        ASSERT_TRUE(port) << fixture_->stderrText();
        target_ = "127.0.0.1:" + std::to_string(*port);
    }
    static void TearDownTestSuite() { fixture_.reset(); }

    void SetUp() override {
        ASSERT_TRUE(fixture_) << "the fixture did not start";
        host_ = std::make_unique<FakeHost>(&grpcAdapterTestEntry);
        ASSERT_TRUE(host_->loaded()) << host_->initError();
    }

    /// A config for `method` of the fixture, descriptors from the descriptor set file.
    static std::string config(const std::string& method, const std::string& extra = "",
                              const std::string& descriptors = CRANK_GRPC_FIXTURE_DESC) {
        return R"({"target":")" + target_ + R"(","method":"crank.fixture.v1.Fixture/)" + method +
               R"(","descriptor_set":")" + descriptors + "\"" + extra + "}";
    }

    CallResult call(const std::string& config_json, const std::string& input,
                    std::int64_t timeout_ms = 10'000, UnaryOptions options = {},
                    std::string auth_json = {}, std::int64_t max_item_bytes = 0) {
        RequestSpec spec;
        spec.config_json = config_json;
        spec.request_json = config_json;
        spec.input_json = input;
        spec.timeout_ms = timeout_ms;
        spec.auth_json = std::move(auth_json);
        spec.max_item_bytes = max_item_bytes;
        options.timeout = std::chrono::milliseconds(timeout_ms) + 5s;
        return host_->callUnary("grpc", spec, options);
    }

    CallResult stream(const std::string& input, StreamOptions options = {},
                      const std::string& extra = "") {
        RequestSpec spec;
        spec.config_json = config("Ticks", extra);
        spec.request_json = spec.config_json;
        spec.input_json = input;
        return host_->runStream("grpc", spec, options);
    }

    /// The fixture's Stats: started/cancelled of `method`, and active streams.
    struct Stats {
        std::int64_t started = 0;
        std::int64_t cancelled = 0;
        std::int64_t active_streams = 0;
    };
    Stats stats(const std::string& method) {
        const CallResult r = call(config("Stats"), "{}");
        EXPECT_TRUE(r.ok()) << (r.error ? r.error->message : "");
        Stats out;
        if (r.items.size() != 1) {
            return out;
        }
        const rapidjson::Document doc = parse(r.items[0]);
        auto count = [&](const char* map) -> std::int64_t {
            const auto m = doc.FindMember(map);
            if (m == doc.MemberEnd() || !m->value.IsObject()) {
                return 0;
            }
            const auto it = m->value.FindMember(method.c_str());
            return it == m->value.MemberEnd() ? 0 : std::stoll(it->value.GetString());
        };
        out.started = count("started");
        out.cancelled = count("cancelled");
        const auto active = doc.FindMember("activeStreams");
        out.active_streams =
            active != doc.MemberEnd() && active->value.IsInt() ? active->value.GetInt() : -1;
        return out;
    }

    /// Polls the fixture until `condition` holds on its Stats of `method` (at most 5 s).
    bool eventually(const std::string& method, const std::function<bool(const Stats&)>& condition) {
        const auto deadline = Clock::now() + 5s;
        while (Clock::now() < deadline) {
            if (condition(stats(method))) {
                return true;
            }
            std::this_thread::sleep_for(20ms);
        }
        return false;
    }

    static std::unique_ptr<ChildProcess> fixture_;
    static std::string target_;
    std::unique_ptr<FakeHost> host_;
};

std::unique_ptr<ChildProcess> GrpcAdapterTest::fixture_;
std::string GrpcAdapterTest::target_;

// --- config checks ------------------------------------------------------------------------------

TEST_F(GrpcAdapterTest, AValidConfigPasses) {
    const auto r = host_->validate("grpc", config("Echo"));
    EXPECT_TRUE(r.ok()) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
    EXPECT_TRUE(r.violations.empty());
}

TEST_F(GrpcAdapterTest, ConfigProblemsAreNamedByPath) {
    auto first = [&](const std::string& json) {
        const auto r = host_->validate("grpc", json);
        EXPECT_FALSE(r.ok()) << json;
        return r.diagnostics.empty() ? testing::Diagnostic{} : r.diagnostics[0];
    };
    EXPECT_EQ(first(R"({"method":"a.B/C"})").path, "target");
    EXPECT_EQ(first(R"({"target":"127.0.0.1:1"})").path, "method");
    EXPECT_EQ(first(R"({"target":"127.0.0.1:1","method":"Echo"})").path, "method");
    EXPECT_THAT(first(R"({"target":"127.0.0.1:1","method":"a.B/C/D"})").message,
                HasSubstr("package.Service/Method"));
    EXPECT_EQ(first(R"({"target":"{{host}}:1","method":"a.B/C"})").path, "target");
    EXPECT_THAT(first(R"({"target":"http://127.0.0.1:1","method":"a.B/C"})").message,
                HasSubstr("not a URL"));
    EXPECT_EQ(first(config("Echo", R"(,"metadata":{"grpc-timeout":"1S"})")).path,
              "metadata.grpc-timeout");
    EXPECT_EQ(first(config("Echo", R"(,"metadata":{"bad key":"x"})")).path, "metadata.bad key");
    EXPECT_THAT(first(config("Echo", R"(,"metadata":{"x-a":"line\nbreak"})")).message,
                HasSubstr("printable ASCII"));
    EXPECT_EQ(first(config("Echo", R"(,"tls":{"cert_file":"/c.pem"})")).path, "tls.key_file");
    EXPECT_EQ(first(config("Echo", R"(,"tlss":true)")).path, "tlss");
    EXPECT_EQ(first(config("Echo", R"(,"max_receive_bytes":0)")).path, "max_receive_bytes");
    // Upper-case keys are lower-cased, not refused; a templated value is checked per call.
    EXPECT_TRUE(
        host_->validate("grpc", config("Echo", R"(,"metadata":{"X-Tenant":"{{t}}"})")).ok());
}

TEST_F(GrpcAdapterTest, MethodsThatCannotBeCalledAreRefusedWithTheirKind) {
    auto message = [&](const std::string& json) {
        const auto r = host_->validate("grpc", json);
        EXPECT_FALSE(r.ok()) << json;
        EXPECT_TRUE(r.diagnostics.empty() || r.diagnostics[0].path == "method")
            << r.diagnostics[0].path;
        return r.diagnostics.empty() ? std::string() : r.diagnostics[0].message;
    };
    EXPECT_THAT(message(config("Upload")), HasSubstr("Upload is a client-streaming method"));
    EXPECT_THAT(message(config("Chat")), HasSubstr("Chat is a bidirectional method"));
    const std::string unknown = message(config("Nope"));
    EXPECT_THAT(unknown, HasSubstr("Nope"));
    EXPECT_THAT(unknown, HasSubstr("Echo"));  // the methods it has
}

TEST_F(GrpcAdapterTest, AMissingOrBrokenDescriptorSetIsNamed) {
    const auto missing = host_->validate("grpc", config("Echo", "", "/nonexistent/x.desc"));
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.diagnostics[0].path, "descriptor_set");
    EXPECT_THAT(missing.diagnostics[0].message, HasSubstr("/nonexistent/x.desc"));
    const auto garbage = host_->validate("grpc", config("Echo", "", CRANK_GRPC_FIXTURE_PATH));
    ASSERT_FALSE(garbage.ok());
    EXPECT_EQ(garbage.diagnostics[0].path, "descriptor_set");
}

TEST_F(GrpcAdapterTest, DescribeDerivesTheSchemaAndTheTransport) {
    const auto echo = host_->describe("grpc", config("Echo"));
    ASSERT_TRUE(echo.ok()) << (echo.diagnostics.empty() ? "" : echo.diagnostics[0].message);
    const rapidjson::Document e = parse(echo.json);
    EXPECT_EQ(str(e, "transport_behavior"), "request_response");
    EXPECT_THAT(str(e, "description"), HasSubstr("crank.fixture.v1.Fixture/Echo"));
    ASSERT_TRUE(e.HasMember("input_schema"));
    EXPECT_TRUE(e["input_schema"]["properties"].HasMember("byId"));

    const auto ticks = host_->describe("grpc", config("Ticks"));
    ASSERT_TRUE(ticks.ok());
    EXPECT_EQ(str(parse(ticks.json), "transport_behavior"), "server_stream");

    // With a message template the operation gives its own input schema.
    const auto templated =
        host_->describe("grpc", config("Echo", R"(,"message":{"text":"{{q}}"})"));
    ASSERT_TRUE(templated.ok());
    EXPECT_FALSE(parse(templated.json).HasMember("input_schema"));
}

// --- unary calls --------------------------------------------------------------------------------

TEST_F(GrpcAdapterTest, EveryFieldKindRoundTripsInTheJsonMapping) {
    const std::string input =
        R"({"text":"hi","small":-7,"big":"9007199254740993","ubig":"18446744073709551615",
        "signedSmall":-3,"fixed":"12","ratio":0.5,"flag":true,"blob":"AAEC","color":"COLOR_GREEN",
        "inner":{"label":"x","values":[1,2]},"tags":["a","b"],"inners":[{"label":"y"}],
        "counts":{"k":3},"byId":{"5":{"label":"five"}},"word":"w","maybeCount":0,
        "at":"2024-01-02T03:04:05.123Z","wait":"1.500s","extra":{"a":[1,"two",null]},
        "anyValue":"v","maybe":3,"mask":"a.b,c","nothing":{},"tree":{"name":"r","children":[{"name":"c"}]},
        "colors":["COLOR_RED",2],"maybeText":"t"})";
    const CallResult r = call(config("Echo"), input);
    ASSERT_TRUE(r.ok()) << (r.error ? r.error->message : "");
    ASSERT_EQ(r.items.size(), 1U);
    const rapidjson::Document doc = parse(r.items[0]);
    const rapidjson::Value& echo = doc["echo"];
    EXPECT_EQ(str(echo, "big"), "9007199254740993");  // int64 as a string
    EXPECT_EQ(str(echo, "ubig"), "18446744073709551615");
    EXPECT_EQ(str(echo, "color"), "COLOR_GREEN");  // enums as names
    EXPECT_EQ(echo["colors"][1].GetString(), std::string("COLOR_GREEN"));
    EXPECT_EQ(str(echo, "at"), "2024-01-02T03:04:05.123Z");
    EXPECT_EQ(str(echo, "wait"), "1.500s");
    EXPECT_EQ(echo["maybe"].GetInt(), 3);  // wrappers as bare values
    EXPECT_EQ(echo["byId"]["5"]["label"].GetString(), std::string("five"));
    EXPECT_EQ(echo["extra"]["a"][1].GetString(), std::string("two"));
    EXPECT_EQ(echo["maybeCount"].GetInt(), 0);  // proto3 optional, set to zero: printed
    EXPECT_EQ(str(echo, "word"), "w");
    EXPECT_EQ(echo["tree"]["children"][0]["name"].GetString(), std::string("c"));
    EXPECT_THAT(str(doc, "peer"), HasSubstr("127.0.0.1"));
}

TEST_F(GrpcAdapterTest, ZeroValuesArePrinted) {
    const CallResult r = call(config("Echo"), "{}");
    ASSERT_TRUE(r.ok()) << (r.error ? r.error->message : "");
    const rapidjson::Document doc = parse(r.items[0]);
    const rapidjson::Value& echo = doc["echo"];
    EXPECT_EQ(str(echo, "text"), "");
    EXPECT_EQ(echo["small"].GetInt(), 0);
    EXPECT_EQ(str(echo, "big"), "0");
    EXPECT_FALSE(echo["flag"].GetBool());
    EXPECT_EQ(str(echo, "color"), "COLOR_UNSPECIFIED");
    EXPECT_TRUE(echo["tags"].IsArray() && echo["tags"].Empty());
    EXPECT_TRUE(echo["counts"].IsObject() && echo["counts"].ObjectEmpty());
    EXPECT_FALSE(echo.HasMember("inner"));  // unset message fields have presence: left out
}

TEST_F(GrpcAdapterTest, InputThatDoesNotMatchTheMessageIsRefusedByField) {
    const CallResult wrong = call(config("Echo"), R"({"big":1.5})");
    ASSERT_TRUE(wrong.error);
    EXPECT_EQ(wrong.error->code, sdk::ErrorCode::invalid_argument);
    EXPECT_THAT(wrong.error->message, HasSubstr("crank.fixture.v1.EchoRequest"));
    EXPECT_THAT(wrong.error->message, HasSubstr("big"));
    const CallResult two = call(config("Echo"), R"({"word":"a","number":1})");
    ASSERT_TRUE(two.error);
    EXPECT_EQ(two.error->code, sdk::ErrorCode::invalid_argument);
    const CallResult enumeration = call(config("Echo"), R"({"color":"PURPLE"})");
    ASSERT_TRUE(enumeration.error);
    EXPECT_THAT(enumeration.error->message, HasSubstr("PURPLE"));
}

TEST_F(GrpcAdapterTest, AMessageTemplateAndMetadataAndAuthReachTheUpstream) {
    // The host renders templates: request_json is the rendered config.
    RequestSpec spec;
    spec.config_json =
        config("Echo", R"(,"message":{"text":"{{cmd}}"},"metadata":{"X-Tenant":"{{t}}"})");
    spec.request_json =
        config("Echo", R"(,"message":{"text":"metadata"},"metadata":{"X-Tenant":"acme"})");
    spec.input_json = R"({"cmd":"metadata","t":"acme"})";
    spec.auth_json = R"({"type":"bearer","token":"s3cret","headers":{"X-Extra":"e"}})";
    spec.timeout_ms = 5000;
    const CallResult r = host_->callUnary("grpc", spec);
    ASSERT_TRUE(r.ok()) << (r.error ? r.error->message : "");
    const rapidjson::Document doc = parse(r.items[0]);
    const rapidjson::Value& metadata = doc["metadata"];
    EXPECT_EQ(str(metadata, "x-tenant"), "acme");
    EXPECT_EQ(str(metadata, "authorization"), "Bearer s3cret");
    EXPECT_EQ(str(metadata, "x-extra"), "e");
}

TEST_F(GrpcAdapterTest, MetadataThatWouldAbortGrpcIsRefusedAndTheProcessLives) {
    RequestSpec spec;
    spec.config_json = config("Echo", R"(,"metadata":{"x-tenant":"{{t}}"})");
    spec.request_json = config("Echo", R"(,"metadata":{"x-tenant":"a\nb"})");
    spec.timeout_ms = 5000;
    const CallResult r = host_->callUnary("grpc", spec);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, sdk::ErrorCode::invalid_argument);
    EXPECT_THAT(r.error->message, HasSubstr("x-tenant"));
    // An api key in the query has no meaning for gRPC.
    const CallResult query = call(config("Echo"), "{}", 5000, {},
                                  R"({"type":"api_key","in":"query","name":"k","key":"v"})");
    ASSERT_TRUE(query.error);
    EXPECT_THAT(query.error->message, HasSubstr("query"));
    // Basic credentials and an api key in a header become metadata too.
    const CallResult basic = call(config("Echo", R"(,"message":{"text":"metadata"})"), "{}", 5000,
                                  {}, R"({"type":"basic","username":"user","password":"pass"})");
    ASSERT_TRUE(basic.ok()) << (basic.error ? basic.error->message : "");
    EXPECT_EQ(str(parse(basic.items[0])["metadata"], "authorization"), "Basic dXNlcjpwYXNz");
    const CallResult key =
        call(config("Echo", R"(,"message":{"text":"metadata"})"), "{}", 5000, {},
             R"({"type":"api_key","in":"header","name":"X-Api-Key","key":"k1"})");
    ASSERT_TRUE(key.ok()) << (key.error ? key.error->message : "");
    EXPECT_EQ(str(parse(key.items[0])["metadata"], "x-api-key"), "k1");
    // Still alive, still calling.
    EXPECT_TRUE(call(config("Echo"), "{}").ok());
}

TEST_F(GrpcAdapterTest, StatusesBecomeClearErrorsWithTheirDetails) {
    const CallResult fail = call(config("Fail"), "{}");
    ASSERT_TRUE(fail.error);
    EXPECT_EQ(fail.error->code, sdk::ErrorCode::upstream);
    EXPECT_EQ(fail.error->message,
              "gRPC INVALID_ARGUMENT from crank.fixture.v1.Fixture/Fail: bad input");
    const rapidjson::Document details = parse(fail.error->details_json);
    const rapidjson::Value& status = details["grpc_status"];
    EXPECT_EQ(status["code"].GetInt(), 3);
    EXPECT_EQ(str(status, "name"), "INVALID_ARGUMENT");
    ASSERT_EQ(status["details"].Size(), 1U);
    EXPECT_EQ(str(status["details"][0], "@type"), "type.googleapis.com/crank.fixture.v1.Inner");
    EXPECT_EQ(str(status["details"][0], "label"), "why");
    EXPECT_EQ(status["details"][0]["values"][0].GetInt(), 42);

    const CallResult denied = call(config("Echo"), R"({"text":"fail:7:not you"})");
    ASSERT_TRUE(denied.error);
    EXPECT_EQ(denied.error->message,
              "gRPC PERMISSION_DENIED from crank.fixture.v1.Fixture/Echo: not you");
    // A status without a message gets one that says what the code means.
    const CallResult bare = call(config("Echo"), R"({"text":"fail:12:"})");
    ASSERT_TRUE(bare.error);
    EXPECT_THAT(bare.error->message, HasSubstr("UNIMPLEMENTED"));
    EXPECT_THAT(bare.error->message, HasSubstr("does not implement"));
}

TEST_F(GrpcAdapterTest, TheDeadlineIsTheCallsTimeoutAndTheUpstreamSeesIt) {
    const Stats before = stats("Echo");
    const auto start = Clock::now();
    const CallResult r = call(config("Echo"), R"({"text":"sleep:10000"})", 300);
    const auto took = Clock::now() - start;
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, sdk::ErrorCode::timeout);
    EXPECT_THAT(r.error->message, HasSubstr("DEADLINE_EXCEEDED"));
    EXPECT_LT(took, 5s);
    EXPECT_TRUE(eventually("Echo", [&](const Stats& s) { return s.cancelled > before.cancelled; }));
}

TEST_F(GrpcAdapterTest, ACancelledCallCancelsTheUpstreamCall) {
    const Stats before = stats("Echo");
    UnaryOptions options;
    options.cancel_after = 200ms;
    const auto start = Clock::now();
    const CallResult r = call(config("Echo"), R"({"text":"sleep:10000"})", 20'000, options);
    EXPECT_LT(Clock::now() - start, 5s);
    ASSERT_TRUE(r.error);
    EXPECT_TRUE(eventually("Echo", [&](const Stats& s) { return s.cancelled > before.cancelled; }));
}

TEST_F(GrpcAdapterTest, AnUnreachableUpstreamIsUnavailable) {
    const std::string closed =
        R"({"target":"127.0.0.1:1","method":"crank.fixture.v1.Fixture/Echo","descriptor_set":")" +
        std::string(CRANK_GRPC_FIXTURE_DESC) + "\"}";
    const CallResult r = call(closed, "{}", 5000);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, sdk::ErrorCode::unavailable);
    EXPECT_THAT(r.error->message, HasSubstr("UNAVAILABLE"));
}

TEST_F(GrpcAdapterTest, LargeMessagesAreBoundedByTheReceiveLimit) {
    const CallResult over = call(config("Echo"), R"({"text":"big:6000000"})");
    ASSERT_TRUE(over.error);
    EXPECT_EQ(over.error->code, sdk::ErrorCode::resource_exhausted);
    EXPECT_THAT(over.error->message, HasSubstr("larger than max"));
    const CallResult raised =
        call(config("Echo", R"(,"max_receive_bytes":16777216)"), R"({"text":"big:6000000"})");
    ASSERT_TRUE(raised.ok()) << (raised.error ? raised.error->message : "");
    EXPECT_GT(raised.items[0].size(), 8'000'000U);  // base64 of 6 MB
    // The item limit of the host applies to the JSON.
    const CallResult item = call(config("Echo", R"(,"max_receive_bytes":16777216)"),
                                 R"({"text":"big:6000000"})", 10'000, {}, {}, 1'000'000);
    ASSERT_TRUE(item.error);
    EXPECT_EQ(item.error->code, sdk::ErrorCode::resource_exhausted);
}

TEST_F(GrpcAdapterTest, FieldsTheDescriptorsDoNotKnowAreDropped) {
    const CallResult r = call(config("Echo", "", CRANK_GRPC_FIXTURE_TRIMMED_DESC),
                              R"({"text":"metadata","small":4})");
    ASSERT_TRUE(r.ok()) << (r.error ? r.error->message : "");
    const rapidjson::Document doc = parse(r.items[0]);
    EXPECT_EQ(doc["echo"]["small"].GetInt(), 4);
    EXPECT_FALSE(doc.HasMember("served"));
    EXPECT_FALSE(doc.HasMember("metadata"));
}

TEST_F(GrpcAdapterTest, OneChannelServesEveryCallToAnUpstream) {
    std::string peer;
    for (int i = 0; i < 5; ++i) {
        const CallResult r = call(config("Echo", R"(,"metadata":{"x-n":"1"})"), "{}");
        ASSERT_TRUE(r.ok()) << (r.error ? r.error->message : "");
        const std::string seen = str(parse(r.items[0]), "peer");
        if (i == 0) {
            peer = seen;
        }
        EXPECT_EQ(seen, peer) << "call " << i << " came over another connection";
    }
    // Another receive limit is another channel.
    const CallResult other = call(config("Echo", R"(,"max_receive_bytes":5000000)"), "{}");
    ASSERT_TRUE(other.ok());
    EXPECT_NE(str(parse(other.items[0]), "peer"), peer);
}

TEST(GrpcStatusDetails, HostileOrUnknownDetailsNeverBreakTheError) {
    // Not a google.rpc.Status: no details rather than garbage.
    EXPECT_EQ(detailsJson(std::string("\xff\xff\xff\xff", 4), nullptr), "[]");
    EXPECT_EQ(detailsJson(std::string("\x1a\x05\x0a", 3), nullptr), "[]");  // truncated Any
    EXPECT_EQ(detailsJson("", nullptr), "[]");
    // An Any of a type nobody knows: its URL and its bytes in base64.
    // google.rpc.Status{details: [Any{type_url: "t/x.Y", value: "\x01\x02"}]}
    const std::string any = std::string("\x0a\x05t/x.Y\x12\x02\x01\x02", 11);
    const std::string status = std::string("\x1a") + static_cast<char>(any.size()) + any;
    EXPECT_EQ(detailsJson(status, nullptr), R"([{"@type":"t/x.Y","value_base64":"AQI="}])");
    EXPECT_EQ(codeName(16), "UNAUTHENTICATED");
    EXPECT_EQ(codeName(99), "UNKNOWN_CODE");
}

// --- streams ------------------------------------------------------------------------------------

TEST_F(GrpcAdapterTest, AStreamEmitsEveryMessageThenCompletes) {
    const CallResult r = stream(R"({"count":5,"intervalMs":5})");
    ASSERT_TRUE(r.ok()) << (r.error ? r.error->message : "");
    ASSERT_EQ(r.items.size(), 5U);
    EXPECT_EQ(str(parse(r.items[0]), "seq"), "1");
    EXPECT_EQ(str(parse(r.items[4]), "seq"), "5");
    EXPECT_EQ(str(parse(r.items[1]), "color"), "COLOR_GREEN");
    EXPECT_FALSE(r.progress.empty());
}

TEST_F(GrpcAdapterTest, ANeverEndingStreamStopsWhenTheHostEndsItAndTheUpstreamSeesTheCancel) {
    const Stats before = stats("Ticks");
    StreamOptions options;
    options.max_items = 10;
    const CallResult r = stream(R"({"count":0,"intervalMs":5})", options);
    EXPECT_TRUE(r.host_cancelled);
    EXPECT_EQ(r.items.size(), 10U);
    EXPECT_EQ(r.status, sdk::Status::cancelled);
    EXPECT_TRUE(eventually("Ticks", [&](const Stats& s) {
        return s.cancelled > before.cancelled && s.active_streams == 0;
    }));
}

TEST_F(GrpcAdapterTest, AStreamFailingMidwayKeepsItsItemsAndReportsTheStatus) {
    const CallResult r = stream(R"({"count":10,"intervalMs":5,"failAfter":3})");
    EXPECT_EQ(r.items.size(), 3U);
    EXPECT_EQ(r.status, sdk::Status::error);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, sdk::ErrorCode::unavailable);
    EXPECT_THAT(r.error->message, HasSubstr("backend went away"));
}

TEST_F(GrpcAdapterTest, APausedStreamLeavesTheUpstreamWaitingAndLosesNothing) {
    StreamOptions options;
    options.capacity = 3;
    const CallResult r = stream(R"({"count":40,"intervalMs":1})", options);
    ASSERT_TRUE(r.ok()) << (r.error ? r.error->message : "");
    ASSERT_EQ(r.items.size(), 40U);
    EXPECT_GT(r.pauses, 0U);
    for (std::size_t i = 0; i < r.items.size(); ++i) {
        EXPECT_EQ(str(parse(r.items[i]), "seq"), std::to_string(i + 1));
    }
}

TEST_F(GrpcAdapterTest, AStreamMessageOverTheItemLimitIsDroppedNotFatal) {
    RequestSpec spec;
    spec.config_json = config("Ticks");
    spec.request_json = spec.config_json;
    spec.input_json = R"({"count":3,"payloadBytes":5000})";
    spec.max_item_bytes = 1000;
    const CallResult r = host_->runStream("grpc", spec, StreamOptions{});
    EXPECT_EQ(r.status, sdk::Status::ok);
    EXPECT_TRUE(r.items.empty());
    EXPECT_EQ(r.oversized_items, 0U);  // never emitted: the plugin drops them itself
}

}  // namespace
}  // namespace crank::grpc_plugin
