// The GraphQL adapter through the SDK's FakeHost (the C ABI, as crankd drives it) against the
// real graphql-js fixture (tests/e2e/graphql-fixture.mjs): validate() refusals with their paths,
// describe() (input schema, description, the schema cache, a dead upstream, schema_file), unary
// calls (variables, cursor, operation name, auth profiles, headers, results and errors),
// keep-alive reuse and the keep-alive race (against an in-process server that closes a reused
// connection on cue), timeouts, cancel and the response size bound. Loopback only; the fixture is
// stopped by pid when the suite ends.
#include "graphql_adapter.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/StreamSocket.h>
#include <Poco/StreamCopier.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "temp_dir.h"
#include "test_json.h"
#include <crank/sdk.hpp>
#include <crank/testing/fake_host.hpp>

namespace crank::graphql {
namespace {

/// The adapter the plugin entry registered last (its pool's counters).
std::atomic<GraphqlAdapter*> registered{nullptr};

void registerForTests(sdk::Registrar& registrar) {
    auto adapter = std::make_unique<GraphqlAdapter>(registrar.host());
    registered = adapter.get();
    registrar.addAdapter(graphqlAdapterInfo(), std::move(adapter));
}

}  // namespace
}  // namespace crank::graphql

CRANK_PLUGIN_NAMED(graphqlAdapterTestEntry, "graphql", "1.0.0", "the GraphQL plugin, for its tests",
                   crank::graphql::registerForTests);

namespace crank::graphql {
namespace {

using crank::testing::CallResult;
using crank::testing::ChildProcess;
using crank::testing::DescribeResult;
using crank::testing::eventually;
using crank::testing::FakeHost;
using crank::testing::jsonText;
using crank::testing::parseJsonOrFail;
using crank::testing::RequestSpec;
using crank::testing::TempDir;
using crank::testing::UnaryOptions;
using crank::testing::ValidateResult;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kItem = "query Item($id: ID!) { item(id: $id) { id name } }";
constexpr const char* kEcho =
    "query Echo($int: Int, $string: String, $color: Color, $filter: ItemFilter) "
    "{ echo(int: $int, string: $string, color: $color, filter: $filter) }";

std::string member(const rapidjson::Value& v, const char* name) {
    if (!v.IsObject()) {
        return "<not an object>";
    }
    const auto it = v.FindMember(name);
    if (it == v.MemberEnd()) {
        return "<missing>";
    }
    return it->value.IsString() ? std::string(it->value.GetString(), it->value.GetStringLength())
                                : jsonText(it->value);
}

std::string errorText(const CallResult& r) {
    return r.error ? r.error->message + " " + r.error->details_json : "<no error>";
}

/// HTTP GET or POST to the fixture; the body.
std::string http(std::uint16_t port, const std::string& method, const std::string& path,
                 const std::string& body = "") {
    Poco::Net::HTTPClientSession session("127.0.0.1", port);
    session.setTimeout(Poco::Timespan(5, 0));
    Poco::Net::HTTPRequest request(method, path, Poco::Net::HTTPMessage::HTTP_1_1);
    if (!body.empty()) {
        request.setContentType("application/json");
        request.setContentLength(static_cast<std::streamsize>(body.size()));
        session.sendRequest(request) << body;
    } else {
        session.sendRequest(request);
    }
    Poco::Net::HTTPResponse response;
    std::string out;
    Poco::StreamCopier::copyToString(session.receiveResponse(response), out);
    return out;
}

class GraphqlAdapterTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        fixture_ = std::make_unique<ChildProcess>(
            std::vector<std::string>{CRANK_GRAPHQL_NODE_PATH, CRANK_GRAPHQL_FIXTURE_PATH, "0"});
        const std::optional<std::uint16_t> port = fixture_->waitForListeningPort(20s);
        ASSERT_TRUE(port) << fixture_->stderrText();
        port_ = *port;
    }
    static void TearDownTestSuite() { fixture_.reset(); }

    void SetUp() override {
        ASSERT_TRUE(fixture_) << "the fixture did not start";
        ASSERT_NE(port_, 0);
        http(port_, "POST", "/admin/reset", "{}");
        host_ = std::make_unique<FakeHost>(&graphqlAdapterTestEntry);
        ASSERT_TRUE(host_->loaded()) << host_->initError();
        adapter_ = registered.load();
        ASSERT_NE(adapter_, nullptr);
    }
    void TearDown() override {
        host_.reset();
        adapter_ = nullptr;
    }

