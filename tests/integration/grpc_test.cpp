// The gRPC plugin through the real crankd, against the loopback gRPC upstream crank-grpc-fixture
// (tests/fixtures/upstreams/grpc): input schemas derived from the request message, the proto3 JSON
// mapping both ways, descriptor sets and server reflection (v1, v1alpha), statuses as tool errors,
// deadlines, receive limits, metadata and auth profiles, server streams as windows, sessions and
// async jobs, TLS, and the configurations crankd --check refuses.
// Four fixture processes (reflection both, v1alpha only, none, and TLS) and one crankd serve the
// whole suite (one ctest entry); the fixtures' Stats method (called through crankd) shows what the
// upstream saw: calls started, calls cancelled, streams still running.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "child_process.h"
#include "mcp_http_client.h"
#include "temp_dir.h"
#include "test_json.h"

namespace {

using crank::testing::ChildProcess;
using crank::testing::contains;
using crank::testing::eventually;
using crank::testing::exchange;
using crank::testing::lacks;
using crank::testing::McpClient;
using crank::testing::msBetween;
using crank::testing::TempDir;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// The bearer token of the auth profile: it reaches crankd through its environment only.
constexpr const char* kToken = "tok3nGrpcBearer51";
constexpr const char* kService = "crank.fixture.v1.Fixture";
constexpr const char* kDescription = "gRPC integration test operation";

std::string text(const rapidjson::Value& v) {
    return crank::testing::jsonText(v);
}

rapidjson::Document parse(const std::string& body) {
    return crank::testing::parseJsonOrFail(body);
}

std::string target(std::uint16_t port) {
    return "127.0.0.1:" + std::to_string(port);
}

/// A gRPC config: the fixture's `method` at `port`, plus `more` members (", ..." or "").
std::string grpcConfig(std::uint16_t port, const std::string& method,
                       const std::string& more = "") {
    return R"({"target": ")" + target(port) + R"(", "method": ")" + kService + "/" + method + "\"" +
           more + "}";
}

std::string descriptorSet(const std::string& path = CRANK_GRPC_FIXTURE_DESC) {
    return R"(, "descriptor_set": ")" + path + "\"";
}

/// An operation; `extra` is more members of the operation (", ..."). `description` empty: none.
std::string operation(const std::string& name, const std::string& config,
                      const std::string& execution = R"({"mode": "unary"})",
                      const std::string& extra = "",
                      const std::string& description = kDescription) {
    std::string op = R"({"name": ")" + name + R"(", "protocol": "grpc", )";
    if (!description.empty()) {
        op += R"("description": ")" + description + R"(", )";
    }
    return op + R"("config": )" + config + R"(, "execution": )" + execution + extra + "}";
}

/// A window over Ticks collecting raw items.
std::string ticksWindow(int durationMs) {
    return R"({"mode": "window", "window_duration_ms": )" + std::to_string(durationMs) +
           R"(, "upstream_timeout_ms": 5000, "max_items": 1000, "aggregation_mode": "raw_items",
             "aggregation": {"max_items": 1000}})";
}

/// The "listening on" port of a child, or 0 (after ADD_FAILURE).
std::uint16_t portOf(ChildProcess& child) {
    const auto port = child.waitForListeningPort(20s);
    if (!port) {
        ADD_FAILURE() << "no listening line: " << child.stderrText();
        return 0;
    }
    return *port;
}

/// seq of each window or poll item (int64 in the JSON mapping: a string).
std::vector<std::int64_t> seqs(const rapidjson::Value& page) {
    std::vector<std::int64_t> out;
    if (!page.IsObject() || !page.HasMember("items") || !page["items"].IsArray()) {
        return out;
    }
    for (const auto& item : page["items"].GetArray()) {
        if (item.IsObject() && item.HasMember("seq") && item["seq"].IsString()) {
            out.push_back(std::stoll(item["seq"].GetString()));
        } else {
            out.push_back(-1);  // a seq that is not an int64 string fails the comparisons
        }
    }
    return out;
}

std::vector<std::int64_t> range(std::int64_t from, std::int64_t to) {
    std::vector<std::int64_t> out;
    for (std::int64_t i = from; i <= to; ++i) {
        out.push_back(i);
    }
    return out;
}

std::string stopReason(const rapidjson::Value& window) {
    return window.HasMember("stop_reason") && window["stop_reason"].IsString()
               ? window["stop_reason"].GetString()
               : "(none)";
}

std::string member(const rapidjson::Value& object, const char* name) {
    if (!object.IsObject() || !object.HasMember(name)) {
        return "(absent)";
    }
    return object[name].IsString() ? object[name].GetString() : text(object[name]);
}

class GrpcTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir();
        {
            // A self-signed certificate for localhost and 127.0.0.1, made for this run.
            ChildProcess openssl(std::vector<std::string>{
                "/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=localhost", "-addext",
                "subjectAltName=DNS:localhost,IP:127.0.0.1", "-days", "1", "-keyout",
                dir_->file("k.pem"), "-out", dir_->file("c.pem")});
            ASSERT_EQ(openssl.waitForExit(20s), 0) << openssl.stderrText();
        }
        fixture_ = new ChildProcess(std::vector<std::string>{
            CRANK_GRPC_FIXTURE_PATH, "--listen", "127.0.0.1:0", "--reflection", "both"});
        alpha_ = new ChildProcess(std::vector<std::string>{
            CRANK_GRPC_FIXTURE_PATH, "--listen", "127.0.0.1:0", "--reflection", "v1alpha"});
        none_ = new ChildProcess(std::vector<std::string>{CRANK_GRPC_FIXTURE_PATH, "--listen",
                                                          "127.0.0.1:0", "--reflection", "none"});
        tls_ = new ChildProcess(std::vector<std::string>{
            CRANK_GRPC_FIXTURE_PATH, "--listen", "127.0.0.1:0", "--tls-cert", dir_->file("c.pem"),
            "--tls-key", dir_->file("k.pem")});
        fixturePort_ = portOf(*fixture_);
        alphaPort_ = portOf(*alpha_);
        nonePort_ = portOf(*none_);
        tlsPort_ = portOf(*tls_);
        ASSERT_NE(fixturePort_, 0);
        ASSERT_NE(alphaPort_, 0);
        ASSERT_NE(nonePort_, 0);
        ASSERT_NE(tlsPort_, 0);
        {
            // A port that was bound and closed again: connecting to it is refused.
            Poco::Net::ServerSocket probe(Poco::Net::SocketAddress("127.0.0.1", 0));
            refusedPort_ = probe.address().port();
            probe.close();
        }
        const std::uint16_t fx = fixturePort_;
        const std::string desc = descriptorSet();
        const std::string ca = R"(, "tls": {"ca_file": ")" + dir_->file("c.pem") + R"("})";
        const std::string large =
            R"({"mode": "unary", "max_bytes": 16777216, "max_result_bytes": 16777216})";
        const std::string metadataSchema =
            R"(, "input_schema": {"type": "object", "additionalProperties": false,
                "properties": {"tenant": {"type": "string"}, "text": {"type": "string"}}})";
        std::vector<std::string> ops{
            // Unary Echo through every descriptor source.
            operation("echo", grpcConfig(fx, "Echo", desc)),
            operation("echo_reflection", grpcConfig(fx, "Echo")),
            operation("echo_v1alpha", grpcConfig(alphaPort_, "Echo")),
            operation("echo_trimmed",
                      grpcConfig(fx, "Echo", descriptorSet(CRANK_GRPC_FIXTURE_TRIMMED_DESC))),
            // Errors, deadlines, limits.
            operation("fail", grpcConfig(fx, "Fail", desc)),
            operation("stats", grpcConfig(fx, "Stats", desc)),
            operation("echo_deadline", grpcConfig(fx, "Echo", desc),
                      R"({"mode": "unary", "upstream_timeout_ms": 300})"),
            operation("echo_refused", grpcConfig(refusedPort_, "Echo", desc)),
            operation("echo_big", grpcConfig(fx, "Echo", desc), large),
            operation("echo_big_raised",
                      grpcConfig(fx, "Echo", desc + R"(, "max_receive_bytes": 16777216)"), large),
            operation("echo_small_limit",
                      grpcConfig(fx, "Echo", desc + R"(, "max_receive_bytes": 1000)")),
            // Metadata: templates from the input, and an auth profile.
            operation("echo_metadata",
                      grpcConfig(fx, "Echo", desc + R"(, "metadata": {"X-Tenant": "{{tenant}}",
                                    "x-static": "fixed"}, "message": {"text": "metadata"})"),
                      R"({"mode": "unary"})", metadataSchema),
            operation("echo_auth",
                      grpcConfig(fx, "Echo", desc + R"(, "message": {"text": "metadata"})"),
                      R"({"mode": "unary"})",
                      R"(, "auth_profile": "bearer", "input_schema": {"type": "object"})"),
            // Streams (transport_behavior left out: the plugin derives it from the method).
            operation("ticks", grpcConfig(fx, "Ticks", desc), ticksWindow(10000)),
            operation("ticks_short", grpcConfig(fx, "Ticks"), ticksWindow(500)),
            operation("ticks_session", grpcConfig(fx, "Ticks", desc),
                      R"({"mode": "session", "upstream_timeout_ms": 20000})"),
            operation("ticks_job", grpcConfig(fx, "Ticks"),
                      R"({"mode": "async_job", "upstream_timeout_ms": 20000,
                          "window_duration_ms": 20000, "max_items": 1000,
                          "aggregation_mode": "raw_items", "aggregation": {"max_items": 1000}})"),
            // TLS.
            operation("echo_tls", grpcConfig(tlsPort_, "Echo", ca)),
            operation("echo_tls_name",
                      grpcConfig(tlsPort_, "Echo",
                                 desc + R"(, "tls": {"ca_file": ")" + dir_->file("c.pem") +
                                     R"(", "server_name": "localhost"})")),
            operation("echo_tls_system_roots",
                      grpcConfig(tlsPort_, "Echo", desc + R"(, "tls": true)")),
            operation("echo_tls_plaintext", grpcConfig(tlsPort_, "Echo", desc)),
        };
        operationCount_ = ops.size();
        std::string operations;
        for (const std::string& op : ops) {
            operations += (operations.empty() ? "" : ",\n") + op;
        }
        const std::string config = dir_->write(
            "crank.json", R"({"store": {"path": ")" + dir_->file("crank.db") +
                              R"("}, "plugins": {"directories": [")" CRANK_PLUGIN_DIR R"("]},
            "auth_profiles": {
                "bearer": {"type": "bearer", "token": {"env": "CRANK_GRPC_TEST_TOKEN"},
                           "headers": {"X-Team": "blue"}}},
            "operations": [)" +
                              operations + "]}");
        crankd_ = new ChildProcess(
            std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"},
            {{"CRANK_GRPC_TEST_TOKEN", kToken}});
        const auto port = crankd_->waitForListeningPort(30s);
        ASSERT_TRUE(port) << crankd_->stderrText();
        port_ = *port;
    }

    static void TearDownTestSuite() {
        if (crankd_ != nullptr) {
            crankd_->signal(SIGTERM);
            EXPECT_EQ(crankd_->waitForExit(20s), 0) << crankd_->stderrText();
            delete crankd_;
            crankd_ = nullptr;
        }
        for (ChildProcess** child : {&fixture_, &alpha_, &none_, &tls_}) {
            if (*child != nullptr) {
                (*child)->signal(SIGTERM);
                EXPECT_EQ((*child)->waitForExit(15s), 0) << (*child)->stderrText();
                delete *child;
                *child = nullptr;
            }
        }
        delete dir_;
        dir_ = nullptr;
    }

    void SetUp() override {
        ASSERT_NE(port_, 0);
        drain();
        client_.emplace(port_);
        ASSERT_TRUE(client_->open());
    }

    /// Reads what the children wrote so far, so that no pipe fills up.
    static void drain() {
        crankd_->waitForStderrLine("\x01 never printed", 20ms);
        for (ChildProcess* child : {fixture_, alpha_, none_, tls_}) {
            child->waitForStderrLine("\x01 never printed", 2ms);
        }
    }

    /// tools/call; returns the `result` object and sets elapsedMs_.
    rapidjson::Document call(const std::string& tool, const std::string& arguments = "{}") {
        const auto start = Clock::now();
        rapidjson::Document result = client_->callTool(tool, arguments);
        elapsedMs_ = msBetween(start, Clock::now());
        return result;
    }

    /// The structuredContent of a call that must succeed (not isError).
    rapidjson::Document ok(const std::string& tool, const std::string& arguments = "{}") {
        rapidjson::Document result = call(tool, arguments);
        EXPECT_FALSE(isError(result)) << tool << " " << arguments << ": " << text(result);
        rapidjson::Document structured;
        if (result.HasMember("structuredContent")) {
            structured.CopyFrom(result["structuredContent"], structured.GetAllocator());
        } else {
            ADD_FAILURE() << tool << ": no structuredContent: " << text(result);
            structured.SetObject();
        }
        return structured;
    }

    /// The text of a call that must fail (isError).
    std::string failure(const std::string& tool, const std::string& arguments = "{}") {
        const rapidjson::Document result = call(tool, arguments);
        EXPECT_TRUE(isError(result)) << tool << " " << arguments << ": " << text(result);
        return firstText(result);
    }

    static bool isError(const rapidjson::Value& result) {
        return result.IsObject() && result.HasMember("isError") && result["isError"].IsBool() &&
               result["isError"].GetBool();
    }

    static std::string firstText(const rapidjson::Value& result) {
        if (result.IsObject() && result.HasMember("content") && result["content"].IsArray() &&
            !result["content"].Empty() && result["content"][0].HasMember("text")) {
            return result["content"][0]["text"].GetString();
        }
        return text(result);
    }

    /// The fixture's Stats (called through crankd).
    rapidjson::Document stats() { return ok("stats"); }

    /// Stats.started / Stats.cancelled of one method (int64: a string in the JSON mapping).
    std::int64_t counter(const char* which, const char* method) {
        const rapidjson::Document s = stats();
        if (!s.HasMember(which) || !s[which].HasMember(method) || !s[which][method].IsString()) {
            ADD_FAILURE() << which << "." << method << " not in Stats: " << text(s);
            return -1;
        }
        return std::stoll(s[which][method].GetString());
    }

    std::int64_t activeStreams() {
        const rapidjson::Document s = stats();
        if (!s.HasMember("activeStreams") || !s["activeStreams"].IsInt()) {
            ADD_FAILURE() << "no activeStreams in Stats: " << text(s);
            return -1;
        }
        return s["activeStreams"].GetInt();
    }

    /// tools/list's tools by name.
    std::map<std::string, rapidjson::Document> tools() {
        const rapidjson::Document doc =
            parse(client_->post(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})").body);
        std::map<std::string, rapidjson::Document> out;
        if (!doc.HasMember("result") || !doc["result"].HasMember("tools")) {
            ADD_FAILURE() << "tools/list: " << text(doc);
            return out;
        }
        for (const auto& tool : doc["result"]["tools"].GetArray()) {
            rapidjson::Document copy;
            copy.CopyFrom(tool, copy.GetAllocator());
            out.emplace(tool["name"].GetString(), std::move(copy));
        }
        return out;
    }

    /// Runs `crankd --check` on a config of `operations`; its exit status and stderr.
    static std::pair<int, std::string> check(const std::string& file,
                                             const std::string& operations) {
        const std::string config =
            dir_->write(file, R"({"plugins": {"directories": [")" CRANK_PLUGIN_DIR R"("]},
                "operations": [)" +
                                  operations + "]}");
        ChildProcess process(std::vector<std::string>{CRANKD_PATH, "--check", "--config", config});
        const std::optional<int> status = process.waitForExit(60s);
        EXPECT_TRUE(status.has_value()) << "crankd --check did not end";
        return {status.value_or(-1), process.stdoutText() + process.stderrText()};
    }

    static TempDir* dir_;
    static ChildProcess* fixture_;
    static ChildProcess* alpha_;
    static ChildProcess* none_;
    static ChildProcess* tls_;
    static ChildProcess* crankd_;
    static std::uint16_t port_;
    static std::uint16_t fixturePort_;
    static std::uint16_t alphaPort_;
    static std::uint16_t nonePort_;
    static std::uint16_t tlsPort_;
    static std::uint16_t refusedPort_;
    static std::size_t operationCount_;
    std::optional<McpClient> client_;
    std::int64_t elapsedMs_ = 0;
};

