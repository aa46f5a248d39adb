#include "graphql_schema.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "graphql_syntax.h"
#include "variables_schema.h"

namespace crank::graphql {
namespace {

constexpr std::string_view kSdl = R"(
schema { query: Query mutation: Mutation }

"""
  The root query.
"""
type Query {
  "Finds one item."
  item(
    "The item's id."
    id: ID!
    filter: ItemFilter = {kind: BOOK, tags: ["a"]}
  ): Item
  items(first: Int = 10, order: Order = ASC): [Item!]!
  legacy: String @deprecated(reason: "no")
  node(id: ID!): Node
  search(text: String): [SearchResult]
}

type Mutation {
  addItem(input: ItemInput!): Item!
}

scalar DateTime @specifiedBy(url: "https://example.com/datetime")

interface Node {
  id: ID!
}

interface Named {
  name: String
}

"An owner."
type User implements Node {
  id: ID!
  name: String
}

type Item implements & Node & Named @cached(ttl: 5) {
  id: ID!
  name: String
  owner: User
  created: DateTime
}

union SearchResult = | Item | User

"Sort order."
enum Order {
  "Ascending."
  ASC
  DESC @deprecated
}

enum Kind { BOOK DISC }

input ItemFilter {
  kind: Kind = BOOK
  tags: [String!]
}

input ItemInput @oneOf {
  name: String
  kind: Kind
}

"Caches a field."
directive @cached(ttl: Int = 60, scope: [String!]) repeatable on | FIELD_DEFINITION | OBJECT

extend type Query {
  count: Int!
}
extend enum Kind { TAPE }
extend input ItemFilter { limit: Int = 5 }
extend type User implements Named
extend schema @cached
)";

constexpr std::string_view kIntrospection = R"({"data": {"__schema": {
 "queryType": {"name": "Query"}, "mutationType": {"name": "Mutation"}, "subscriptionType": null,
 "types": [
  {"kind": "OBJECT", "name": "Query", "description": "The root query.", "fields": [
    {"name": "item", "description": "Finds one item.", "args": [
       {"name": "id", "description": "The item's id.",
        "type": {"kind": "NON_NULL", "name": null, "ofType": {"kind": "SCALAR", "name": "ID", "ofType": null}},
        "defaultValue": null},
       {"name": "filter", "description": null,
        "type": {"kind": "INPUT_OBJECT", "name": "ItemFilter", "ofType": null},
        "defaultValue": "{kind: BOOK, tags: [\"a\"]}"}],
     "type": {"kind": "OBJECT", "name": "Item", "ofType": null}, "isDeprecated": false, "deprecationReason": null},
    {"name": "items", "description": null, "args": [
       {"name": "first", "type": {"kind": "SCALAR", "name": "Int"}, "defaultValue": "10"},
       {"name": "order", "type": {"kind": "ENUM", "name": "Order"}, "defaultValue": "ASC"}],
     "type": {"kind": "NON_NULL", "ofType": {"kind": "LIST", "ofType": {"kind": "NON_NULL", "ofType": {"kind": "OBJECT", "name": "Item"}}}},
     "isDeprecated": false},
    {"name": "legacy", "args": [], "type": {"kind": "SCALAR", "name": "String"}, "isDeprecated": true, "deprecationReason": "no"},
    {"name": "node", "args": [{"name": "id", "type": {"kind": "NON_NULL", "ofType": {"kind": "SCALAR", "name": "ID"}}}],
     "type": {"kind": "INTERFACE", "name": "Node"}, "isDeprecated": false},
    {"name": "search", "args": [{"name": "text", "type": {"kind": "SCALAR", "name": "String"}, "defaultValue": null}],
     "type": {"kind": "LIST", "ofType": {"kind": "UNION", "name": "SearchResult"}}},
    {"name": "count", "args": [], "type": {"kind": "NON_NULL", "ofType": {"kind": "SCALAR", "name": "Int"}}}
   ], "inputFields": null, "interfaces": [], "enumValues": null, "possibleTypes": null},
  {"kind": "OBJECT", "name": "Mutation", "fields": [
    {"name": "addItem", "args": [{"name": "input", "type": {"kind": "NON_NULL", "ofType": {"kind": "INPUT_OBJECT", "name": "ItemInput"}}}],
     "type": {"kind": "NON_NULL", "ofType": {"kind": "OBJECT", "name": "Item"}}}], "interfaces": []},
  {"kind": "SCALAR", "name": "DateTime", "description": null},
  {"kind": "INTERFACE", "name": "Node", "fields": [
    {"name": "id", "args": [], "type": {"kind": "NON_NULL", "ofType": {"kind": "SCALAR", "name": "ID"}}}],
   "interfaces": [], "possibleTypes": [{"kind": "OBJECT", "name": "Item"}, {"kind": "OBJECT", "name": "User"}]},
  {"kind": "INTERFACE", "name": "Named", "fields": [
    {"name": "name", "args": [], "type": {"kind": "SCALAR", "name": "String"}}],
   "interfaces": [], "possibleTypes": [{"kind": "OBJECT", "name": "Item"}, {"kind": "OBJECT", "name": "User"}]},
  {"kind": "OBJECT", "name": "User", "description": "An owner.", "fields": [
    {"name": "id", "args": [], "type": {"kind": "NON_NULL", "ofType": {"kind": "SCALAR", "name": "ID"}}},
    {"name": "name", "args": [], "type": {"kind": "SCALAR", "name": "String"}}],
   "interfaces": [{"kind": "INTERFACE", "name": "Node"}, {"kind": "INTERFACE", "name": "Named"}]},
  {"kind": "OBJECT", "name": "Item", "fields": [
    {"name": "id", "args": [], "type": {"kind": "NON_NULL", "ofType": {"kind": "SCALAR", "name": "ID"}}},
    {"name": "name", "args": [], "type": {"kind": "SCALAR", "name": "String"}},
    {"name": "owner", "args": [], "type": {"kind": "OBJECT", "name": "User"}},
    {"name": "created", "args": [], "type": {"kind": "SCALAR", "name": "DateTime"}}],
   "interfaces": [{"kind": "INTERFACE", "name": "Node"}, {"kind": "INTERFACE", "name": "Named"}]},
  {"kind": "UNION", "name": "SearchResult", "possibleTypes": [{"kind": "OBJECT", "name": "Item"}, {"kind": "OBJECT", "name": "User"}]},
  {"kind": "ENUM", "name": "Order", "description": "Sort order.", "enumValues": [
    {"name": "ASC", "description": "Ascending.", "isDeprecated": false},
    {"name": "DESC", "description": null, "isDeprecated": true, "deprecationReason": "No longer supported"}]},
  {"kind": "ENUM", "name": "Kind", "enumValues": [{"name": "BOOK"}, {"name": "DISC"}, {"name": "TAPE"}]},
  {"kind": "INPUT_OBJECT", "name": "ItemFilter", "inputFields": [
    {"name": "kind", "type": {"kind": "ENUM", "name": "Kind"}, "defaultValue": "BOOK"},
    {"name": "tags", "type": {"kind": "LIST", "ofType": {"kind": "NON_NULL", "ofType": {"kind": "SCALAR", "name": "String"}}}},
    {"name": "limit", "type": {"kind": "SCALAR", "name": "Int"}, "defaultValue": "5"}]},
  {"kind": "INPUT_OBJECT", "name": "ItemInput", "isOneOf": true, "inputFields": [
    {"name": "name", "type": {"kind": "SCALAR", "name": "String"}},
    {"name": "kind", "type": {"kind": "ENUM", "name": "Kind"}}]},
  {"kind": "SCALAR", "name": "String"}, {"kind": "SCALAR", "name": "ID"},
  {"kind": "SCALAR", "name": "Int"}, {"kind": "SCALAR", "name": "Boolean"},
  {"kind": "OBJECT", "name": "__Schema", "fields": [
    {"name": "description", "args": [], "type": {"kind": "SCALAR", "name": "String"}}], "interfaces": []}
 ]}}})";