    static std::string endpoint(const std::string& path = "/graphql") {
        return "http://127.0.0.1:" + std::to_string(port_) + path;
    }

    /// A config of `document` at the fixture's `path`, plus `extra` members (",\"x\":1").
    static std::string config(const std::string& document, const std::string& extra = "",
                              const std::string& path = "/graphql") {
        return R"({"endpoint":)" + sdk::jsonQuote(endpoint(path)) + R"(,"document":)" +
               sdk::jsonQuote(document) + extra + "}";
    }

    /// GET /stats, parsed.
    static rapidjson::Document stats() { return parseJsonOrFail(http(port_, "GET", "/stats")); }
    static std::int64_t requests() {
        const rapidjson::Document s = stats();
        return s.IsObject() && s.HasMember("requests") ? s["requests"].GetInt64() : -1;
    }

    CallResult call(const std::string& config_json, const std::string& input = "{}",
                    std::int64_t timeout_ms = 10'000, const std::string& auth_json = "",
                    const std::string& cursor = "", UnaryOptions options = {}) {
        RequestSpec spec;
        spec.config_json = config_json;
        spec.request_json = config_json;
        spec.input_json = input;
        spec.timeout_ms = timeout_ms;
        spec.auth_json = auth_json;
        spec.cursor = cursor;
        options.timeout = std::chrono::milliseconds(timeout_ms) + 5s;
        return host_->callUnary("graphql", spec, options);
    }

    /// The item of a call that must succeed, parsed.
    rapidjson::Document itemOf(const CallResult& r) {
        EXPECT_TRUE(r.ok()) << errorText(r);
        EXPECT_EQ(r.items.size(), 1U);
        return parseJsonOrFail(r.items.empty() ? "{}" : r.items[0]);
    }

    ValidateResult validate(const std::string& config_json) {
        return host_->validate("graphql", config_json);
    }

    DescribeResult describe(const std::string& config_json) {
        return host_->describe("graphql", config_json);
    }

    /// The message of the diagnostic at `path`, or a list of all of them.
    static std::string diagnostic(const std::vector<crank::testing::Diagnostic>& all,
                                  const std::string& path) {
        std::string seen = "<none at " + path + ":";
        for (const auto& d : all) {
            if (d.path == path) {
                return d.message;
            }
            seen.append(" [").append(d.path).append("] ").append(d.message);
        }
        return seen + ">";
    }

    bool logged(sdk::LogLevel level, const std::string& needle) const {
        for (const auto& line : host_->logs()) {
            if (line.level == level && line.message.find(needle) != std::string::npos) {
                return true;
            }
        }
        return false;
    }

    static std::unique_ptr<ChildProcess> fixture_;
    static std::uint16_t port_;
    std::unique_ptr<FakeHost> host_;
    GraphqlAdapter* adapter_ = nullptr;
};

std::unique_ptr<ChildProcess> GraphqlAdapterTest::fixture_;
std::uint16_t GraphqlAdapterTest::port_ = 0;

// --- validate -------------------------------------------------------------------------------

TEST_F(GraphqlAdapterTest, AGoodConfigValidates) {
    const ValidateResult r = validate(config(kItem));
    EXPECT_TRUE(r.ok()) << diagnostic(r.diagnostics, "");
    EXPECT_TRUE(r.violations.empty());
    EXPECT_TRUE(validate(config("query A { now } mutation B($id: ID!) { deleteItem(id: $id) }",
                                R"(,"operation_name":"B","variables":{"id":"{{input.id}}"})"))
                    .ok());
}

