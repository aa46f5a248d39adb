// Fuzz target graphql_schema: what the graphql plugin and `crankd import-graphql` read about a
// GraphQL API (plugins/graphql): the upstream's introspection result, an SDL schema file, an
// operation's document, and GraphQL value literals (introspection's default values).
//
// Input: one byte of settings, then the text.
//   settings bits 0-1: 0 an introspection result (JSON), 1 SDL, 2 an executable document, checked
//   against a fixed schema (kSdl), 3 a constant value literal.
// Checks: a schema that reads (either form) imports (importOperations) to a JSON array whose every
// document parses, names its operation, passes checkOperation against that schema and has an
// input schema (variablesInputSchema) that is a JSON object; a document that parses has a
// selectable operation or says why, and its input schema and description are JSON and UTF-8;
// a value literal that converts is strict JSON; every failure says what is wrong.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "fuzz_support.h"
#include "graphql_schema.h"
#include "graphql_syntax.h"
#include "schema_import.h"
#include "variables_schema.h"

namespace {

using crank::fuzz::check;
using crank::fuzz::isJsonObject;
using crank::fuzz::isStrictJson;
using crank::fuzz::isUtf8;
namespace gql = crank::graphql;

/// The schema documents of settings 2 are checked against (tests/e2e/graphql-fixture.mjs's kind).
constexpr std::string_view kSdl = R"(
"""An ISO-8601 date"""
scalar DateTime
enum Color { RED GREEN @deprecated(reason: "no") }
input Range { min: Int, max: Int! }
input ItemFilter { owner: ID, colors: [Color!] = [RED], since: DateTime, price: Range,
                   and: [ItemFilter!] }
input NewItem { name: String!, color: Color = RED, tags: [String!]! = [] }
input Pick @oneOf { id: ID, name: String }
interface Node { id: ID! }
type Item implements Node { id: ID! name: String owner: User tags(first: Int!): [String] }
type User implements Node { id: ID! name: String friends: [User!]! }
union SearchResult = Item | User
type PageInfo { endCursor: String hasNextPage: Boolean! }
type ItemConnection { nodes: [Item!]! pageInfo: PageInfo! totalCount: Int }
type Query {
  "One item"
  item(id: ID!): Item
  items(filter: ItemFilter, first: Int = 10, after: String): ItemConnection!
  search(text: String!, pick: Pick): [SearchResult!]!
  node(id: ID!): Node
  matrix(m: [[Int!]]!): [[Int]]
}
type Mutation { createItem(input: NewItem!): Item }
type Subscription { ticks: Int }
)";

const gql::Schema& fixedSchema() {
    static const gql::Schema kSchema = [] {
        std::string error;
        std::optional<gql::Schema> schema = gql::schemaFromSdl(kSdl, error);
        check(schema.has_value(), "the fixed schema does not read", error);
        return std::move(*schema);
    }();
    return kSchema;
}

/// What the plugin derives from one operation of a document: input schema, description.
void checkOperation(const gql::OperationDefinition& op, const gql::Schema* schema) {
    std::vector<std::string> warnings;
    std::string error;
    const std::string input = gql::variablesInputSchema(op, schema, warnings, error);
    if (error.empty()) {
        check(isJsonObject(input), "an input schema that is not a JSON object", input);
    } else {
        check(input.empty(), "an input schema with an error");
        check(isUtf8(error), "an input schema error that is not UTF-8", error);
    }
    const std::string description = gql::operationDescription(op, schema);
    check(isUtf8(description), "a description that is not UTF-8", description);
    if (schema != nullptr) {
        check(isUtf8(gql::checkOperation(op, *schema)), "a check message that is not UTF-8");
    }
}

/// Every operation importOperations makes from `schema` is one the plugin accepts.
void checkImport(const gql::Schema& schema) {
    gql::ImportOptions options;
    options.endpoint = "http://127.0.0.1:4000/graphql";
    options.prefix = "gql_";
    std::vector<std::string> warnings;
    const std::string operations = gql::importOperations(schema, options, warnings);
    check(isStrictJson(operations), "imported operations that are not JSON", operations);
    rapidjson::Document doc;
    doc.Parse(operations.data(), operations.size());
    check(doc.IsArray(), "imported operations that are not an array", operations);
    for (const rapidjson::Value& op : doc.GetArray()) {
        const rapidjson::Value& config = op["config"];
        const std::string document(config["document"].GetString(),
                                   config["document"].GetStringLength());
        std::string error;
        const auto parsed = gql::parseExecutable(document, error);
        if (!parsed) {
            crank::fuzz::fail("an imported document does not parse", document + "\n" += error);
        }
        const std::string name = config.HasMember("operation_name")
                                     ? config["operation_name"].GetString()
                                     : std::string();
        const gql::OperationDefinition* selected = gql::selectOperation(*parsed, name, error);
        check(selected != nullptr, "an imported document names no operation", document);
        const std::string problem = gql::checkOperation(*selected, schema);
        if (!problem.empty()) {
            crank::fuzz::fail("an imported document does not check", document + "\n" += problem);
        }
        checkOperation(*selected, &schema);
    }
}

void readSchema(std::string_view text, bool introspection) {
    std::string error;
    const std::optional<gql::Schema> schema =
        introspection ? gql::schemaFromIntrospection(text, error) : gql::schemaFromSdl(text, error);
    if (!schema) {
        check(!error.empty() && isUtf8(error), "a schema error that says nothing, or not UTF-8",
              error);
        return;
    }
    checkImport(*schema);
}

void readDocument(std::string_view text) {
    std::string error;
    const auto document = gql::parseExecutable(text, error);
    if (!document) {
        check(!error.empty() && isUtf8(error), "a document error that says nothing, or not UTF-8",
              error);
        return;
    }
    if (gql::selectOperation(*document, "", error) == nullptr) {
        check(!error.empty() && isUtf8(error), "no operation, and no reason");
    }
    for (const gql::OperationDefinition& op : document->operations) {
        for (const gql::VariableDefinition& v : op.variables) {
            check(!v.default_json || isStrictJson(*v.default_json),
                  "a variable default that is not JSON", v.default_json.value_or(""));
        }
        checkOperation(op, &fixedSchema());
        checkOperation(op, nullptr);
    }
}

void readValue(std::string_view text) {
    std::string error;
    if (const auto json = gql::valueToJson(text, error)) {
        check(isStrictJson(*json), "a value literal that converts to invalid JSON", *json);
    } else {
        check(!error.empty() && isUtf8(error), "a value error that says nothing, or not UTF-8",
              error);
    }
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::string_view text = crank::fuzz::asText(data + 1, size - 1);
    switch (data[0] & 3U) {
        case 0:
            readSchema(text, true);
            break;
        case 1:
            readSchema(text, false);
            break;
        case 2:
            readDocument(text);
            break;
        default:
            readValue(text);
            break;
    }
    return 0;
}