/// Everything the model holds, one line per item, to compare two schemas.
std::string dump(const Schema& s) {
    std::string out =
        "roots " + s.query_type + "/" + s.mutation_type + "/" + s.subscription_type + "\n";
    auto inputValue = [&out](const char* what, const InputValue& v) {
        out += std::string("    ") + what + " " + v.name + ": " + v.type.text() + " = " +
               v.default_json.value_or("-") + " [" + v.description + "]" +
               (v.deprecated ? " deprecated" : "") + "\n";
    };
    for (const auto& [name, t] : s.types) {
        out += "type " + name + " kind " + std::to_string(static_cast<int>(t.kind)) + " [" +
               t.description + "]" + (t.one_of ? " oneOf" : "") + "\n";
        for (const auto& i : t.interfaces) {
            out += "  implements " + i + "\n";
        }
        for (const auto& p : t.possible_types) {
            out += "  possible " + p + "\n";
        }
        for (const auto& f : t.fields) {
            out += "  field " + f.name + ": " + f.type.text() + " [" + f.description + "]" +
                   (f.deprecated ? " deprecated" : "") + "\n";
            for (const auto& a : f.args) {
                inputValue("arg", a);
            }
        }
        for (const auto& f : t.input_fields) {
            inputValue("input", f);
        }
        for (const auto& v : t.enum_values) {
            out += "  value " + v.name + " [" + v.description + "]" +
                   (v.deprecated ? " deprecated" : "") + "\n";
        }
    }
    return out;
}

Schema sdlOk(std::string_view sdl) {
    std::string error;
    auto schema = schemaFromSdl(sdl, error);
    EXPECT_TRUE(schema.has_value()) << error;
    return schema ? *schema : Schema{};
}

std::string sdlError(std::string_view sdl, const SchemaLimits& limits = {}) {
    std::string error;
    EXPECT_FALSE(schemaFromSdl(sdl, error, limits).has_value()) << sdl;
    return error;
}

std::string introspectionError(std::string_view json, const SchemaLimits& limits = {}) {
    std::string error;
    EXPECT_FALSE(schemaFromIntrospection(json, error, limits).has_value()) << json.substr(0, 200);
    return error;
}

OperationDefinition operation(std::string_view text) {
    std::string error;
    auto doc = parseExecutable(text, error);
    EXPECT_TRUE(doc.has_value()) << error;
    return doc && !doc->operations.empty() ? doc->operations[0] : OperationDefinition{};
}