TEST_F(GraphqlAdapterTest, ValidateRefusesWhatCannotRunNamingTheMember) {
    const ValidateResult subscription = validate(config("subscription Ticks { ticks }"));
    EXPECT_EQ(subscription.status, sdk::Status::error);
    EXPECT_THAT(diagnostic(subscription.diagnostics, "document"),
                HasSubstr("operation \"Ticks\" is a subscription; the GraphQL plugin runs "
                          "queries and mutations only"));

    const ValidateResult syntax = validate(config("query Q {\n  item(id: \"i1\") { id \n"));
    EXPECT_THAT(diagnostic(syntax.diagnostics, "document"), HasSubstr("line 3, column"));

    const ValidateResult unknown =
        validate(config("query A { now } query B { now }", R"(,"operation_name":"C")"));
    EXPECT_THAT(diagnostic(unknown.diagnostics, "operation_name"), HasSubstr("C"));

    const ValidateResult several = validate(config("query A { now } query B { now }"));
    EXPECT_THAT(diagnostic(several.diagnostics, "document"), HasSubstr("operation_name"));

    const ValidateResult cursor = validate(config(kItem, R"(,"cursor_variable":"after")"));
    EXPECT_EQ(diagnostic(cursor.diagnostics, "cursor_variable"),
              "the operation declares no variable $after");

    const ValidateResult variables =
        validate(config(kItem, R"(,"variables":{"id":"i1","idd":"x","other":1})"));
    EXPECT_EQ(variables.diagnostics.size(), 2U);
    EXPECT_EQ(diagnostic(variables.diagnostics, "variables.idd"),
              "the operation declares no variable $idd");
    EXPECT_THAT(diagnostic(variables.diagnostics, "variables.other"), HasSubstr("$other"));

    const ValidateResult member = validate(config(kItem, R"(,"headers":{"Host":"x"})"));
    EXPECT_EQ(diagnostic(member.diagnostics, "headers.Host"),
              "the GraphQL plugin sets this header itself");

    for (const ValidateResult* r :
         {&subscription, &syntax, &unknown, &several, &cursor, &variables, &member}) {
        EXPECT_EQ(r->status, sdk::Status::error);
        EXPECT_TRUE(r->violations.empty());
    }
}

// --- describe -------------------------------------------------------------------------------

TEST_F(GraphqlAdapterTest, DescribeDerivesTheInputSchemaAndDescriptionFromIntrospection) {
    const DescribeResult r = describe(config(kItem));
    ASSERT_TRUE(r.ok()) << diagnostic(r.diagnostics, "document");
    const rapidjson::Document doc = parseJsonOrFail(r.json);
    EXPECT_EQ(member(doc, "transport_behavior"), "request_response");
    EXPECT_EQ(member(doc, "description"), "Looks up one item by its id.");
    ASSERT_TRUE(doc.HasMember("input_schema"));
    const rapidjson::Value& schema = doc["input_schema"];
    EXPECT_EQ(member(schema, "type"), "object");
    EXPECT_EQ(member(schema, "required"), R"(["id"])");
    EXPECT_EQ(member(schema, "additionalProperties"), "false");
    ASSERT_TRUE(schema["properties"].HasMember("id"));
    EXPECT_EQ(member(schema["properties"]["id"], "type"), R"(["string","integer"])");
    EXPECT_EQ(member(schema["properties"]["id"], "description"), "The item id.");

    // Enums and input objects from the schema.
    const DescribeResult echo = describe(config(kEcho));
    ASSERT_TRUE(echo.ok()) << diagnostic(echo.diagnostics, "document");
    EXPECT_THAT(echo.json, HasSubstr(R"("enum":["RED","GREEN","BLUE","PURPLE"])"));
    EXPECT_THAT(echo.json, HasSubstr("ItemFilter"));
    EXPECT_FALSE(logged(sdk::LogLevel::warn, "no schema"));

    // With `variables` in the config the input feeds templates: the operator writes the schema.
    const DescribeResult fixed = describe(config(kItem, R"(,"variables":{"id":"{{input.x}}"})"));
    ASSERT_TRUE(fixed.ok()) << diagnostic(fixed.diagnostics, "document");
    EXPECT_THAT(fixed.json, Not(HasSubstr("input_schema")));
    EXPECT_THAT(fixed.json, HasSubstr("Looks up one item by its id."));
}

TEST_F(GraphqlAdapterTest, DescribeRefusesADocumentTheSchemaDoesNotHave) {
    const DescribeResult r = describe(config("query Q($id: ID!) { itme(id: $id) { id } }"));
    EXPECT_EQ(r.status, sdk::Status::error);
    EXPECT_THAT(diagnostic(r.diagnostics, "document"),
                HasSubstr(R"(Query has no field "itme" (did you mean "item"?))"));
    EXPECT_THAT(diagnostic(r.diagnostics, "document"), HasSubstr("by introspection"));
    const DescribeResult type =
        describe(config("query Q($f: ItemFiltr) { items(filter: $f) { id } }"));
    EXPECT_EQ(type.status, sdk::Status::error);
    EXPECT_THAT(diagnostic(type.diagnostics, "document"), HasSubstr("ItemFiltr"));
}