TempDir* GrpcTest::dir_ = nullptr;
ChildProcess* GrpcTest::fixture_ = nullptr;
ChildProcess* GrpcTest::alpha_ = nullptr;
ChildProcess* GrpcTest::none_ = nullptr;
ChildProcess* GrpcTest::tls_ = nullptr;
ChildProcess* GrpcTest::crankd_ = nullptr;
std::uint16_t GrpcTest::port_ = 0;
std::uint16_t GrpcTest::fixturePort_ = 0;
std::uint16_t GrpcTest::alphaPort_ = 0;
std::uint16_t GrpcTest::nonePort_ = 0;
std::uint16_t GrpcTest::tlsPort_ = 0;
std::uint16_t GrpcTest::refusedPort_ = 0;
std::size_t GrpcTest::operationCount_ = 0;

// --- tools/list --------------------------------------------------------------------------------

TEST_F(GrpcTest, AnOperationWithoutInputSchemaPublishesOneDerivedFromTheRequestMessage) {
    auto all = tools();
    // Each operation is one tool, except the session (3 tools) and the async job (4 tools).
    EXPECT_EQ(all.size(), operationCount_ - 2 + 3 + 4);
    ASSERT_EQ(all.count("echo"), 1U);
    const rapidjson::Value& echo = all["echo"];
    EXPECT_STREQ(echo["description"].GetString(), kDescription) << "the operation's own wins";
    ASSERT_TRUE(echo.HasMember("inputSchema")) << text(echo);
    const rapidjson::Value& schema = echo["inputSchema"];
    EXPECT_STREQ(schema["type"].GetString(), "object") << text(schema);
    ASSERT_TRUE(schema.HasMember("additionalProperties")) << text(schema);
    EXPECT_FALSE(schema["additionalProperties"].GetBool());
    ASSERT_TRUE(schema.HasMember("properties")) << text(schema);
    const rapidjson::Value& p = schema["properties"];
    // Every field of EchoRequest, under its JSON name (lowerCamel).
    for (const char* name :
         {"text",    "small",  "big",      "ubig",   "signedSmall", "fixed",      "ratio",
          "ratio32", "flag",   "blob",     "color",  "inner",       "tags",       "inners",
          "counts",  "byId",   "word",     "number", "nested",      "maybeCount", "at",
          "wait",    "extra",  "anyValue", "maybe",  "packed",      "mask",       "nothing",
          "tree",    "colors", "maybeText"}) {
        EXPECT_TRUE(p.HasMember(name)) << name << " missing: " << text(p);
    }
    EXPECT_EQ(p.MemberCount(), 31U) << text(p);
    ASSERT_TRUE(p.HasMember("text") && p.HasMember("big") && p.HasMember("color"));
    EXPECT_EQ(text(p["text"]["type"]), R"("string")");
    EXPECT_EQ(text(p["small"]["type"]), R"("integer")");
    EXPECT_EQ(p["small"]["maximum"].GetInt64(), 2147483647);
    // int64: a string of digits or an integer.
    EXPECT_EQ(text(p["big"]["type"]), R"(["string","integer"])");
    EXPECT_TRUE(p["big"].HasMember("pattern")) << text(p["big"]);
    EXPECT_EQ(text(p["ubig"]["type"]), R"(["string","integer"])");
    EXPECT_EQ(text(p["flag"]["type"]), R"("boolean")");
    EXPECT_STREQ(p["blob"]["contentEncoding"].GetString(), "base64");
    // Enums: the value names or numbers.
    ASSERT_TRUE(p["color"].HasMember("anyOf")) << text(p["color"]);
    EXPECT_EQ(text(p["color"]["anyOf"][0]["enum"]),
              R"(["COLOR_UNSPECIFIED","COLOR_RED","COLOR_GREEN"])");
    EXPECT_EQ(text(p["color"]["anyOf"][1]["enum"]), "[0,1,2]");
    // A nested message inlined, repeated fields and maps.
    EXPECT_EQ(text(p["inner"]["type"]), R"("object")");
    EXPECT_EQ(text(p["inner"]["properties"]["label"]["type"]), R"("string")");
    EXPECT_EQ(text(p["inner"]["properties"]["values"]["type"]), R"("array")");
    EXPECT_EQ(text(p["inner"]["properties"]["values"]["items"]["type"]), R"("integer")");
    EXPECT_EQ(text(p["tags"]["type"]), R"("array")");
    EXPECT_EQ(text(p["tags"]["items"]["type"]), R"("string")");
    EXPECT_EQ(text(p["counts"]["type"]), R"("object")");
    EXPECT_EQ(text(p["counts"]["additionalProperties"]["type"]), R"("integer")");
    EXPECT_TRUE(p["byId"].HasMember("patternProperties")) << text(p["byId"]);
    // Well-known types in their JSON forms.
    EXPECT_STREQ(p["at"]["format"].GetString(), "date-time");
    EXPECT_EQ(text(p["wait"]["type"]), R"("string")");
    EXPECT_EQ(text(p["maybe"]["type"]), R"(["integer","null"])");
    // The recursive Node goes to $defs.
    EXPECT_STREQ(p["tree"]["$ref"].GetString(), "#/$defs/crank.fixture.v1.Node");
    ASSERT_TRUE(schema.HasMember("$defs")) << text(schema);
    EXPECT_TRUE(schema["$defs"].HasMember("crank.fixture.v1.Node"));

    // The same schema whatever the descriptors' source.
    EXPECT_EQ(text(all["echo_reflection"]["inputSchema"]), text(schema));
    EXPECT_EQ(text(all["echo_v1alpha"]["inputSchema"]), text(schema));
    EXPECT_EQ(text(all["echo_tls"]["inputSchema"]), text(schema));

    // Ticks: TicksRequest's fields; Stats: an empty message.
    const rapidjson::Value& ticks = all["ticks"]["inputSchema"]["properties"];
    for (const char* name : {"count", "intervalMs", "failAfter", "payloadBytes"}) {
        EXPECT_TRUE(ticks.HasMember(name)) << name << ": " << text(ticks);
    }
    EXPECT_EQ(all["stats"]["inputSchema"]["properties"].MemberCount(), 0U)
        << text(all["stats"]["inputSchema"]);
    // An operation's own input_schema is kept.
    EXPECT_EQ(text(all["echo_metadata"]["inputSchema"]["properties"]),
              R"({"tenant":{"type":"string"},"text":{"type":"string"}})");
    // The session and the job publish their families.
    for (const char* name :
         {"ticks_session_start", "ticks_session_poll", "ticks_session_stop", "ticks_job_start",
          "ticks_job_status", "ticks_job_result", "ticks_job_cancel"}) {
        EXPECT_EQ(all.count(name), 1U) << name;
    }
    EXPECT_TRUE(all["ticks_job_start"]["inputSchema"]["properties"].HasMember("intervalMs"))
        << text(all["ticks_job_start"]["inputSchema"]);
}