TEST(GraphqlSchemaTest, SdlReadsEveryConstruct) {
    const Schema s = sdlOk(kSdl);
    EXPECT_EQ(s.query_type, "Query");
    EXPECT_EQ(s.mutation_type, "Mutation");
    EXPECT_EQ(s.subscription_type, "");
    for (const char* builtin : {"Int", "Float", "String", "Boolean", "ID"}) {
        ASSERT_NE(s.type(builtin), nullptr) << builtin;
        EXPECT_EQ(s.type(builtin)->kind, NamedType::Kind::scalar);
    }
    const NamedType* query = s.rootType(OperationDefinition::Kind::query);
    ASSERT_NE(query, nullptr);
    EXPECT_EQ(query->description, "The root query.");
    EXPECT_EQ(s.rootType(OperationDefinition::Kind::subscription), nullptr);
    const Field* item = query->field("item");
    ASSERT_NE(item, nullptr);
    EXPECT_EQ(item->description, "Finds one item.");
    ASSERT_EQ(item->args.size(), 2U);
    EXPECT_EQ(item->args[0].description, "The item's id.");
    EXPECT_EQ(item->args[0].type.text(), "ID!");
    EXPECT_EQ(*item->args[1].default_json, R"({"kind":"BOOK","tags":["a"]})");
    EXPECT_TRUE(query->field("legacy")->deprecated);
    EXPECT_NE(query->field("count"), nullptr);  // from `extend type`
    EXPECT_EQ(query->field("items")->type.text(), "[Item!]!");
    EXPECT_EQ(s.type("Kind")->enum_values.size(), 3U);
    EXPECT_TRUE(s.type("Order")->enum_values[1].deprecated);
    EXPECT_EQ(s.type("Order")->enum_values[0].description, "Ascending.");
    EXPECT_TRUE(s.type("ItemInput")->one_of);
    EXPECT_FALSE(s.type("ItemFilter")->one_of);
    EXPECT_EQ(s.type("ItemFilter")->input_fields.size(), 3U);
    EXPECT_EQ(*s.type("ItemFilter")->input_fields[0].default_json, "\"BOOK\"");
    EXPECT_EQ(s.type("User")->interfaces, (std::vector<std::string>{"Node", "Named"}));
    EXPECT_EQ(s.type("Node")->possible_types, (std::vector<std::string>{"Item", "User"}));
    EXPECT_EQ(s.type("SearchResult")->possible_types, (std::vector<std::string>{"Item", "User"}));
    EXPECT_EQ(s.type("SearchResult")->kind, NamedType::Kind::union_type);
    EXPECT_TRUE(s.type("ItemFilter")->isInputType());
    EXPECT_FALSE(s.type("Item")->isInputType());
    EXPECT_TRUE(s.type("DateTime")->isLeaf());
    EXPECT_EQ(s.type("cached"), nullptr);
}

TEST(GraphqlSchemaTest, IntrospectionAndSdlGiveTheSameModel) {
    std::string error;
    const auto from_json = schemaFromIntrospection(kIntrospection, error);
    ASSERT_TRUE(from_json.has_value()) << error;
    EXPECT_EQ(from_json->type("__Schema"), nullptr);
    EXPECT_NE(from_json->type("Float"), nullptr);  // built in, though not in the result
    EXPECT_EQ(dump(*from_json), dump(sdlOk(kSdl)));
    // The bare form and the sniffing reader.
    const std::string bare =
        "{" + std::string(kIntrospection.substr(std::string_view(R"({"data": {)").size()));
    const auto from_bare = schemaFromIntrospection(bare.substr(0, bare.size() - 1), error);
    ASSERT_TRUE(from_bare.has_value()) << error;
    EXPECT_EQ(dump(*from_bare), dump(*from_json));
    const auto sniffed_json = schemaFromText("  \n" + std::string(kIntrospection), error);
    ASSERT_TRUE(sniffed_json.has_value()) << error;
    EXPECT_EQ(dump(*sniffed_json), dump(*from_json));
    const auto sniffed_sdl = schemaFromText(kSdl, error);
    ASSERT_TRUE(sniffed_sdl.has_value()) << error;
    EXPECT_EQ(dump(*sniffed_sdl), dump(*from_json));
}

TEST(GraphqlSchemaTest, SdlDefaultsAndDeprecatedArguments) {
    const Schema s = sdlOk(R"(
type Query { a(x: Int @deprecated, y: [Int] = [1 2]): Int }
type Mutation { b: Int }
type Subscription { c: Int }
input In { z: Int @deprecated(reason: "z") }
)");
    EXPECT_EQ(s.query_type, "Query");
    EXPECT_EQ(s.mutation_type, "Mutation");
    EXPECT_EQ(s.subscription_type, "Subscription");
    EXPECT_TRUE(s.type("Query")->field("a")->args[0].deprecated);
    EXPECT_FALSE(s.type("Query")->field("a")->args[1].deprecated);
    EXPECT_EQ(*s.type("Query")->field("a")->args[1].default_json, "[1,2]");
    EXPECT_TRUE(s.type("In")->input_fields[0].deprecated);
    const Schema named = sdlOk("schema { query: Root } type Root { a: Int } type Query { b: Int }");
    EXPECT_EQ(named.query_type, "Root");
    EXPECT_EQ(named.mutation_type, "");
}

