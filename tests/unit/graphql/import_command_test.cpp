// `crankd import-graphql` as a command: schema files (SDL, introspection JSON), introspection
// over HTTP against an in-process Poco server on 127.0.0.1, exit statuses, what goes to stdout
// and what to stderr.

#include "graphql/import_command.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServer.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/StreamCopier.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "graphql_schema.h"
#include "temp_dir.h"

namespace crank::graphql_import {
namespace {

constexpr std::string_view kSdl = R"(
type Item { id: ID! name: String }
type Query {
  "One item"
  item(id: ID!): Item
  items(first: Int = 10): [Item]
  old: Int @deprecated
}
type Mutation { createItem(name: String!): Item }
)";

/// The same schema as an introspection result (what a server answers).
constexpr std::string_view kIntrospection = R"({"data": {"__schema": {
  "queryType": {"name": "Query"}, "mutationType": {"name": "Mutation"}, "subscriptionType": null,
  "types": [
    {"kind": "OBJECT", "name": "Query", "description": null, "fields": [
      {"name": "item", "description": "One item", "args": [
        {"name": "id", "description": null, "defaultValue": null,
         "type": {"kind": "NON_NULL", "name": null, "ofType": {"kind": "SCALAR", "name": "ID", "ofType": null}}}],
       "type": {"kind": "OBJECT", "name": "Item", "ofType": null}, "isDeprecated": false, "deprecationReason": null},
      {"name": "items", "description": null, "args": [
        {"name": "first", "description": null, "defaultValue": "10",
         "type": {"kind": "SCALAR", "name": "Int", "ofType": null}}],
       "type": {"kind": "LIST", "name": null, "ofType": {"kind": "OBJECT", "name": "Item", "ofType": null}},
       "isDeprecated": false, "deprecationReason": null},
      {"name": "old", "description": null, "args": [],
       "type": {"kind": "SCALAR", "name": "Int", "ofType": null}, "isDeprecated": true, "deprecationReason": "gone"}],
     "inputFields": null, "interfaces": [], "enumValues": null, "possibleTypes": null},
    {"kind": "OBJECT", "name": "Item", "description": null, "fields": [
      {"name": "id", "description": null, "args": [],
       "type": {"kind": "NON_NULL", "name": null, "ofType": {"kind": "SCALAR", "name": "ID", "ofType": null}},
       "isDeprecated": false, "deprecationReason": null},
      {"name": "name", "description": null, "args": [],
       "type": {"kind": "SCALAR", "name": "String", "ofType": null}, "isDeprecated": false, "deprecationReason": null}],
     "inputFields": null, "interfaces": [], "enumValues": null, "possibleTypes": null},
    {"kind": "OBJECT", "name": "Mutation", "description": null, "fields": [
      {"name": "createItem", "description": null, "args": [
        {"name": "name", "description": null, "defaultValue": null,
         "type": {"kind": "NON_NULL", "name": null, "ofType": {"kind": "SCALAR", "name": "String", "ofType": null}}}],
       "type": {"kind": "OBJECT", "name": "Item", "ofType": null}, "isDeprecated": false, "deprecationReason": null}],
     "inputFields": null, "interfaces": [], "enumValues": null, "possibleTypes": null},
    {"kind": "SCALAR", "name": "ID", "description": null, "fields": null, "inputFields": null,
     "interfaces": null, "enumValues": null, "possibleTypes": null},
    {"kind": "SCALAR", "name": "Int", "description": null, "fields": null, "inputFields": null,
     "interfaces": null, "enumValues": null, "possibleTypes": null},
    {"kind": "SCALAR", "name": "String", "description": null, "fields": null, "inputFields": null,
     "interfaces": null, "enumValues": null, "possibleTypes": null},
    {"kind": "SCALAR", "name": "Boolean", "description": null, "fields": null, "inputFields": null,
     "interfaces": null, "enumValues": null, "possibleTypes": null}],
  "directives": []}}})";

constexpr std::string_view kSummary =
    "crankd: import-graphql: 3 operations (2 queries, 1 mutation)\n";
constexpr std::string_view kDeprecated =
    "crankd: import-graphql: warning: Query.old is deprecated: not imported\n";