TEST_F(GrpcTest, WithoutADescriptionTheToolDescriptionNamesTheMethod) {
    // A crankd of its own: one operation that leaves its description to the plugin.
    const std::string config =
        dir_->write("describe.json", R"({"plugins": {"directories": [")" CRANK_PLUGIN_DIR R"("]},
            "operations": [)" +
                                         operation("described", grpcConfig(fixturePort_, "Echo"),
                                                   R"({"mode": "unary"})", "", "") +
                                         "]}");
    ChildProcess crankd(
        std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"});
    const auto port = crankd.waitForListeningPort(30s);
    ASSERT_TRUE(port) << crankd.stderrText();
    McpClient client(*port);
    ASSERT_TRUE(client.open());
    const rapidjson::Document doc =
        parse(client.post(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})").body);
    ASSERT_TRUE(doc.HasMember("result")) << text(doc);
    ASSERT_EQ(doc["result"]["tools"].Size(), 1U) << text(doc);
    const rapidjson::Value& tool = doc["result"]["tools"][0];
    const std::string description = tool["description"].GetString();
    EXPECT_TRUE(contains(description, "crank.fixture.v1.Fixture/Echo"));
    EXPECT_TRUE(contains(description, "unary"));
    EXPECT_TRUE(contains(description, "crank.fixture.v1.EchoRequest"));
    EXPECT_TRUE(tool["inputSchema"]["properties"].HasMember("big")) << text(tool);
    crankd.signal(SIGTERM);
    EXPECT_EQ(crankd.waitForExit(20s), 0) << crankd.stderrText();
}

// --- unary calls and the JSON mapping ----------------------------------------------------------

TEST_F(GrpcTest, EchoWorksThroughADescriptorSetAndBothReflectionVersions) {
    for (const char* tool : {"echo", "echo_reflection", "echo_v1alpha"}) {
        const auto r = ok(tool, R"({"text": "hello", "small": 7})");
        ASSERT_TRUE(r.HasMember("echo")) << tool << ": " << text(r);
        EXPECT_STREQ(r["echo"]["text"].GetString(), "hello") << tool;
        EXPECT_EQ(r["echo"]["small"].GetInt(), 7) << tool;
    }
}

TEST_F(GrpcTest, TheProto3JsonMappingHoldsBothWays) {
    const auto r = ok("echo", R"({"text": "map", "small": 0, "big": "9007199254740993",
        "ubig": "18446744073709551615", "signedSmall": -7, "fixed": 12, "ratio": 0.25,
        "flag": false, "blob": "AAEC", "color": 2, "inner": {"label": "L", "values": [1, 2]},
        "tags": [], "counts": {"a": 1}, "byId": {"5": {"label": "five"}}, "word": "w",
        "maybeCount": 0, "at": "2024-01-02T03:04:05.5Z", "wait": "1.5s",
        "extra": {"k": [1, "x", null]}, "anyValue": "s",
        "packed": {"@type": "type.googleapis.com/crank.fixture.v1.Inner", "label": "p"},
        "mask": "small,inner.label", "nothing": {},
        "tree": {"name": "root", "children": [{"name": "kid"}]},
        "colors": ["COLOR_RED", 2], "maybeText": "mt"})");
    ASSERT_TRUE(r.HasMember("echo")) << text(r);
    const rapidjson::Value& e = r["echo"];
    EXPECT_STREQ(e["text"].GetString(), "map");
    // Zero values are printed.
    EXPECT_EQ(member(e, "small"), "0");
    EXPECT_EQ(member(e, "flag"), "false");
    EXPECT_EQ(member(e, "tags"), "[]");
    EXPECT_EQ(member(e, "inners"), "[]");
    EXPECT_EQ(member(e, "ratio32"), "0");
    // 64-bit integers as strings, exact past 2^53.
    ASSERT_TRUE(e["big"].IsString()) << text(e);
    EXPECT_STREQ(e["big"].GetString(), "9007199254740993");
    EXPECT_STREQ(e["ubig"].GetString(), "18446744073709551615");
    EXPECT_STREQ(e["fixed"].GetString(), "12");
    EXPECT_EQ(e["signedSmall"].GetInt(), -7);
    EXPECT_EQ(e["ratio"].GetDouble(), 0.25);
    EXPECT_STREQ(e["blob"].GetString(), "AAEC");
    // Enums by name, whatever the input used.
    EXPECT_STREQ(e["color"].GetString(), "COLOR_GREEN");
    EXPECT_EQ(text(e["colors"]), R"(["COLOR_RED","COLOR_GREEN"])");
    EXPECT_EQ(text(e["inner"]), R"({"label":"L","values":[1,2]})");
    EXPECT_EQ(text(e["counts"]), R"({"a":1})");
    EXPECT_EQ(text(e["byId"]), R"({"5":{"label":"five","values":[]}})");
    EXPECT_STREQ(e["word"].GetString(), "w");
    EXPECT_FALSE(e.HasMember("number")) << "another member of the oneof: " << text(e);
    EXPECT_EQ(member(e, "maybeCount"), "0") << "an optional field set to 0 is printed";
    // Well-known types.
    EXPECT_STREQ(e["at"].GetString(), "2024-01-02T03:04:05.500Z");
    EXPECT_STREQ(e["wait"].GetString(), "1.500s");
    EXPECT_EQ(text(e["extra"]), R"({"k":[1,"x",null]})");
    EXPECT_STREQ(e["anyValue"].GetString(), "s");
    EXPECT_EQ(text(e["packed"]),
              R"({"@type":"type.googleapis.com/crank.fixture.v1.Inner","label":"p","values":[]})");
    EXPECT_STREQ(e["mask"].GetString(), "small,inner.label");
    EXPECT_EQ(text(e["nothing"]), "{}");
    EXPECT_EQ(text(e["tree"]), R"({"name":"root","children":[{"name":"kid","children":[]}]})");
    EXPECT_STREQ(e["maybeText"].GetString(), "mt");
    // The response's own fields: served (int64, a string) and an empty map and blob.
    ASSERT_TRUE(r.HasMember("served") && r["served"].IsString()) << text(r);
    EXPECT_EQ(text(r["metadata"]), "{}");
    EXPECT_STREQ(r["blob"].GetString(), "");
}

TEST_F(GrpcTest, ServedCountsEveryCall) {
    const auto first = ok("echo", R"({"text": "one"})");
    const auto second = ok("echo_reflection", R"({"text": "two"})");
    ASSERT_TRUE(first["served"].IsString() && second["served"].IsString()) << text(second);
    EXPECT_EQ(std::stoll(second["served"].GetString()),
              std::stoll(first["served"].GetString()) + 1);
    EXPECT_GT(std::stoll(first["served"].GetString()), 0);
}