TEST(GraphqlSchemaTest, SdlErrors) {
    EXPECT_EQ(sdlError("type Query { a: Item } type Item { owner: User }"),
              "type Item, field owner: unknown type User");
    EXPECT_EQ(sdlError("type Query { a(x: Nope): Int }"),
              "type Query, field a, argument x: unknown type Nope");
    EXPECT_EQ(sdlError("type Query { a(x: Query): Int }"),
              "type Query, field a, argument x: type Query is an object type, not an input type");
    EXPECT_EQ(sdlError("input In { a: In2 } type Query { a: Int }"),
              "input In, field a: unknown type In2");
    EXPECT_EQ(sdlError("input In { a: Int } type Query { a: In }"),
              "type Query, field a: type In is an input object type, not an output type");
    EXPECT_EQ(sdlError("type Query implements Node { a: Int }"),
              "type Query implements Node: Node is not defined");
    EXPECT_EQ(sdlError("type Query implements Int { a: Int }"),
              "type Query implements Int: Int is a scalar, not an interface");
    EXPECT_EQ(sdlError("union U = Query | Int type Query { a: Int }"),
              "union U: member Int is a scalar, not an object type");
    EXPECT_EQ(sdlError("type Query { a: Int a: String }"), "type Query: field a is defined twice");
    EXPECT_EQ(sdlError("type Query { a: Int }\ntype Query { b: Int }"),
              "line 2, column 1: type Query is defined twice");
    EXPECT_EQ(sdlError("extend type Query { a: Int }"),
              "line 1, column 8: extend type Query: type Query is not defined");
    EXPECT_EQ(sdlError("enum Query { A }\nextend type Query { a: Int }"),
              "line 2, column 8: extend type Query: Query is an enum");
    EXPECT_EQ(sdlError("schema { query: Q }"), "the query type Q is not in the schema");
    EXPECT_EQ(sdlError("schema { query: Int }"),
              "the query type Int is a scalar, not an object type");
    EXPECT_EQ(sdlError("schema { query: Q }\nschema { query: Q }"),
              "line 2, column 1: the schema is defined twice");
    EXPECT_EQ(sdlError("schema { querie: Q }"),
              "line 1, column 10: expected query, mutation or subscription, found \"querie\"");
    EXPECT_EQ(sdlError("type Query {\n  a: \n}"), "line 3, column 1: expected a type, found \"}\"");
    EXPECT_EQ(sdlError("type Query { a: Int }\nquery { a }"),
              "line 2, column 1: expected a type system definition, found \"query\"");
    EXPECT_EQ(sdlError("\"doc\" extend type Query { b: Int }"),
              "line 1, column 7: an extension cannot have a description");
    EXPECT_EQ(sdlError("extend foo"),
              "line 1, column 8: expected schema, scalar, type, interface, union, enum or "
              "input, found \"foo\"");
    EXPECT_EQ(sdlError("enum E { true }"), "line 1, column 10: an enum value cannot be named true");
    EXPECT_EQ(sdlError("type Query { a(x: Int = $v): Int }"),
              "line 1, column 25: expected a constant value, found a variable");
    EXPECT_EQ(sdlError("directive @d on"),
              "line 1, column 16: expected a name, found the end of "
              "the document");
    EXPECT_EQ(sdlError("type Query { a: Int } \xFF"), "line 1, column 23: invalid UTF-8");
    SchemaLimits limits;
    limits.max_types = 7;  // the five built-in scalars and two
    EXPECT_EQ(sdlError("type Query { a: A } type A { a: Int } type B { a: Int }", limits),
              "the schema has 8 types, more than the limit of 7");
    limits = SchemaLimits{};
    limits.max_bytes = 10;
    EXPECT_EQ(sdlError("type Query { a: Int }", limits),
              "the document is 21 bytes, more than the limit of 10");
}

TEST(GraphqlSchemaTest, SdlHostileInput) {
    std::string deep = "type Query { a: ";
    deep += std::string(100'000, '[');
    EXPECT_NE(sdlError(deep).find("nesting deeper than 64 levels"), std::string::npos);
    std::string deep_default = "type Query { a(x: Int = ";
    deep_default += std::string(100'000, '{');
    EXPECT_NE(sdlError(deep_default).find("line 1, column"), std::string::npos);
    for (std::size_t n = 0; n < kSdl.size(); n += 7) {
        std::string error;
        (void)schemaFromSdl(kSdl.substr(0, n), error);  // must not crash; most prefixes fail
    }
}

TEST(GraphqlSchemaTest, IntrospectionErrors) {
    EXPECT_EQ(introspectionError(R"({"__schema": {"types": [
        {"kind": "OBJECT", "name": "Query", "fields": [
          {"name": "a", "type": {"kind": "NON_NULL", "name": null}}]}]}})"),
              "__schema.types[0].fields[0].type: ofType is missing");
    EXPECT_EQ(introspectionError(R"({"__schema": {"types": [{"kind": "LIST", "name": "X"}]}})"),
              "__schema.types[0].kind: LIST is not the kind of a named type");
    EXPECT_EQ(introspectionError(R"({"__schema": {"types": [{"kind": "THING", "name": "X"}]}})"),
              "__schema.types[0].kind: THING is not the kind of a named type");
    EXPECT_EQ(introspectionError(R"({"__schema": {"types": [{"kind": "SCALAR", "name": "X"},
        {"kind": "OBJECT", "name": "Y", "fields": [{"name": "a", "args": [],
         "type": {"kind": "WRAPPER", "name": "Int"}}]}]}})"),
              "__schema.types[1].fields[0].type.kind: unknown kind \"WRAPPER\"");
    EXPECT_EQ(introspectionError(R"({"__schema": {"types": [{"kind": "SCALAR"}]}})"),
              "__schema.types[0]: name is missing");
    EXPECT_EQ(introspectionError(R"({"__schema": {"types": [{"kind": "SCALAR", "name": 5}]}})"),
              "__schema.types[0].name: expected a string");
    EXPECT_EQ(introspectionError(R"({"__schema": {"types": {}}})"),
              "__schema.types: expected an array");
    EXPECT_EQ(introspectionError(R"({"__schema": {"queryType": {"name": "Query"}, "types": [
        {"kind": "OBJECT", "name": "Query", "fields": [{"name": "a", "args": [],
         "type": {"kind": "OBJECT", "name": "Missing"}}]}]}})"),
              "type Query, field a: unknown type Missing");
    EXPECT_EQ(introspectionError(R"({"__schema": {"queryType": {"name": "Nope"}, "types": []}})"),
              "the query type Nope is not in the schema");
    EXPECT_EQ(introspectionError(
                  R"({"data": null, "errors": [{"message": "introspection is disabled"}]})"),
              "the introspection query failed: introspection is disabled");
    EXPECT_EQ(introspectionError(R"({"errors": [{"message": "boom"}, {"message": "more"}]})"),
              "the introspection query failed: boom");
    EXPECT_EQ(introspectionError(R"({"data": {}})"), "the introspection result has no __schema");
    EXPECT_EQ(introspectionError("[1]"), "the introspection result is not a JSON object");
    EXPECT_EQ(introspectionError(R"({"__schema": 3})"), "__schema: expected an object");
    EXPECT_EQ(introspectionError(R"({"__schema": {}})"), "__schema: types is missing");
    EXPECT_EQ(introspectionError("{\"__schema\": "),
              "the introspection result is not valid JSON: Invalid value. (offset 13)");
}