rapidjson::Document parse(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    EXPECT_FALSE(doc.HasParseError()) << json;
    return doc;
}

/// Checks the operations printed for kSdl / kIntrospection.
void expectOperations(const std::string& out, const std::string& endpoint,
                      const std::string& prefix = "") {
    EXPECT_TRUE(out.starts_with("{\n  \"operations\": [\n    {\n")) << out;
    EXPECT_TRUE(out.ends_with("}\n")) << out;
    const auto doc = parse(out);
    ASSERT_TRUE(doc.IsObject());
    const auto& ops = doc["operations"];
    ASSERT_EQ(ops.Size(), 3U);
    EXPECT_EQ(std::string(ops[0]["name"].GetString()), prefix + "item");
    EXPECT_STREQ(ops[0]["description"].GetString(), "One item");
    EXPECT_STREQ(ops[0]["protocol"].GetString(), "graphql");
    EXPECT_EQ(std::string(ops[0]["config"]["endpoint"].GetString()), endpoint);
    EXPECT_STREQ(ops[0]["config"]["document"].GetString(),
                 "query Item($id: ID!) { item(id: $id) { id name } }");
    EXPECT_STREQ(ops[0]["config"]["operation_name"].GetString(), "Item");
    EXPECT_STREQ(ops[1]["config"]["document"].GetString(),
                 "query Items($first: Int = 10) { items(first: $first) { id name } }");
    EXPECT_EQ(std::string(ops[2]["name"].GetString()), prefix + "create_item");
    EXPECT_STREQ(ops[2]["config"]["document"].GetString(),
                 "mutation CreateItem($name: String!) { createItem(name: $name) { id name } }");
}

TEST(GraphqlImportCommand, SdlFile) {
    const crank::testing::TempDir dir;
    CommandOptions options;
    options.source = dir.write("schema.graphql", kSdl);
    options.endpoint = "http://127.0.0.1:9/graphql";
    options.prefix = "shop.";
    const CommandOutput out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportOk) << out.err;
    expectOperations(out.out, "http://127.0.0.1:9/graphql", "shop.");
    EXPECT_EQ(out.err, std::string(kDeprecated) + std::string(kSummary));
}

TEST(GraphqlImportCommand, IntrospectionFileAndDepth) {
    const crank::testing::TempDir dir;
    std::string error;
    ASSERT_TRUE(graphql::schemaFromIntrospection(kIntrospection, error)) << error;
    CommandOptions options;
    options.source = dir.write("schema.json", kIntrospection);
    options.endpoint = "https://api.example.com/graphql";
    const CommandOutput out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportOk) << out.err;
    expectOperations(out.out, "https://api.example.com/graphql");
    EXPECT_EQ(out.err, std::string(kDeprecated) + std::string(kSummary));

    options.depth = 1;
    EXPECT_EQ(runImportCommand(options).exit_code, kImportOk);
}

TEST(GraphqlImportCommand, UsageErrors) {
    const crank::testing::TempDir dir;
    CommandOptions options;
    options.source = dir.write("schema.graphql", kSdl);
    CommandOutput out = runImportCommand(options);  // a file needs --endpoint
    EXPECT_EQ(out.exit_code, kImportUsage);
    EXPECT_EQ(out.out, "");
    EXPECT_EQ(out.err,
              "crankd: import-graphql: --endpoint URL is needed with a schema file: the URL the "
              "operations send their requests to\n");

    options.endpoint = "localhost:4000";
    out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportUsage);
    EXPECT_TRUE(out.err.starts_with("crankd: import-graphql: --endpoint: expected an absolute "))
        << out.err;

    options.endpoint = "http://h/graphql";
    options.prefix = "a b";
    out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportUsage);
    EXPECT_TRUE(out.err.starts_with("crankd: import-graphql: --prefix: ")) << out.err;

    options.prefix = "";
    options.depth = 9;
    out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportUsage);
    EXPECT_EQ(out.err, "crankd: import-graphql: --depth: expected an integer from 1 to 8, got 9\n");

    options.depth = 2;
    options.headers = {"Authorization: Bearer x"};
    out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportUsage);
    EXPECT_EQ(out.err,
              "crankd: import-graphql: --header is for introspecting an endpoint, not for "
              "reading a file\n");

    options.source = "http://127.0.0.1:9/graphql";
    options.headers = {"Bad Name: x"};
    out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportUsage);
    EXPECT_TRUE(out.err.starts_with("crankd: import-graphql: --header: expected 'Name: value'"))
        << out.err;

    options.headers = {};
    options.source = "";
    EXPECT_EQ(runImportCommand(options).exit_code, kImportUsage);

    EXPECT_TRUE(isUrl("HTTPS://x"));
    EXPECT_FALSE(isUrl("schema.graphql"));
    EXPECT_TRUE(checkHeader("X-Api-Key: abc"));
    EXPECT_FALSE(checkHeader("X-Api-Key abc"));
    EXPECT_FALSE(checkHeader("X: a\r\nY: b"));
    EXPECT_FALSE(checkHeader(": a"));
    ASSERT_TRUE(parseDepth("3"));
    EXPECT_EQ(*parseDepth("3"), 3U);
    EXPECT_FALSE(parseDepth("0"));
    EXPECT_FALSE(parseDepth("2x"));
    EXPECT_FALSE(parseDepth(""));
    EXPECT_TRUE(checkEndpoint("http://127.0.0.1:4000/graphql"));
    EXPECT_FALSE(checkEndpoint("http:///graphql"));
    EXPECT_FALSE(checkEndpoint("ftp://h/graphql"));
    EXPECT_FALSE(checkEndpoint("http://h/a b"));
}