TEST_F(GrpcTest, TheInputIsCheckedAgainstTheDerivedSchema) {
    const std::string wrongType = failure("echo", R"({"small": "x"})");
    EXPECT_TRUE(contains(wrongType, "invalid input"));
    EXPECT_TRUE(contains(wrongType, "input.small"));
    const std::string unknown = failure("echo", R"({"text": "t", "bogus": 1})");
    EXPECT_TRUE(contains(unknown, "invalid input"));
    EXPECT_TRUE(contains(unknown, "input.bogus"));
    EXPECT_TRUE(contains(unknown, "is not allowed"));
    const std::string badEnum = failure("echo", R"({"color": "COLOR_BLUE"})");
    EXPECT_TRUE(contains(badEnum, "input.color"));
    const std::string badInt64 = failure("echo", R"({"big": "12x"})");
    EXPECT_TRUE(contains(badInt64, "input.big"));
    const std::string tooLarge = failure("echo", R"({"small": 3000000000})");
    EXPECT_TRUE(contains(tooLarge, "input.small"));
    // What the schema lets through but the message cannot hold: the plugin refuses it.
    const std::string unknownAny =
        failure("echo", R"({"packed": {"@type": "type.googleapis.com/no.such.Type"}})");
    EXPECT_TRUE(contains(unknownAny, "crank.fixture.v1.EchoRequest"));
    EXPECT_TRUE(contains(unknownAny, "(invalid_argument)"));
    // Nothing reached the fixture for any of them: the next call is served right after.
    const auto before = counter("started", "Echo");
    ok("echo", R"({"text": "after"})");
    EXPECT_EQ(counter("started", "Echo"), before + 1);
}

TEST_F(GrpcTest, TheDerivedSchemaTakesTheJsonNamesAndPointsAtThem) {
    // plugins/grpc/README.md, "Calls": the derived schema lists the lowerCamel JSON names only;
    // a .proto name is refused with the JSON name to use.
    const std::string refused = failure("echo", R"({"signed_small": -3})");
    EXPECT_TRUE(contains(refused, "input.signed_small")) << refused;
    EXPECT_TRUE(contains(refused, "signedSmall")) << refused;
    const auto r = ok("echo", R"({"signedSmall": -3, "maybeCount": 4})");
    ASSERT_TRUE(r.HasMember("echo")) << text(r);
    EXPECT_EQ(r["echo"]["signedSmall"].GetInt(), -3);
    EXPECT_EQ(r["echo"]["maybeCount"].GetInt(), 4);
}

// --- errors ------------------------------------------------------------------------------------

TEST_F(GrpcTest, AStatusIsAToolErrorNamingTheCodeAndTheMethod) {
    const std::string message = failure("fail");
    EXPECT_TRUE(contains(message, "INVALID_ARGUMENT"));
    EXPECT_TRUE(contains(message, "crank.fixture.v1.Fixture/Fail"));
    EXPECT_TRUE(contains(message, "bad input"));
    EXPECT_TRUE(contains(message, "(upstream)"));

    const std::string denied = failure("echo", R"({"text": "fail:7:nope"})");
    EXPECT_TRUE(contains(denied,
                         "upstream error: gRPC PERMISSION_DENIED from "
                         "crank.fixture.v1.Fixture/Echo: nope (upstream)"));
    // Codes with an error code of their own.
    EXPECT_TRUE(contains(failure("echo", R"({"text": "fail:14:down"})"),
                         "UNAVAILABLE from crank.fixture.v1.Fixture/Echo: down (unavailable)"));
    EXPECT_TRUE(contains(failure("echo", R"({"text": "fail:8:quota"})"),
                         "RESOURCE_EXHAUSTED from crank.fixture.v1.Fixture/Echo: quota "
                         "(resource_exhausted)"));
    EXPECT_TRUE(contains(failure("echo", R"({"text": "fail:4:late"})"),
                         "DEADLINE_EXCEEDED from crank.fixture.v1.Fixture/Echo: late (timeout)"));
    EXPECT_TRUE(contains(failure("echo", R"({"text": "fail:5:gone"})"),
                         "NOT_FOUND from crank.fixture.v1.Fixture/Echo: gone (upstream)"));
    // A malformed command is the fixture's own INVALID_ARGUMENT.
    EXPECT_TRUE(contains(failure("echo", R"({"text": "fail:99:m"})"), "INVALID_ARGUMENT"));
}

TEST_F(GrpcTest, TheStatusDetailsReachTheClient) {
    // Fail's status carries a google.rpc.Status detail (an Any of crank.fixture.v1.Inner); the
    // plugin renders it in the error's details ({"grpc_status": {..., "details": [...]}}).
    const rapidjson::Document result = call("fail");
    ASSERT_TRUE(isError(result)) << text(result);
    // The tool error's text: "upstream error: MESSAGE (code)\ndetails: {JSON}".
    const std::string whole = firstText(result);
    EXPECT_TRUE(contains(whole, "\ndetails: {\"grpc_status\":{\"code\":3,")) << whole;
    EXPECT_TRUE(contains(whole, R"("label":"why")"));
    EXPECT_TRUE(contains(whole, R"("values":[42])"));
    EXPECT_TRUE(contains(whole, "type.googleapis.com/crank.fixture.v1.Inner"));
}

TEST_F(GrpcTest, TheDeadlineEndsTheCallAndTheUpstreamSeesItCancelled) {
    const std::int64_t before = counter("cancelled", "Echo");
    const std::string message = failure("echo_deadline", R"({"text": "sleep:5000"})");
    EXPECT_LT(elapsedMs_, 3000) << message;
    EXPECT_GE(elapsedMs_, 250) << message;
    EXPECT_TRUE(contains(message, "crank.fixture.v1.Fixture/Echo"));
    EXPECT_TRUE(contains(message, "DEADLINE_EXCEEDED"));
    EXPECT_TRUE(contains(message, "(timeout)"));
    // The fixture's sleep noticed the cancellation and counted it.
    EXPECT_TRUE(eventually([&] { return counter("cancelled", "Echo") == before + 1; }, 5s))
        << "cancelled Echo calls: " << counter("cancelled", "Echo") << ", before " << before;
    // Within the deadline the same operation answers.
    EXPECT_STREQ(ok("echo_deadline", R"({"text": "sleep:10"})")["echo"]["text"].GetString(),
                 "sleep:10");
}

TEST_F(GrpcTest, AClosedPortIsUnavailable) {
    const std::string message = failure("echo_refused", R"({"text": "x"})");
    EXPECT_TRUE(contains(message, "gRPC UNAVAILABLE from crank.fixture.v1.Fixture/Echo"));
    EXPECT_TRUE(contains(message, "(unavailable)"));
    EXPECT_LT(elapsedMs_, 10000);
}

TEST_F(GrpcTest, AResponseLargerThanTheReceiveLimitIsResourceExhausted) {
    // The default limit, 4 MiB.
    const std::string message = failure("echo_big", R"({"text": "big:6000000"})");
    EXPECT_TRUE(contains(message, "RESOURCE_EXHAUSTED"));
    EXPECT_TRUE(contains(message, "crank.fixture.v1.Fixture/Echo"));
    EXPECT_TRUE(contains(message, "4194304"));
    EXPECT_TRUE(contains(message, "(resource_exhausted)"));
    // A limit of its own: 1000 bytes.
    const std::string small = failure("echo_small_limit", R"({"text": "big:2000"})");
    EXPECT_TRUE(contains(small, "RESOURCE_EXHAUSTED"));
    EXPECT_TRUE(contains(small, "1000"));
    EXPECT_TRUE(contains(small, "(resource_exhausted)"));
    const auto fits = ok("echo_small_limit", R"({"text": "big:300"})");
    ASSERT_TRUE(fits["blob"].IsString()) << text(fits);
    EXPECT_EQ(fits["blob"].GetStringLength(), 400U) << "300 bytes in base64";
    EXPECT_TRUE(contains(fits["blob"].GetString(), "AAECAwQF")) << "bytes 0, 1, 2, ...";
}