TEST(GraphqlSchemaTest, IntrospectionBounds) {
    const std::string bomb = std::string(100'000, '[') + std::string(100'000, ']');
    EXPECT_EQ(introspectionError(bomb), "the introspection result nests deeper than 128 levels");
    // Brackets inside strings do not count.
    std::string error;
    const std::string quoted =
        R"({"__schema": {"types": [{"kind": "SCALAR", "name": "X", "description": ")" +
        std::string(1000, '[') + R"(\"{"}]}})";
    EXPECT_TRUE(schemaFromIntrospection(quoted, error).has_value()) << error;
    SchemaLimits limits;
    limits.max_bytes = 100;
    EXPECT_EQ(introspectionError(kIntrospection, limits),
              "the introspection result is " + std::to_string(kIntrospection.size()) +
                  " bytes, more than the limit of 100");
    limits = SchemaLimits{};
    limits.max_types = 3;
    EXPECT_EQ(introspectionError(kIntrospection, limits), "the schema has more than 3 types");
    for (std::size_t n = 0; n + 1 < kIntrospection.size(); ++n) {
        error.clear();
        EXPECT_FALSE(schemaFromIntrospection(kIntrospection.substr(0, n), error).has_value());
        EXPECT_FALSE(error.empty());
    }
}

TEST(GraphqlSchemaTest, IntrospectionDefaultsThatDoNotParseAreDropped) {
    std::string error;
    const auto s = schemaFromIntrospection(R"({"__schema": {"queryType": {"name": "Q"}, "types": [
        {"kind": "OBJECT", "name": "Q", "fields": [{"name": "a", "args": [
          {"name": "x", "type": {"kind": "SCALAR", "name": "Int"}, "defaultValue": "{broken"},
          {"name": "y", "type": {"kind": "SCALAR", "name": "String"}, "defaultValue": "\"s\""}],
         "type": {"kind": "SCALAR", "name": "Int"}}]}]}})",
                                           error);
    ASSERT_TRUE(s.has_value()) << error;
    const Field* a = s->type("Q")->field("a");
    EXPECT_FALSE(a->args[0].default_json.has_value());
    EXPECT_EQ(*a->args[1].default_json, "\"s\"");
}

TEST(GraphqlSchemaTest, IntrospectionQueryIsAValidDocument) {
    std::string error;
    const auto doc = parseExecutable(kIntrospectionQuery, error);
    ASSERT_TRUE(doc.has_value()) << error;
    ASSERT_EQ(doc->operations.size(), 1U);
    EXPECT_EQ(doc->operations[0].root_fields, std::vector<std::string>{"__schema"});
    EXPECT_EQ(kIntrospectionQuery.find("isOneOf"), std::string_view::npos);
    EXPECT_EQ(kIntrospectionQuery.find("directives"), std::string_view::npos);
    EXPECT_NE(kIntrospectionQuery.find("defaultValue"), std::string_view::npos);
    EXPECT_NE(kIntrospectionQuery.find("enumValues(includeDeprecated: true)"),
              std::string_view::npos);
    std::size_t of_types = 0;
    for (std::size_t at = kIntrospectionQuery.find("ofType"); at != std::string_view::npos;
         at = kIntrospectionQuery.find("ofType", at + 1)) {
        ++of_types;
    }
    EXPECT_EQ(of_types, 8U);
}

TEST(GraphqlSchemaTest, CheckOperation) {
    const Schema s = sdlOk(kSdl);
    EXPECT_EQ(checkOperation(operation("query ($id: ID!, $f: ItemFilter) { item(id: $id, "
                                       "filter: $f) { id } __typename }"),
                             s),
              "");
    EXPECT_EQ(checkOperation(operation("{ itme(id: 1) { id } }"), s),
              "Query has no field \"itme\" (did you mean \"item\"?)");
    EXPECT_EQ(checkOperation(operation("{ zzzzzz }"), s), "Query has no field \"zzzzzz\"");
    EXPECT_EQ(checkOperation(operation("query ($filter: ItemFiltre) { item { id } }"), s),
              "variable $filter: type ItemFiltre is not in the schema");
    EXPECT_EQ(checkOperation(operation("query ($x: [Item!]) { item { id } }"), s),
              "variable $x: type Item is an object type, not an input type");
    EXPECT_EQ(
        checkOperation(operation("mutation ($i: ItemInput!) { addItem(input: $i) { id } }"), s),
        "");
    EXPECT_EQ(checkOperation(operation("subscription { x }"), s),
              "the schema has no subscription type");
    const Schema no_mutation = sdlOk("type Query { a: Int }");
    EXPECT_EQ(checkOperation(operation("mutation { a }"), no_mutation),
              "the schema has no mutation type");
}