TEST_F(GraphqlAdapterTest, OperationsOnOneEndpointShareOneIntrospection) {
    const std::int64_t before = requests();
    ASSERT_TRUE(describe(config(kItem)).ok());
    ASSERT_TRUE(describe(config(kEcho)).ok());
    ASSERT_TRUE(describe(config("mutation D($id: ID!) { deleteItem(id: $id) }")).ok());
    EXPECT_EQ(requests() - before, 1);
    const rapidjson::Document s = stats();
    EXPECT_EQ(member(s["last_body"], "operationName"), "IntrospectionQuery");
    // Other headers are another cache entry (they may change what the upstream shows).
    ASSERT_TRUE(describe(config(kItem, R"(,"headers":{"X-Tenant":"t2"})")).ok());
    EXPECT_EQ(requests() - before, 2);
    EXPECT_EQ(member(stats()["last_headers"], "x-tenant"), "t2");
}

TEST_F(GraphqlAdapterTest, DescribeWithoutAReachableUpstreamStillAnswersAndWarns) {
    std::uint16_t closed = 0;
    {
        Poco::Net::ServerSocket socket(Poco::Net::SocketAddress("127.0.0.1", 0));
        closed = socket.address().port();
    }
    const std::string cfg = R"({"endpoint":"http://127.0.0.1:)" + std::to_string(closed) +
                            R"(/graphql","document":)" + sdk::jsonQuote(kEcho) + "}";
    const auto start = Clock::now();
    const DescribeResult r = describe(cfg);
    EXPECT_LT(Clock::now() - start, 4s);
    ASSERT_TRUE(r.ok()) << diagnostic(r.diagnostics, "document");
    const rapidjson::Document doc = parseJsonOrFail(r.json);
    ASSERT_TRUE(doc.HasMember("input_schema")) << r.json;
    const rapidjson::Value& properties = doc["input_schema"]["properties"];
    // Built-in scalars keep their types; the document's own input types are left open.
    EXPECT_EQ(member(properties["int"], "type"), "integer");
    EXPECT_EQ(member(properties["string"], "type"), "string");
    EXPECT_TRUE(properties.HasMember("color"));
    EXPECT_TRUE(properties.HasMember("filter"));
    EXPECT_THAT(jsonText(properties["color"]), Not(HasSubstr("RED")));
    EXPECT_TRUE(logged(sdk::LogLevel::warn, "graphql: no schema for")) << "no warning logged";
    // introspection off: no fetch, no warning, still a schema.
    const std::int64_t before = requests();
    const DescribeResult off = describe(config(kEcho, R"(,"introspection":false)"));
    ASSERT_TRUE(off.ok());
    EXPECT_THAT(off.json, HasSubstr("input_schema"));
    EXPECT_EQ(requests(), before);
}

TEST_F(GraphqlAdapterTest, DescribeReadsASchemaFile) {
    const TempDir dir;
    const std::string sdl = dir.write("schema.graphql", http(port_, "GET", "/schema.graphql"));
    const std::int64_t before = requests();
    const DescribeResult bad = describe(config("query Q($id: ID!) { itme(id: $id) { id } }",
                                               R"(,"schema_file":)" + sdk::jsonQuote(sdl)));
    EXPECT_EQ(bad.status, sdk::Status::error);
    EXPECT_THAT(diagnostic(bad.diagnostics, "document"), HasSubstr(R"(Query has no field "itme")"));
    EXPECT_THAT(diagnostic(bad.diagnostics, "document"), HasSubstr(sdl));
    const DescribeResult good = describe(config(kItem, R"(,"schema_file":)" + sdk::jsonQuote(sdl)));
    ASSERT_TRUE(good.ok()) << diagnostic(good.diagnostics, "document");
    EXPECT_THAT(good.json, HasSubstr("Looks up one item by its id."));
    EXPECT_EQ(requests(), before) << "a schema_file means no introspection";
    // A file that is missing or no schema: the config is refused, naming schema_file.
    const DescribeResult missing =
        describe(config(kItem, R"(,"schema_file":)" + sdk::jsonQuote(dir.file("nope.graphql"))));
    EXPECT_EQ(missing.status, sdk::Status::error);
    EXPECT_THAT(diagnostic(missing.diagnostics, "schema_file"), HasSubstr("cannot read"));
    const std::string junk = dir.write("junk.graphql", "type {{{");
    const DescribeResult broken =
        describe(config(kItem, R"(,"schema_file":)" + sdk::jsonQuote(junk)));
    EXPECT_EQ(broken.status, sdk::Status::error);
    EXPECT_THAT(diagnostic(broken.diagnostics, "schema_file"), HasSubstr("junk.graphql"));
}