TEST_F(GrpcTest, ARaisedReceiveLimitStillMeetsTheItemLimitOfTheJson) {
    // max_receive_bytes 16 MiB lets 6 MB through gRPC, but as JSON (8 MB of base64) the response
    // is over crankd's 1 MiB item ceiling: refused by size, named, not by gRPC's limit.
    const std::string message = failure("echo_big_raised", R"({"text": "big:6000000"})");
    EXPECT_FALSE(contains(message, "larger than max")) << message;
    EXPECT_TRUE(contains(message, "bytes of JSON, more than the 1048576 an item may have"))
        << message;
    EXPECT_TRUE(contains(message, "(resource_exhausted)")) << message;
    // Within every bound it passes: 600 kB of bytes are 800 kB of base64.
    const rapidjson::Document result = call("echo_big_raised", R"({"text": "big:600000"})");
    ASSERT_FALSE(isError(result)) << firstText(result).substr(0, 600);
    ASSERT_TRUE(result.HasMember("structuredContent"));
    const auto& blob = result["structuredContent"]["blob"];
    ASSERT_TRUE(blob.IsString());
    EXPECT_EQ(blob.GetStringLength(), 800000U);
}

// --- unknown fields ----------------------------------------------------------------------------

TEST_F(GrpcTest, FieldsTheDescriptorSetDoesNotKnowAreDropped) {
    // fixture_trimmed.desc has no EchoResponse.metadata and .served: the fixture sends both.
    const auto r = ok("echo_trimmed", R"({"text": "metadata"})");
    ASSERT_TRUE(r.HasMember("echo")) << text(r);
    EXPECT_STREQ(r["echo"]["text"].GetString(), "metadata");
    EXPECT_FALSE(r.HasMember("served")) << text(r);
    EXPECT_FALSE(r.HasMember("metadata")) << text(r);
    EXPECT_TRUE(r.HasMember("blob")) << text(r);
}

// --- metadata ----------------------------------------------------------------------------------

TEST_F(GrpcTest, MetadataTemplatesAreRenderedFromTheInput) {
    const auto r = ok("echo_metadata", R"({"tenant": "acme", "text": "ignored"})");
    ASSERT_TRUE(r.HasMember("metadata")) << text(r);
    // The config's message, not the input, is the request.
    EXPECT_STREQ(r["echo"]["text"].GetString(), "metadata");
    const rapidjson::Value& m = r["metadata"];
    // "X-Tenant" in the config: sent lower-cased.
    EXPECT_EQ(member(m, "x-tenant"), "acme") << text(m);
    EXPECT_EQ(member(m, "x-static"), "fixed") << text(m);
    EXPECT_TRUE(contains(member(m, "user-agent"), "crank-grpc/")) << text(m);
    EXPECT_FALSE(m.HasMember("authorization")) << text(m);
    // Without a value the whole-string template removes the entry.
    const auto without = ok("echo_metadata", R"({"text": "x"})");
    EXPECT_FALSE(without["metadata"].HasMember("x-tenant")) << text(without);
    EXPECT_EQ(member(without["metadata"], "x-static"), "fixed");
}

TEST_F(GrpcTest, TheClientsTraceContextIsSentAsMetadata) {
    const rapidjson::Document result = client_->callTool(
        "echo_metadata", R"({"text": "x"})", nullptr,
        R"({"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",)"
        R"("tracestate":"rojo=00f067aa0ba902b7"})");
    ASSERT_FALSE(isError(result)) << text(result);
    const rapidjson::Value& m = result["structuredContent"]["metadata"];
    EXPECT_EQ(member(m, "traceparent"), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        << text(m);
    EXPECT_EQ(member(m, "tracestate"), "rojo=00f067aa0ba902b7") << text(m);
    const auto without = ok("echo_metadata", R"({"text": "x"})");
    EXPECT_FALSE(without["metadata"].HasMember("traceparent")) << text(without);
}

TEST_F(GrpcTest, AnAuthProfileAddsAuthorizationAndItsSecretIsScrubbed) {
    const rapidjson::Document result = call("echo_auth");
    ASSERT_FALSE(isError(result)) << text(result);
    const rapidjson::Value& r = result["structuredContent"];
    ASSERT_TRUE(r.HasMember("metadata")) << text(r);
    const rapidjson::Value& m = r["metadata"];
    // The fixture saw "Bearer <token>"; crankd replaced the secret in the result.
    EXPECT_EQ(member(m, "authorization"), "Bearer [redacted]") << text(m);
    EXPECT_EQ(member(m, "x-team"), "blue") << text(m);
    EXPECT_TRUE(lacks(text(result), kToken));
    drain();
    EXPECT_TRUE(lacks(crankd_->stderrText(), kToken)) << "a secret in crankd's log";
}

// --- streams -----------------------------------------------------------------------------------

TEST_F(GrpcTest, AWindowCollectsEveryMessageOfAStream) {
    const auto r = ok("ticks", R"({"count": 5, "intervalMs": 10})");
    EXPECT_EQ(stopReason(r), "upstream_end") << text(r);
    EXPECT_EQ(r["item_count"].GetInt(), 5);
    EXPECT_EQ(seqs(r), range(1, 5)) << text(r);
    EXPECT_TRUE(r["window_complete"].GetBool());
    EXPECT_FALSE(r["has_more"].GetBool());
    ASSERT_EQ(r["items"].Size(), 5U);
    EXPECT_STREQ(r["items"][0]["color"].GetString(), "COLOR_RED");
    EXPECT_STREQ(r["items"][1]["color"].GetString(), "COLOR_GREEN");
    EXPECT_STREQ(r["items"][0]["padding"].GetString(), "") << "an empty string is printed";
    const std::string at = r["items"][0]["at"].GetString();
    EXPECT_EQ(at.size() >= 20 ? at.back() : ' ', 'Z') << at;
    EXPECT_LT(elapsedMs_, 5000);
    EXPECT_TRUE(eventually([&] { return activeStreams() == 0; }, 5s));
}

TEST_F(GrpcTest, AWindowOverANeverEndingStreamCancelsItUpstream) {
    ASSERT_TRUE(eventually([&] { return activeStreams() == 0; }, 5s))
        << "a stream of an earlier test is still running";
    const std::int64_t before = counter("cancelled", "Ticks");
    const auto r = ok("ticks_short", R"({"count": 0, "intervalMs": 20})");
    EXPECT_EQ(stopReason(r), "duration") << text(r);
    EXPECT_GE(r["item_count"].GetInt(), 5) << text(r);
    const auto got = seqs(r);
    EXPECT_EQ(got, range(1, static_cast<std::int64_t>(got.size())));
    EXPECT_TRUE(r["has_more"].GetBool());
    EXPECT_LT(elapsedMs_, 5000);
    EXPECT_TRUE(eventually(
        [&] { return activeStreams() == 0 && counter("cancelled", "Ticks") == before + 1; }, 5s))
        << "active streams " << activeStreams() << ", cancelled Ticks "
        << counter("cancelled", "Ticks") << " (before " << before << ")";
}

TEST_F(GrpcTest, AStreamThatFailsMidwayKeepsItsItemsAndSaysWhy) {
    const rapidjson::Document result =
        call("ticks", R"({"count": 10, "intervalMs": 10, "failAfter": 3})");
    EXPECT_FALSE(isError(result)) << "items arrived before the failure: " << text(result);
    ASSERT_TRUE(result.HasMember("structuredContent")) << text(result);
    const rapidjson::Value& r = result["structuredContent"];
    EXPECT_EQ(stopReason(r), "upstream_error") << text(r);
    EXPECT_EQ(seqs(r), range(1, 3));
    ASSERT_TRUE(r.HasMember("error") && r["error"].IsObject()) << text(r);
    EXPECT_STREQ(r["error"]["code"].GetString(), "unavailable");
    EXPECT_TRUE(
        contains(r["error"]["message"].GetString(),
                 "gRPC UNAVAILABLE from crank.fixture.v1.Fixture/Ticks: backend went away"));

    // A stream refused before any message: an error result with the same object.
    const rapidjson::Document refused = call("ticks", R"({"count": -1})");
    EXPECT_TRUE(isError(refused)) << text(refused);
    ASSERT_TRUE(refused.HasMember("structuredContent")) << text(refused);
    const rapidjson::Value& none = refused["structuredContent"];
    EXPECT_EQ(stopReason(none), "upstream_error") << text(none);
    EXPECT_EQ(none["item_count"].GetInt(), 0);
    ASSERT_TRUE(none.HasMember("error") && none["error"].IsObject()) << text(none);
    EXPECT_STREQ(none["error"]["code"].GetString(), "upstream");
    EXPECT_TRUE(contains(none["error"]["message"].GetString(), "INVALID_ARGUMENT"));
}

TEST_F(GrpcTest, AFailedSessionShowsTheStatusDetailsInItsPoll) {
    const auto started = ok("ticks_session_start", R"({"count": 10, "intervalMs": 5,
                                                        "failAfter": 2})");
    ASSERT_TRUE(started.HasMember("session_id")) << text(started);
    const std::string session =
        R"({"session_id": ")" + std::string(started["session_id"].GetString()) + R"("})";
    rapidjson::Document poll;
    ASSERT_TRUE(eventually(
        [&] {
            poll = ok("ticks_session_poll", session);
            return poll.HasMember("status") && std::string(poll["status"].GetString()) == "failed";
        },
        5s))
        << text(poll);
    ASSERT_TRUE(poll.HasMember("error")) << text(poll);
    EXPECT_STREQ(poll["error"]["code"].GetString(), "unavailable");
    ASSERT_TRUE(poll["error"].HasMember("details")) << text(poll);
    EXPECT_STREQ(poll["error"]["details"]["grpc_status"]["name"].GetString(), "UNAVAILABLE");
    EXPECT_STREQ(poll["error"]["details"]["grpc_status"]["message"].GetString(),
                 "backend went away");
}