// ---- Names, UTF-8, excerpts, limits ----

/// `text` as a JSON string: quotes and backslashes escaped, control characters as \u00XX, other
/// bytes (invalid UTF-8 included) as they are, as a sloppy upstream would send them.
std::string rawJsonString(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            static constexpr std::string_view kHex = "0123456789abcdef";
            out += "\\u00";
            out += kHex[static_cast<unsigned char>(c) >> 4U];
            out += kHex[static_cast<unsigned char>(c) & 0xFU];
        } else {
            out += c;
        }
    }
    return out + "\"";
}

/// Whether `json` parses with RapidJSON's UTF-8 validation (as crankd reads a plugin's output).
bool validUtf8Json(std::string_view json) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag>(json.data(), json.size());
    return !doc.HasParseError();
}

/// An introspection result with a name in each place one can be; `$ROOT`, `$VALUE`, `$INPUT`,
/// `$IFACE`, `$FIELD`, `$ARG`, `$REF` and `$TYPE` stand for them.
constexpr std::string_view kNamedPlaces = R"({"__schema": {"queryType": {"name": $ROOT}, "types": [
  {"kind": "SCALAR", "name": "A"},
  {"kind": "ENUM", "name": "E", "enumValues": [{"name": $VALUE}]},
  {"kind": "INPUT_OBJECT", "name": "In", "inputFields": [
    {"name": $INPUT, "type": {"kind": "SCALAR", "name": "A"}}]},
  {"kind": "OBJECT", "name": "Query", "interfaces": [{"kind": "INTERFACE", "name": $IFACE}],
   "fields": [{"name": $FIELD, "args": [
      {"name": $ARG, "type": {"kind": "NON_NULL", "ofType": {"kind": "INPUT_OBJECT", "name": $REF}}}],
     "type": {"kind": "SCALAR", "name": "A"}}]},
  {"kind": "INTERFACE", "name": "Node", "fields": [
    {"name": "x", "args": [], "type": {"kind": "SCALAR", "name": "A"}}]},
  {"kind": "SCALAR", "name": $TYPE}
]}})";

/// kNamedPlaces with `name` in `place` and good names elsewhere.
std::string withName(std::string_view place, std::string_view name) {
    const std::pair<std::string_view, std::string_view> places[] = {
        {"$ROOT", "Query"}, {"$VALUE", "V"},    {"$INPUT", "i"}, {"$IFACE", "Node"},
        {"$FIELD", "item"}, {"$ARG", "filter"}, {"$REF", "In"},  {"$TYPE", "Extra"},
    };
    std::string json(kNamedPlaces);
    for (const auto& [marker, good] : places) {
        const std::size_t at = json.find(marker);
        json.replace(at, marker.size(), rawJsonString(marker == place ? name : good));
    }
    return json;
}

TEST(GraphqlSchemaTest, IntrospectionNamesMustBeGraphqlNames) {
    std::string error;
    const auto good = schemaFromIntrospection(withName("", ""), error);
    ASSERT_TRUE(good.has_value()) << error;
    const std::pair<std::string_view, std::string_view> paths[] = {
        {"$ROOT", "__schema.queryType.name"},
        {"$VALUE", "__schema.types[1].enumValues[0].name"},
        {"$INPUT", "__schema.types[2].inputFields[0].name"},
        {"$IFACE", "__schema.types[3].interfaces[0].name"},
        {"$FIELD", "__schema.types[3].fields[0].name"},
        {"$ARG", "__schema.types[3].fields[0].args[0].name"},
        {"$REF", "__schema.types[3].fields[0].args[0].type.ofType.name"},
        {"$TYPE", "__schema.types[5].name"},
    };
    for (const auto& [place, path] : paths) {
        SCOPED_TRACE(place);
        const std::string at(path);
        EXPECT_EQ(introspectionError(withName(place, "item { id }")),
                  at + ": \"item { id }\" is not a GraphQL name");
        EXPECT_EQ(introspectionError(withName(place, "")), at + ": \"\" is not a GraphQL name");
        EXPECT_EQ(introspectionError(withName(place, "1a")), at + ": \"1a\" is not a GraphQL name");
        EXPECT_EQ(introspectionError(withName(place, "caf\xC3\xA9")),
                  at + ": \"caf\xC3\xA9\" is not a GraphQL name");
        EXPECT_EQ(introspectionError(withName(place, "a\nb\xE9")),
                  at + ": \"a\\nb\xEF\xBF\xBD\" is not a GraphQL name");
        EXPECT_EQ(introspectionError(withName(place, std::string(kMaxNameBytes + 1, 'n'))),
                  at + ": \"" + std::string(61, 'n') +
                      "...\" is longer than the 1024 bytes a GraphQL name may have");
        if (place != "$FIELD" && place != "$REF") {
            continue;  // the same code reads every name: two places are enough for 5 MB
        }
        // 5 MB of a hostile name: the message quotes 64 bytes of it.
        std::string huge;
        while (huge.size() < std::size_t{5} * 1024 * 1024) {
            huge += "item { id } ";
        }
        const std::string message = introspectionError(withName(place, huge));
        EXPECT_EQ(message, at + ": \"item { id } item { id } item { id } item { id } item { id } "
                                "i...\" is not a GraphQL name");
        EXPECT_LT(message.size(), 1024U);
    }
    // The longest name is fine; enum values are names other than true, false and null.
    EXPECT_TRUE(schemaFromIntrospection(withName("$TYPE", std::string(kMaxNameBytes, 'n')), error)
                    .has_value())
        << error;
    EXPECT_EQ(introspectionError(withName("$VALUE", "true")),
              "__schema.types[1].enumValues[0].name: an enum value cannot be named true");
}