TEST(GraphqlImportCommand, BadFiles) {
    const crank::testing::TempDir dir;
    CommandOptions options;
    options.endpoint = "http://h/graphql";
    options.source = dir.file("missing.graphql");
    CommandOutput out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportBadDocument);
    EXPECT_EQ(out.out, "");
    EXPECT_EQ(out.err, "crankd: import-graphql: cannot read " + dir.file("missing.graphql") +
                           ": No such file or directory\n");

    options.source = dir.write("bad.graphql", "type Query { a: Int ");
    out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportBadDocument);
    EXPECT_EQ(out.out, "");
    EXPECT_TRUE(out.err.starts_with("crankd: import-graphql: " + options.source + ": ")) << out.err;

    options.source = dir.write("bad.json", R"({"data": null, "errors": [{"message": "no"}]})");
    out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportBadDocument);
    EXPECT_TRUE(out.err.starts_with("crankd: import-graphql: " + options.source + ": ")) << out.err;

    options.source = dir.write("big.graphql", kSdl);
    options.max_document_bytes = 10;
    out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportBadDocument);
    EXPECT_EQ(out.err, "crankd: import-graphql: " + options.source + ": larger than 10 bytes\n");
}

/// What the in-process server saw, and what it answers.
struct Exchange {
    std::mutex mutex;
    int status = 200;
    std::string answer;
    std::string method;
    std::string uri;
    std::string content_type;
    std::string accept;
    std::string api_key;
    std::string body;
};

class Handler final : public Poco::Net::HTTPRequestHandler {
public:
    explicit Handler(Exchange& exchange) : exchange_(exchange) {}
    void handleRequest(Poco::Net::HTTPServerRequest& request,
                       Poco::Net::HTTPServerResponse& response) override {
        std::string body;
        Poco::StreamCopier::copyToString(request.stream(), body);
        const std::lock_guard<std::mutex> lock(exchange_.mutex);
        exchange_.method = request.getMethod();
        exchange_.uri = request.getURI();
        exchange_.content_type = request.getContentType();
        exchange_.accept = request.get("Accept", "");
        exchange_.api_key = request.get("X-Api-Key", "");
        exchange_.body = std::move(body);
        response.setStatusAndReason(
            static_cast<Poco::Net::HTTPResponse::HTTPStatus>(exchange_.status));
        response.setContentType("application/json");
        response.sendBuffer(exchange_.answer.data(), exchange_.answer.size());
    }

private:
    Exchange& exchange_;
};

class Factory final : public Poco::Net::HTTPRequestHandlerFactory {
public:
    explicit Factory(Exchange& exchange) : exchange_(exchange) {}
    Poco::Net::HTTPRequestHandler* createRequestHandler(
        const Poco::Net::HTTPServerRequest& /*request*/) override {
        return new Handler(exchange_);
    }

private:
    Exchange& exchange_;
};