TEST_F(GraphqlAdapterTest, AnEditedSchemaFileIsReadAgain) {
    // The schema of a file is cached for a minute, but a file that changed is read again: a
    // config reload right after editing the schema and the document sees both.
    const TempDir dir;
    const std::string path = dir.write("s.graphql", "type Query { a: Int }");
    const std::string extra = R"(,"schema_file":)" + sdk::jsonQuote(path);
    ASSERT_TRUE(describe(config("query Q { a }", extra)).ok());
    const DescribeResult before = describe(config("query Q { b }", extra));
    EXPECT_THAT(diagnostic(before.diagnostics, "document"), HasSubstr(R"(Query has no field "b")"));
    dir.write("s.graphql", "type Query { a: Int b: String }");
    const DescribeResult after = describe(config("query Q { b }", extra));
    EXPECT_TRUE(after.ok()) << diagnostic(after.diagnostics, "document");
}

// --- unary calls ----------------------------------------------------------------------------

TEST_F(GraphqlAdapterTest, AQueryRunsWithTheDeclaredVariablesOnly) {
    const CallResult r =
        call(config(kEcho), R"({"int":3,"string":"s","color":"BLUE","extra":"not sent"})");
    const rapidjson::Document item = itemOf(r);
    EXPECT_EQ(member(item["data"], "echo"), R"({"int":3,"string":"s","color":"BLUE"})");
    const rapidjson::Document s = stats();
    EXPECT_EQ(member(s["last_body"], "operationName"), "Echo");
    EXPECT_EQ(member(s["last_body"], "variables"), R"({"int":3,"string":"s","color":"BLUE"})");
    EXPECT_EQ(member(s["last_body"], "query"), kEcho);
}

TEST_F(GraphqlAdapterTest, ConfigVariablesAreSentAsRendered) {
    // The host renders templates before the call: request_json holds the values.
    const CallResult r = call(config(kEcho, R"(,"variables":{"string":"fixed-7","int":4})"),
                              R"({"int":99,"color":"RED"})");
    const rapidjson::Document item = itemOf(r);
    EXPECT_EQ(member(item["data"], "echo"), R"({"int":4,"string":"fixed-7"})");
    EXPECT_EQ(member(stats()["last_body"], "variables"), R"({"string":"fixed-7","int":4})");
}