TEST(GraphqlSchemaTest, SdlNamesAreGraphqlNames) {
    // Every name the SDL reader keeps comes from a name token, at most kMaxNameBytes long.
    const Schema s = sdlOk(kSdl);
    std::vector<std::string> names = {s.query_type, s.mutation_type};
    for (const auto& [name, t] : s.types) {
        names.push_back(name);
        names.insert(names.end(), t.interfaces.begin(), t.interfaces.end());
        names.insert(names.end(), t.possible_types.begin(), t.possible_types.end());
        for (const auto& f : t.fields) {
            names.push_back(f.name);
            names.push_back(f.type.namedType());
            for (const auto& a : f.args) {
                names.push_back(a.name);
                names.push_back(a.type.namedType());
            }
        }
        for (const auto& f : t.input_fields) {
            names.push_back(f.name);
            names.push_back(f.type.namedType());
        }
        for (const auto& v : t.enum_values) {
            names.push_back(v.name);
        }
    }
    for (const auto& name : names) {
        EXPECT_TRUE(detail::isName(name)) << name;
    }
    EXPECT_EQ(sdlError("type Query { \"a b\": Int }"),  // a description, then no name
              "line 1, column 19: expected a name, found \":\"");
    EXPECT_EQ(sdlError("type Query { caf\xC3\xA9: Int }"),
              "line 1, column 17: unexpected character \"\xC3\xA9\"");
    const std::string longest(kMaxNameBytes, 'n');
    EXPECT_TRUE(sdlOk("type Query { " + longest + ": Int }").type("Query")->field(longest));
    const std::string huge(std::size_t{5} * 1024 * 1024, 'n');
    const std::string message = sdlError("type Query { a: Int }\ntype " + huge + " { a: Int }");
    EXPECT_EQ(message, "line 2, column 6: a name longer than 1024 bytes: \"" +
                           std::string(61, 'n') + "...\"");
}

/// An introspection result whose descriptions and defaults hold invalid UTF-8.
constexpr std::string_view kSloppyIntrospection =
    R"({"__schema": {"queryType": {"name": "Query"}, "types": [
  {"kind": "OBJECT", "name": "Query", "description": "caf)"
    "\xE9"
    R"(", "fields": [
    {"name": "a", "description": "surrogate )"
    "\xED\xA0\x80"
    R"( then )"
    "\xC3\xA9"
    R"(", "args": [
      {"name": "x", "description": "bad )"
    "\xFF"
    R"(", "type": {"kind": "INPUT_OBJECT", "name": "In"},
       "defaultValue": "{s: \"d)"
    "\xE9"
    R"(\"}"}],
     "type": {"kind": "SCALAR", "name": "Int"}}]},
  {"kind": "INPUT_OBJECT", "name": "In", "description": "in)"
    "\xC3"
    R"(", "inputFields": [
    {"name": "s", "description": "s)"
    "\xE9"
    R"(", "type": {"kind": "SCALAR", "name": "String"},
     "defaultValue": "\"d)"
    "\xE9"
    R"(\""},
    {"name": "e", "type": {"kind": "ENUM", "name": "E"}}]},
  {"kind": "ENUM", "name": "E", "description": "\u00e9 )"
    "\xE9\xE9"
    R"(", "enumValues": [
    {"name": "V", "description": "v)"
    "\xF4\x90\x80\x80"
    R"("}]}
]}})";

TEST(GraphqlSchemaTest, IntrospectionRepairsInvalidUtf8InDescriptions) {
    ASSERT_FALSE(validUtf8Json(kSloppyIntrospection));
    std::string error;
    const auto s = schemaFromIntrospection(kSloppyIntrospection, error);
    ASSERT_TRUE(s.has_value()) << error;
    const std::string r = "\xEF\xBF\xBD";  // U+FFFD
    EXPECT_EQ(s->type("Query")->description, "caf" + r);
    EXPECT_EQ(s->type("Query")->field("a")->description,
              "surrogate " + r + r + r + " then \xC3\xA9");
    EXPECT_EQ(s->type("Query")->field("a")->args[0].description, "bad " + r);
    EXPECT_EQ(s->type("In")->description, "in" + r);
    EXPECT_EQ(s->type("In")->input_fields[0].description, "s" + r);
    EXPECT_EQ(s->type("E")->description, "\xC3\xA9 " + r + r);
    EXPECT_EQ(s->type("E")->enum_values[0].description, "v" + r + r + r + r);
    // A default that is not UTF-8 does not parse as a GraphQL value: it is dropped.
    EXPECT_FALSE(s->type("Query")->field("a")->args[0].default_json.has_value());
    EXPECT_FALSE(s->type("In")->input_fields[0].default_json.has_value());
    // What is derived from the schema is valid UTF-8 JSON, as crankd requires of describe().
    const OperationDefinition op = operation("query ($x: In, $e: E) { a(x: $x) }");
    std::vector<std::string> warnings;
    const std::string input_schema = variablesInputSchema(op, &*s, warnings, error);
    ASSERT_EQ(error, "");
    EXPECT_TRUE(validUtf8Json(input_schema)) << input_schema;
    EXPECT_NE(input_schema.find("bad " + r), std::string::npos) << input_schema;
    EXPECT_TRUE(operationDescription(op, &*s).find('\xE9') == std::string::npos);
}