/// A GraphQL endpoint on 127.0.0.1 (port picked by the system) for one test.
class IntrospectionServer : public ::testing::Test {
protected:
    void SetUp() override {
        Poco::Net::ServerSocket socket(Poco::Net::SocketAddress("127.0.0.1", 0));
        port_ = socket.address().port();
        server_ = std::make_unique<Poco::Net::HTTPServer>(new Factory(exchange_), socket,
                                                          new Poco::Net::HTTPServerParams);
        server_->start();
    }
    void TearDown() override { server_->stopAll(true); }

    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/graphql"; }

    Exchange exchange_;
    unsigned short port_ = 0;
    std::unique_ptr<Poco::Net::HTTPServer> server_;
};

TEST_F(IntrospectionServer, PostsTheIntrospectionQuery) {
    exchange_.answer = std::string(kIntrospection);
    CommandOptions options;
    options.source = url();
    options.headers = {"X-Api-Key:  secret-123 "};
    const CommandOutput out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportOk) << out.err;
    expectOperations(out.out, url());  // the endpoint defaults to the URL introspected
    EXPECT_EQ(out.out.find("secret-123"), std::string::npos);
    EXPECT_EQ(out.err, std::string(kDeprecated) + std::string(kSummary));

    const std::lock_guard<std::mutex> lock(exchange_.mutex);
    EXPECT_EQ(exchange_.method, "POST");
    EXPECT_EQ(exchange_.uri, "/graphql");
    EXPECT_EQ(exchange_.content_type, "application/json");
    EXPECT_EQ(exchange_.accept, "application/graphql-response+json, application/json;q=0.9");
    EXPECT_EQ(exchange_.api_key, "secret-123");
    const auto body = parse(exchange_.body);
    ASSERT_TRUE(body.IsObject());
    ASSERT_TRUE(body.HasMember("query"));
    EXPECT_EQ(std::string_view(body["query"].GetString()), graphql::kIntrospectionQuery);
}

TEST_F(IntrospectionServer, EndpointOverride) {
    exchange_.answer = std::string(kIntrospection);
    CommandOptions options;
    options.source = url();
    options.endpoint = "https://public.example.com/graphql";
    const CommandOutput out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportOk) << out.err;
    expectOperations(out.out, "https://public.example.com/graphql");
}

TEST_F(IntrospectionServer, ServerErrorNamesTheStatus) {
    exchange_.status = 500;
    exchange_.answer = std::string(300, 'x') + "tail";
    CommandOptions options;
    options.source = url();
    const CommandOutput out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportBadDocument);
    EXPECT_EQ(out.out, "");
    EXPECT_EQ(out.err, "crankd: import-graphql: POST " + url() +
                           ": HTTP 500 Internal Server Error: " + std::string(200, 'x') + "...\n");
}

TEST_F(IntrospectionServer, IntrospectionErrorsAndLargeBodies) {
    exchange_.answer = R"({"errors": [{"message": "introspection is disabled"}]})";
    CommandOptions options;
    options.source = url();
    CommandOutput out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportBadDocument);
    EXPECT_TRUE(out.err.starts_with("crankd: import-graphql: " + url() + ": ")) << out.err;
    EXPECT_NE(out.err.find("introspection is disabled"), std::string::npos) << out.err;

    exchange_.answer = std::string(kIntrospection);
    options.max_document_bytes = 100;
    out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportBadDocument);
    EXPECT_EQ(out.err, "crankd: import-graphql: POST " + url() +
                           ": the response is larger than 100 bytes\n");
}

TEST(GraphqlImportCommand, ConnectionRefused) {
    unsigned short port = 0;
    {
        const Poco::Net::ServerSocket socket(Poco::Net::SocketAddress("127.0.0.1", 0));
        port = socket.address().port();
    }
    CommandOptions options;
    options.source = "http://127.0.0.1:" + std::to_string(port) + "/graphql";
    const CommandOutput out = runImportCommand(options);
    EXPECT_EQ(out.exit_code, kImportBadDocument);
    EXPECT_TRUE(out.err.starts_with("crankd: import-graphql: POST " + options.source + ": "))
        << out.err;
}

}  // namespace
}  // namespace crank::graphql_import