TEST_F(GrpcTest, ASessionReadsANeverEndingStreamUntilStopped) {
    ASSERT_TRUE(eventually([&] { return activeStreams() == 0; }, 5s))
        << "a stream of an earlier test is still running";
    const std::int64_t before = counter("cancelled", "Ticks");
    const auto started = ok("ticks_session_start", R"({"count": 0, "intervalMs": 20})");
    ASSERT_TRUE(started.HasMember("session_id")) << text(started);
    EXPECT_STREQ(started["status"].GetString(), "active");
    const std::string id = started["session_id"].GetString();
    const std::string session = R"({"session_id": ")" + id + "\"";
    EXPECT_TRUE(eventually([&] { return activeStreams() == 1; }, 5s));

    rapidjson::Document first;
    ASSERT_TRUE(eventually(
        [&] {
            first = ok("ticks_session_poll", session + "}");
            return first.HasMember("items") && first["items"].Size() >= 3;
        },
        5s))
        << text(first);
    EXPECT_STREQ(first["status"].GetString(), "active");
    const auto firstSeqs = seqs(first);
    EXPECT_EQ(firstSeqs, range(1, static_cast<std::int64_t>(firstSeqs.size())));
    const std::string cursor = first["cursor"].GetString();

    rapidjson::Document second;
    ASSERT_TRUE(eventually(
        [&] {
            second = ok("ticks_session_poll", session + R"(, "cursor": ")" + cursor + "\"}");
            return second.HasMember("items") && second["items"].Size() >= 2;
        },
        5s))
        << text(second);
    const auto secondSeqs = seqs(second);
    ASSERT_FALSE(secondSeqs.empty());
    EXPECT_EQ(secondSeqs.front(), firstSeqs.back() + 1) << "the next poll goes on where it left";
    EXPECT_EQ(secondSeqs, range(secondSeqs.front(), secondSeqs.back()));

    const auto stopped = ok("ticks_session_stop", session + "}");
    EXPECT_TRUE(stopped.IsObject()) << text(stopped);
    EXPECT_TRUE(eventually(
        [&] { return activeStreams() == 0 && counter("cancelled", "Ticks") == before + 1; }, 5s))
        << "active streams " << activeStreams() << ", cancelled Ticks "
        << counter("cancelled", "Ticks") << " (before " << before << ")";
    const auto after = ok("ticks_session_poll", session + "}");
    EXPECT_STREQ(after["status"].GetString(), "stopped") << text(after);
}

TEST_F(GrpcTest, AnAsyncJobCollectsTheWholeStream) {
    const auto started = ok("ticks_job_start", R"({"count": 20, "intervalMs": 20})");
    ASSERT_TRUE(started.HasMember("job_id")) << text(started);
    const std::string job = R"({"job_id": ")" + std::string(started["job_id"].GetString()) + "\"}";
    rapidjson::Document status;
    ASSERT_TRUE(eventually(
        [&] {
            status = ok("ticks_job_status", job);
            const std::string s = member(status, "status");
            return s != "queued" && s != "running";
        },
        20s))
        << text(status);
    EXPECT_EQ(member(status, "status"), "succeeded") << text(status);
    EXPECT_TRUE(status["result_ready"].GetBool());
    // The last progress the window reported (items collected) is kept.
    ASSERT_TRUE(status.HasMember("progress") && status["progress"].IsObject()) << text(status);
    EXPECT_GT(status["progress"]["progress"].GetDouble(), 0) << text(status);

    const auto result = ok("ticks_job_result", job);
    ASSERT_TRUE(result["ready"].GetBool()) << text(result);
    const rapidjson::Value& window = result["result"];
    EXPECT_EQ(stopReason(window), "upstream_end") << text(window);
    EXPECT_EQ(window["item_count"].GetInt(), 20);
    EXPECT_EQ(seqs(window), range(1, 20));
}

// --- configurations crankd refuses -------------------------------------------------------------