TEST(GraphqlSchemaTest, SdlRefusesInvalidUtf8Anywhere) {
    EXPECT_EQ(sdlError("\"caf\xE9\" type Query { a: Int }"), "line 1, column 5: invalid UTF-8");
    EXPECT_EQ(sdlError("type Query { a(x: String = \"\xED\xA0\x80\"): Int }"),
              "line 1, column 29: invalid UTF-8");
    EXPECT_EQ(sdlError("\"\\uDC00\" type Query { a: Int }"),
              "line 1, column 2: invalid Unicode escape sequence: a lone surrogate");
}

/// `n` bytes of hostile text: not UTF-8 in places, with quotes and newlines.
std::string hugeText(std::size_t n) {
    std::string text;
    while (text.size() < n) {
        text += "x\"\n\xE9y ";
    }
    return text;
}

TEST(GraphqlSchemaTest, ErrorsQuoteExcerptsOfHugeInput) {
    const std::size_t five_mb = std::size_t{5} * 1024 * 1024;
    const std::string huge = hugeText(five_mb);
    const auto check = [](const std::string& message, std::string_view starts) {
        EXPECT_LT(message.size(), 1024U) << message.substr(0, 300);
        EXPECT_EQ(message.substr(0, starts.size()), starts);
        EXPECT_TRUE(validUtf8Json(rawJsonString(message))) << message.substr(0, 300);
    };
    // The upstream's error message.
    std::string message = introspectionError(R"({"data": null, "errors": [{"message": )" +
                                             rawJsonString(huge) + "}]}");
    check(message, "the introspection query failed: x\"\\n\xEF\xBF\xBDy x");
    EXPECT_EQ(message.substr(message.size() - 3), "...");
    // Kinds, of a type and of a type reference.
    check(introspectionError(R"({"__schema": {"types": [{"kind": )" + rawJsonString(huge) +
                             R"(, "name": "X"}]}})"),
          "__schema.types[0].kind: x\"\\n\xEF\xBF\xBDy x");
    check(introspectionError(
              R"({"__schema": {"types": [{"kind": "OBJECT", "name": "Y", "fields": [{"name": "a",
                 "args": [], "type": {"kind": )" +
              rawJsonString(huge) + R"(, "name": "Int"}}]}]}})"),
          "__schema.types[0].fields[0].type.kind: unknown kind \"x\"\\n\xEF\xBF\xBDy x");
    // Names of the longest kind (with their first letter), four in one message.
    const std::string n(kMaxNameBytes - 1, 'n');
    check(sdlError("type Q" + n + " { f" + n + "(a" + n + ": U" + n + "): Int }"), "type Qnnn");
    check(sdlError("type Query { a: Int }\ntype T" + n + " { f" + n + ": Int f" + n + ": Int }"),
          "type Tnnn");
    check(sdlError("type Query { a: Int }\nextend type T" + n + " { a: Int }"),
          "line 2, column 8: extend type Tnnn");
    check(sdlError("schema { query: Q" + n + " }"), "the query type Qnnn");
    check(sdlError("union U" + n + " = T" + n + " type Query { a: Int }"), "union Unnn");
    check(sdlError("type Query implements I" + n + " { a: Int }"), "type Query implements Innn");
    // A huge token where a definition should be.
    check(sdlError("type Query { a: Int }\n" + std::string(five_mb, '7')),
          "line 2, column 1: expected a type system definition, found \"777");
    // checkOperation.
    const Schema s = sdlOk("type Query { a: Int }");
    check(checkOperation(operation("query ($v" + n + ": T" + n + ") { a }"), s), "variable $vnnn");
    check(checkOperation(operation("{ f" + n + " }"), s), "Query has no field \"fnnn");
}

TEST(GraphqlSchemaTest, DefaultLimitsMatchThePluginsSchemaBound) {
    // The plugin reads schemas (files and introspection responses) up to 32 MiB
    // (GraphqlDefaults::max_schema_bytes): the readers' defaults take as much.
    const std::size_t mib = std::size_t{1024} * 1024;
    EXPECT_EQ(SchemaLimits{}.max_bytes, 32 * mib);
    EXPECT_EQ(sdlLimits().max_bytes, SchemaLimits{}.max_bytes);
    std::string error;
    const std::string padding(20 * mib, 'p');
    EXPECT_TRUE(schemaFromText(R"({"__schema": {"queryType": {"name": "Q"}, "types": [
        {"kind": "OBJECT", "name": "Q", "description": ")" +
                                   padding + R"(", "fields": [{"name": "a", "args": [],
         "type": {"kind": "SCALAR", "name": "Int"}}]}]}})",
                               error)
                    .has_value())
        << error.substr(0, 200);
    EXPECT_TRUE(schemaFromText("# " + padding + "\ntype Query { a: Int }", error).has_value())
        << error.substr(0, 200);
    EXPECT_FALSE(schemaFromText("# " + std::string(32 * mib, 'p'), error).has_value());
    EXPECT_EQ(error, "the document is " + std::to_string(32 * mib + 2) +
                         " bytes, more than the limit of " + std::to_string(32 * mib));
}

}  // namespace
}  // namespace crank::graphql