TEST_F(GraphqlAdapterTest, TheCursorGoesIntoCursorVariable) {
    const std::string cfg = config("query Page($after: String) { echo(string: $after) }",
                                   R"(,"cursor_variable":"after")");
    const rapidjson::Document item =
        itemOf(call(cfg, R"({"after":"from input"})", 10'000, "", "c42"));
    EXPECT_EQ(member(item["data"], "echo"), R"({"string":"c42"})");
    // The first request (no cursor) leaves it out.
    const rapidjson::Document first = itemOf(call(cfg, "{}"));
    EXPECT_EQ(member(first["data"], "echo"), "{}");
    EXPECT_EQ(member(stats()["last_body"], "variables"), "{}");
}

TEST_F(GraphqlAdapterTest, TheOperationNameChoosesAndIsSent) {
    const std::string doc = "query A { now } query B($id: ID!) { item(id: $id) { name } }";
    const rapidjson::Document item = itemOf(
        call(config(doc, R"(,"operation_name":"B","data_path":"item.name")"), R"({"id":"i3"})"));
    EXPECT_EQ(member(item, "data"), "Blue Mug");
    EXPECT_EQ(member(stats()["last_body"], "operationName"), "B");
    // An anonymous operation is sent without operationName.
    ASSERT_TRUE(call(config("{ now }")).ok());
    EXPECT_EQ(member(stats()["last_body"], "operationName"), "<missing>");
}

TEST_F(GraphqlAdapterTest, RequestHeadersAreThoseDocumented) {
    ASSERT_TRUE(call(config("{ now }", R"(,"headers":{"X-Tenant":"t1"})")).ok());
    const rapidjson::Document s = stats();
    const rapidjson::Value& h = s["last_headers"];
    EXPECT_EQ(member(h, "accept"), "application/graphql-response+json, application/json;q=0.9");
    EXPECT_EQ(member(h, "content-type"), "application/json");
    EXPECT_EQ(member(h, "user-agent"), "crank-graphql/1.0");
    EXPECT_EQ(member(h, "x-tenant"), "t1");
    EXPECT_EQ(member(h, "authorization"), "<missing>");
}

TEST_F(GraphqlAdapterTest, AuthProfilesReachTheEndpoint) {
    const std::string whoami = config("{ whoami }", "", "/secure/graphql");
    const rapidjson::Document bearer =
        itemOf(call(whoami, "{}", 10'000, R"({"type":"bearer","token":"fixture-token"})"));
    EXPECT_EQ(member(bearer["data"], "whoami"), "Bearer fixture-token");

    const CallResult none = call(whoami);
    ASSERT_TRUE(none.error);
    EXPECT_EQ(none.error->code, sdk::ErrorCode::upstream);
    EXPECT_THAT(none.error->message, HasSubstr("answered 401 with GraphQL errors: unauthorized"));
    EXPECT_THAT(none.error->details_json, HasSubstr(R"("http_status":401)"));

    const rapidjson::Document basic =
        itemOf(call(config("{ whoami }"), "{}", 10'000,
                    R"({"type":"basic","username":"ada","password":"pw"})"));
    EXPECT_EQ(member(basic["data"], "whoami"), "Basic YWRhOnB3");

    ASSERT_TRUE(call(config("{ now }"), "{}", 10'000,
                     R"({"type":"api_key","in":"header","name":"X-Api-Key","key":"k1",
                         "headers":{"X-Static":"s1"}})")
                    .ok());
    const rapidjson::Document s = stats();
    EXPECT_EQ(member(s["last_headers"], "x-api-key"), "k1");
    EXPECT_EQ(member(s["last_headers"], "x-static"), "s1");
}

TEST_F(GraphqlAdapterTest, ResultsFollowTheResponse) {
    // data_path over a list, a mutation, partial data, errors only, validation errors, HTTP.
    const rapidjson::Document items = itemOf(
        call(config("query L($n: Int) { items(first: $n) { id } }", R"(,"data_path":"items")"),
             R"({"n":2})"));
    EXPECT_EQ(member(items, "data"), R"([{"id":"i1"},{"id":"i2"}])");

    const rapidjson::Document created = itemOf(
        call(config("mutation C($in: NewItem!) { createItem(input: $in) { id name color } }"),
             R"({"in":{"name":"Kite","owner":{"id":"u2"}}})"));
    EXPECT_EQ(member(created["data"], "createItem"), R"({"id":"i21","name":"Kite","color":"RED"})");

    const rapidjson::Document partial =
        itemOf(call(config(R"({ partial(ids: ["i1", "bad2"]) { id } })")));
    EXPECT_EQ(member(partial, "partial"), "true");
    EXPECT_EQ(member(partial["data"], "partial"), R"([{"id":"i1"},null])");
    EXPECT_THAT(member(partial, "errors"), HasSubstr("cannot load item bad2"));

    const CallResult failed = call(config(R"({ fail(message: "kaput") { id } })"));
    ASSERT_TRUE(failed.error);
    EXPECT_EQ(failed.error->code, sdk::ErrorCode::upstream);
    EXPECT_THAT(failed.error->message,
                HasSubstr("POST " + endpoint() + ": GraphQL errors: kaput (at fail)"));
    EXPECT_THAT(failed.error->details_json, HasSubstr("FIXTURE_FAILURE"));

    const CallResult invalid = call(config("{ itme { id } }"));
    ASSERT_TRUE(invalid.error);
    EXPECT_THAT(invalid.error->message,
                HasSubstr(R"(answered 400 with GraphQL errors: Cannot query field "itme")"));

    const CallResult status = call(config("{ now }", "", "/status/502"));
    ASSERT_TRUE(status.error);
    EXPECT_EQ(status.error->code, sdk::ErrorCode::upstream);
    EXPECT_THAT(status.error->message, HasSubstr("answered 502: fixture status 502"));
    EXPECT_EQ(status.error->details_json, R"({"http_status":502})");

    const CallResult html = call(config("{ now }", "", "/status/200"));
    ASSERT_TRUE(html.error);
    EXPECT_EQ(html.error->code, sdk::ErrorCode::protocol);
    EXPECT_THAT(html.error->message, HasSubstr("\"text/plain\" is not JSON"));

    // A variable of the wrong type: the upstream's coercion error reaches the caller.
    const CallResult coercion = call(config(kItem), R"({"id":{"no":1}})");
    ASSERT_TRUE(coercion.error);
    EXPECT_THAT(coercion.error->message, HasSubstr("answered 400 with GraphQL errors"));
    EXPECT_THAT(coercion.error->message, HasSubstr("$id"));
}

TEST_F(GraphqlAdapterTest, ABadInputOrTemplateIsRefusedBeforeAnyRequest) {
    const std::int64_t before = requests();
    const CallResult input = call(config(kEcho), "[1]");
    ASSERT_TRUE(input.error);
    EXPECT_EQ(input.error->code, sdk::ErrorCode::invalid_argument);
    const CallResult rendered = call(R"({"endpoint":"http://{{input.host}}/graphql","document":)" +
                                     sdk::jsonQuote(kEcho) + "}");
    ASSERT_TRUE(rendered.error);
    EXPECT_EQ(rendered.error->code, sdk::ErrorCode::invalid_argument);
    EXPECT_THAT(rendered.error->message,
                HasSubstr("config.endpoint (after templates were rendered)"));
    const CallResult deep = call(
        config(kEcho), "{\"filter\":" + std::string(100000, '[') + std::string(100000, ']') + "}");
    ASSERT_TRUE(deep.error);
    EXPECT_EQ(deep.error->code, sdk::ErrorCode::invalid_argument);
    EXPECT_THAT(deep.error->message, HasSubstr("nested deeper than 256 levels"));
    const CallResult subscription = call(config("subscription { ticks }"));
    ASSERT_TRUE(subscription.error);
    EXPECT_THAT(subscription.error->message, HasSubstr("subscription"));
    EXPECT_EQ(requests(), before);
}

// --- connections ----------------------------------------------------------------------------

TEST_F(GraphqlAdapterTest, CallsReuseOneKeptAliveConnection) {
    const std::uint64_t opened = adapter_->pool().opened();
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(call(config(kItem), R"({"id":"i1"})").ok());
    }
    EXPECT_EQ(adapter_->pool().opened() - opened, 1U);
    EXPECT_EQ(adapter_->pool().idleCount(), 1U);
    // max_idle 0: nothing is kept.
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(call(config(kItem, R"(,"keep_alive":{"max_idle":0})"), R"({"id":"i1"})").ok());
    }
    EXPECT_EQ(adapter_->pool().opened() - opened, 4U);
}

TEST_F(GraphqlAdapterTest, AConnectionTheUpstreamClosedWhileIdleIsNotUsed) {
    // node's http server closes a kept-alive connection after 6 s idle (its keepAliveTimeout,
    // 5 s, plus keepAliveTimeoutBuffer, 1 s, since node 22).
    const std::uint64_t opened = adapter_->pool().opened();
    ASSERT_TRUE(call(config(kItem), R"({"id":"i1"})").ok());
    std::this_thread::sleep_for(6500ms);
    const CallResult query = call(config(kItem), R"({"id":"i1"})");
    EXPECT_TRUE(query.ok()) << errorText(query);
    EXPECT_EQ(adapter_->pool().opened() - opened, 2U);
}

/// An HTTP/1.1 server on loopback that answers each request with a GraphQL result, except that
/// the second request on a connection is read and then answered by closing the connection (the
/// keep-alive race, made certain).
class RacingServer {
public:
    RacingServer() : socket_(Poco::Net::SocketAddress("127.0.0.1", 0)) {
        thread_ = std::thread([this] { run(); });
    }
    ~RacingServer() {
        stop_ = true;
        thread_.join();
    }
    RacingServer(const RacingServer&) = delete;
    RacingServer& operator=(const RacingServer&) = delete;

    std::uint16_t port() const { return socket_.address().port(); }
    int requests() const { return requests_; }
    int connections() const { return connections_; }

private:
    void run() {
        while (!stop_) {
            if (!socket_.poll(Poco::Timespan(0, 50'000), Poco::Net::Socket::SELECT_READ)) {
                continue;
            }
            Poco::Net::StreamSocket connection = socket_.acceptConnection();
            ++connections_;
            connection.setReceiveTimeout(Poco::Timespan(0, 100'000));
            serve(connection);
        }
    }

    void serve(Poco::Net::StreamSocket& connection) {
        std::string buffer;
        for (int onThisConnection = 0;; ++onThisConnection) {
            if (!readRequest(connection, buffer)) {
                return;
            }
            ++requests_;
            if (onThisConnection == 1) {
                connection.close();  // read, never answered
                return;
            }
            const std::string body = R"({"data":{"n":)" + std::to_string(requests_.load()) + "}}";
            const std::string response =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body;
            connection.sendBytes(response.data(), static_cast<int>(response.size()));
        }
    }

    /// Reads one request into nothing; false when the connection ends or the server stops.
    bool readRequest(Poco::Net::StreamSocket& connection, std::string& buffer) {
        char chunk[4096];
        for (;;) {
            const std::size_t end = buffer.find("\r\n\r\n");
            if (end != std::string::npos) {
                std::size_t length = 0;
                const std::size_t at = buffer.find("Content-Length: ");
                if (at != std::string::npos && at < end) {
                    length = std::stoul(buffer.substr(at + 16));
                }
                if (buffer.size() >= end + 4 + length) {
                    buffer.erase(0, end + 4 + length);
                    return true;
                }
            }
            int n = 0;
            try {
                n = connection.receiveBytes(chunk, sizeof chunk);
            } catch (const Poco::TimeoutException&) {
                if (stop_) {
                    return false;
                }
                continue;
            } catch (const Poco::Exception&) {
                return false;
            }
            if (n <= 0) {
                return false;
            }
            buffer.append(chunk, static_cast<std::size_t>(n));
        }
    }

    Poco::Net::ServerSocket socket_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<int> requests_{0};
    std::atomic<int> connections_{0};
};

TEST_F(GraphqlAdapterTest, AQueryIsSentAgainAfterTheKeepAliveRaceAMutationIsNot) {
    for (const bool mutation : {false, true}) {
        const RacingServer server;
        const std::string cfg =
            R"({"endpoint":"http://127.0.0.1:)" + std::to_string(server.port()) +
            R"(/graphql","document":)" +
            sdk::jsonQuote(mutation ? "mutation { deleteItem(id: \"i1\") }" : "{ now }") + "}";
        const CallResult first = call(cfg);
        ASSERT_TRUE(first.ok()) << errorText(first);
        const CallResult second = call(cfg);
        if (mutation) {
            ASSERT_TRUE(second.error) << "a mutation must not be sent twice";
            EXPECT_NE(second.error->code, sdk::ErrorCode::internal);
            EXPECT_EQ(server.requests(), 2);
            EXPECT_EQ(server.connections(), 1);
        } else {
            ASSERT_TRUE(second.ok()) << errorText(second);
            EXPECT_EQ(second.items[0], R"({"data":{"n":3}})");
            EXPECT_EQ(server.requests(), 3);
            EXPECT_EQ(server.connections(), 2);
        }
    }
}

// --- bounds ---------------------------------------------------------------------------------

TEST_F(GraphqlAdapterTest, TimeoutsNameTheBoundThatRanOut) {
    const std::string slow = config("{ now }", "", "/slow/graphql?ms=3000");
    const auto start = Clock::now();
    const CallResult host = call(slow, "{}", 300);
    EXPECT_LT(Clock::now() - start, 2500ms);
    ASSERT_TRUE(host.error);
    EXPECT_EQ(host.error->code, sdk::ErrorCode::timeout);
    EXPECT_THAT(host.error->message, HasSubstr("upstream_timeout_ms"));

    const CallResult total =
        call(config("{ now }", R"(,"timeouts":{"total_ms":300})", "/slow/graphql?ms=3000"), "{}",
             10'000);
    ASSERT_TRUE(total.error);
    EXPECT_EQ(total.error->code, sdk::ErrorCode::timeout);
    EXPECT_THAT(total.error->message, HasSubstr("timeouts.total_ms"));

    const CallResult headers =
        call(config("{ now }", R"(,"timeouts":{"headers_ms":300})", "/slow/graphql?ms=3000"));
    ASSERT_TRUE(headers.error);
    EXPECT_EQ(headers.error->code, sdk::ErrorCode::timeout);
    EXPECT_THAT(headers.error->message, HasSubstr("timeouts.headers_ms"));
}

TEST_F(GraphqlAdapterTest, ACancelledCallStopsPromptly) {
    const std::int64_t aborted = member(stats(), "slow_aborted") == "<missing>"
                                     ? 0
                                     : std::stoll(member(stats(), "slow_aborted"));
    UnaryOptions options;
    options.cancel_after = 200ms;
    const auto start = Clock::now();
    const CallResult r =
        call(config("{ now }", "", "/slow/graphql?ms=10000"), "{}", 20'000, "", "", options);
    EXPECT_LT(Clock::now() - start, 2s);
    EXPECT_TRUE(r.violations.empty()) << r.violations.front();
    EXPECT_NE(r.status, sdk::Status::ok);
    EXPECT_TRUE(r.items.empty());
    EXPECT_TRUE(
        eventually([&] { return std::stoll(member(stats(), "slow_aborted")) > aborted; }, 5s))
        << "the fixture saw no disconnect";
}

TEST_F(GraphqlAdapterTest, AResponseOverMaxResponseBytesIsRefused) {
    const std::string big = "{ bigList(count: 5000) { id name } }";
    const CallResult r = call(config(big, R"(,"max_response_bytes":10000)"));
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, sdk::ErrorCode::resource_exhausted);
    EXPECT_THAT(r.error->message, HasSubstr("10000"));
    EXPECT_TRUE(call(config(big)).ok());
}

}  // namespace
}  // namespace crank::graphql