TEST_F(GrpcTest, CrankdCheckRefusesWhatCannotWork) {
    const std::uint16_t fx = fixturePort_;
    const std::string desc = descriptorSet();
    const std::string missing = dir_->file("missing.desc");
    const std::vector<std::string> ops{
        operation("upload", grpcConfig(fx, "Upload", desc)),
        operation("chat", grpcConfig(fx, "Chat")),
        operation("nope", grpcConfig(fx, "Nope", desc)),
        operation("no_service_file", R"({"target": ")" + target(fx) +
                                         R"(", "method": "crank.fixture.v1.Nope/Echo")" + desc +
                                         "}"),
        operation("no_service_reflection",
                  R"({"target": ")" + target(fx) + R"(", "method": "crank.fixture.v1.Nope/Echo"})"),
        operation("ticks_unary", grpcConfig(fx, "Ticks", desc)),
        operation("ticks_contradiction", grpcConfig(fx, "Ticks", desc),
                  R"({"mode": "window", "transport_behavior": "request_response"})"),
        operation("missing_set", grpcConfig(fx, "Echo", descriptorSet(missing))),
        operation("reserved_key",
                  grpcConfig(fx, "Echo", desc + R"(, "metadata": {"grpc-timeout": "1S"})")),
        operation("no_reflection", grpcConfig(nonePort_, "Echo")),
    };
    std::string operations;
    for (const std::string& op : ops) {
        operations += (operations.empty() ? "" : ",\n") + op;
    }
    const auto [status, out] = check("refused.json", operations);
    EXPECT_EQ(status, 3) << out;
    EXPECT_TRUE(contains(out,
                         "operations[0].config.method: crank.fixture.v1.Fixture/Upload is a "
                         "client-streaming method"));
    EXPECT_TRUE(contains(out,
                         "operations[1].config.method: crank.fixture.v1.Fixture/Chat is a "
                         "bidirectional method"));
    EXPECT_TRUE(contains(out,
                         "operations[2].config.method: crank.fixture.v1.Fixture has no "
                         "method Nope (it has: Chat, Echo, Fail, Stats, Ticks, Upload)"));
    EXPECT_TRUE(contains(out,
                         "operations[3].config.method: the service crank.fixture.v1.Nope "
                         "is not in descriptor set " CRANK_GRPC_FIXTURE_DESC
                         " (it has: crank.fixture.v1.Fixture)"));
    EXPECT_TRUE(contains(out, "operations[4].config"));
    EXPECT_TRUE(contains(out, "does not know the service crank.fixture.v1.Nope"));
    EXPECT_TRUE(contains(out,
                         "operations[5].execution.mode: the protocol \"grpc\" says this "
                         "operation's upstream streams: use mode \"window\", \"session\" or "
                         "\"async_job\""));
    EXPECT_TRUE(contains(out,
                         "operations[6].execution.transport_behavior: is "
                         "\"request_response\", but the upstream's method is "
                         "\"server_stream\""));
    EXPECT_TRUE(contains(
        out, "operations[7].config.descriptor_set: descriptor set " + missing + ": no such file"));
    EXPECT_TRUE(contains(out,
                         "operations[8].config.metadata.grpc-timeout: \"grpc-timeout\" is "
                         "reserved for gRPC itself"));
    EXPECT_TRUE(contains(out, "operations[9].config.target: "));
    EXPECT_TRUE(contains(out, "has no reflection service (tried grpc.reflection.v1 and v1alpha)"));
    // Nothing else: one line per refused operation.
    for (int i = 0; i < 10; ++i) {
        const std::string path = "operations[" + std::to_string(i) + "]";
        const auto first = out.find(path);
        EXPECT_NE(first, std::string::npos) << path << ": " << out;
        EXPECT_EQ(out.find(path, first + 1), std::string::npos) << path << " named twice: " << out;
    }

    // An upper-case metadata key is fine (lower-cased), and so is a server stream in a window.
    const auto [goodStatus, goodOut] = check(
        "good.json",
        operation("upper", grpcConfig(fx, "Echo", desc + R"(, "metadata": {"X-Upper": "v"})")) +
            "," + operation("window", grpcConfig(fx, "Ticks"), ticksWindow(1000)));
    EXPECT_EQ(goodStatus, 0) << goodOut;
    EXPECT_TRUE(contains(goodOut, "configuration is valid (2 operations"));
}

// --- crank-grpc-probe ---------------------------------------------------------------------------

TEST_F(GrpcTest, TheProbeListsTheMethodsAndItsOperationsPassTheCheck) {
    const std::string target = "127.0.0.1:" + std::to_string(fixturePort_);
    ChildProcess list(std::vector<std::string>{CRANK_GRPC_PROBE_PATH, target});
    ASSERT_EQ(list.waitForExit(30s), 0) << list.stderrText();
    const std::string methods = list.stdoutText();
    EXPECT_TRUE(contains(methods, "crank.fixture.v1.Fixture/Ticks"));
    EXPECT_TRUE(contains(methods,
                         "server-streaming  crank.fixture.v1.TicksRequest -> "
                         "crank.fixture.v1.Tick"))
        << methods;
    EXPECT_TRUE(contains(methods, "crank.fixture.v1.Fixture/Upload"));
    EXPECT_TRUE(contains(methods, "(the plugin cannot call it)"));
    EXPECT_FALSE(contains(methods, "grpc.reflection")) << methods;

    ChildProcess ops(std::vector<std::string>{CRANK_GRPC_PROBE_PATH, "--operations", target});
    ASSERT_EQ(ops.waitForExit(30s), 0) << ops.stderrText();
    std::string array = ops.stdoutText();
    EXPECT_TRUE(contains(ops.stderrText(), "skipped crank.fixture.v1.Fixture/Chat"));
    // The operations as printed, without their brackets, are a valid config: 4 callable methods.
    const auto open = array.find('[');
    const auto close = array.rfind(']');
    ASSERT_TRUE(open != std::string::npos && close != std::string::npos && close > open) << array;
    const auto [status, out] = check("probed.json", array.substr(open + 1, close - open - 1));
    EXPECT_EQ(status, 0) << out;
    EXPECT_TRUE(contains(out, "configuration is valid (4 operations")) << out;

    // An upstream that is not there: exit 1 and why.
    ChildProcess closed(std::vector<std::string>{CRANK_GRPC_PROBE_PATH, "--timeout-ms", "2000",
                                                 "127.0.0.1:" + std::to_string(refusedPort_)});
    EXPECT_EQ(closed.waitForExit(30s), 1);
    EXPECT_TRUE(contains(closed.stderrText(), "crank-grpc-probe:")) << closed.stderrText();
}

// --- TLS ---------------------------------------------------------------------------------------

TEST_F(GrpcTest, TlsWithTheRightRootsWorksAndAnythingElseIsUnavailable) {
    // Reflection and the call over TLS, the certificate checked against 127.0.0.1.
    EXPECT_STREQ(ok("echo_tls", R"({"text": "secure"})")["echo"]["text"].GetString(), "secure");
    // The name checked is server_name's.
    EXPECT_STREQ(ok("echo_tls_name", R"({"text": "named"})")["echo"]["text"].GetString(), "named");
    // The system's roots do not know the self-signed certificate.
    const std::string untrusted = failure("echo_tls_system_roots", R"({"text": "x"})");
    EXPECT_TRUE(contains(untrusted, "UNAVAILABLE"));
    EXPECT_TRUE(contains(untrusted, "(unavailable)"));
    // Plaintext to the TLS port.
    const std::string plaintext = failure("echo_tls_plaintext", R"({"text": "x"})");
    EXPECT_TRUE(contains(plaintext, "gRPC UNAVAILABLE from crank.fixture.v1.Fixture/Echo"));
    EXPECT_TRUE(contains(plaintext, "(unavailable)"));
    EXPECT_LT(elapsedMs_, 10000);
}

// --- and after all that ------------------------------------------------------------------------

TEST_F(GrpcTest, ZzCrankdStillServesAndNoStreamIsLeft) {
    EXPECT_FALSE(crankd_->waitForExit(0ms).has_value()) << crankd_->stderrText();
    EXPECT_EQ(exchange(port_, "GET", "/healthz", {}).status, 200);
    EXPECT_STREQ(ok("echo", R"({"text": "still"})")["echo"]["text"].GetString(), "still");
    EXPECT_TRUE(eventually([&] { return activeStreams() == 0; }, 5s));
}

}  // namespace
