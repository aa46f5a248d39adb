// importOperations and defaultSelection (`crankd import-graphql`): tool and operation names,
// documents with one variable per argument, selection sets chosen within depth and width bounds
// (nested objects, unions, interfaces, recursive types), fields left out, and the JSON output.
#include "schema_import.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "graphql_syntax.h"
#include "json/json_schema.h"
#include "variables_schema.h"

namespace crank::graphql {
namespace {

TypeRef named(const std::string& name) {
    return TypeRef::named(name);
}
TypeRef nonNull(TypeRef t) {
    return TypeRef::nonNull(std::move(t));
}
TypeRef listOf(TypeRef t) {
    return TypeRef::listOf(std::move(t));
}

InputValue arg(const std::string& name, TypeRef type,
               std::optional<std::string> default_json = std::nullopt) {
    InputValue v;
    v.name = name;
    v.type = std::move(type);
    v.default_json = std::move(default_json);
    return v;
}

Field field(const std::string& name, TypeRef type, std::vector<InputValue> args = {},
            const std::string& description = "", bool deprecated = false) {
    Field f;
    f.name = name;
    f.type = std::move(type);
    f.args = std::move(args);
    f.description = description;
    f.deprecated = deprecated;
    return f;
}

NamedType object(const std::string& name, std::vector<Field> fields,
                 NamedType::Kind kind = NamedType::Kind::object) {
    NamedType t;
    t.kind = kind;
    t.name = name;
    t.fields = std::move(fields);
    return t;
}

void add(Schema& schema, NamedType t) {
    std::string name = t.name;
    schema.types.emplace(std::move(name), std::move(t));
}

Schema sampleSchema() {
    Schema s;
    for (const char* builtin : {"Int", "Float", "String", "Boolean", "ID"}) {
        NamedType t;
        t.name = builtin;
        add(s, t);
    }
    NamedType order;
    order.kind = NamedType::Kind::enum_type;
    order.name = "Order";
    order.enum_values = {{"ASC", "", false}, {"DESC", "", false}};
    add(s, order);
    NamedType color = order;
    color.name = "Color";
    color.enum_values = {{"RED", "", false}, {"true_", "", false}};
    add(s, color);
    NamedType filter;
    filter.kind = NamedType::Kind::input_object;
    filter.name = "ItemFilter";
    filter.input_fields = {arg("owner", named("ID")),
                           arg("colors", listOf(nonNull(named("Color")))),
                           arg("note", named("String"))};
    add(s, filter);
    NamedType create = filter;
    create.name = "CreateItemInput";
    add(s, create);

    add(s,
        object("Item",
               {field("id", nonNull(named("ID"))), field("name", named("String")),
                field("owner", named("User")),
                field("tags", listOf(named("String")), {arg("first", nonNull(named("Int")))}),
                field("legacy", named("String"), {}, "", true), field("color", named("Color"))}));
    add(s, object("User", {field("id", nonNull(named("ID"))), field("name", named("String")),
                           field("friends", nonNull(listOf(nonNull(named("User"))))),
                           field("best", named("User"))}));
    NamedType node =
        object("Node", {field("id", nonNull(named("ID")))}, NamedType::Kind::interface);
    node.possible_types = {"Item", "User"};
    add(s, node);
    NamedType search;
    search.kind = NamedType::Kind::union_type;
    search.name = "SearchResult";
    search.possible_types = {"Item", "User", "Empty"};
    add(s, search);
    add(s, object("ItemConnection",
                  {field("edges", listOf(named("Edge"))),
                   field("pageInfo", nonNull(named("PageInfo"))), field("total", named("Int"))}));
    add(s, object("Edge", {field("cursor", named("String")), field("node", named("Item"))}));
    add(s, object("PageInfo", {field("hasNextPage", nonNull(named("Boolean")))}));
    add(s, object("Empty", {field("child", named("Item"), {arg("req", nonNull(named("Int")))})}));

    add(s, object("Query",
                  {
                      field("items", nonNull(listOf(nonNull(named("Item")))),
                            {arg("owner", nonNull(named("ID"))), arg("first", named("Int"), "10")},
                            "Items of an owner"),
                      field("itemsByOwner", named("ItemConnection"),
                            {arg("owner", nonNull(named("ID"))), arg("first", named("Int"), "10")}),
                      field("node", named("Node"), {arg("id", nonNull(named("ID")))}),
                      field("search", nonNull(listOf(nonNull(named("SearchResult")))),
                            {arg("text", nonNull(named("String")))}),
                      field("version", nonNull(named("String"))),
                      field("me", named("User")),
                      field("empty", named("Empty")),
                      field("old", named("String"), {}, "", true),
                      field("sorted", listOf(named("Item")),
                            {arg("order", named("Order"), R"("ASC")"),
                             arg("filter", named("ItemFilter"),
                                 R"({"owner":"me","colors":["RED","true_"],"note":"a \"b\"\n"})")}),
                      field("getURLForItem", named("String"), {arg("id", nonNull(named("ID")))}),
                      field("broken", named("Int"), {arg("x", named("Item"))}),
                  }));
    add(s, object("Mutation", {field("createItem", named("Item"),
                                     {arg("input", nonNull(named("CreateItemInput")))}),
                               field("items", named("Int"))}));
    add(s, object("Subscription", {field("ticks", named("Int"))}));
    s.query_type = "Query";
    s.mutation_type = "Mutation";
    s.subscription_type = "Subscription";
    return s;
}

std::string selectionOf(const Schema& s, const std::string& type, std::size_t depth = 2,
                        std::size_t fields = 64) {
    ImportOptions options;
    options.max_depth = depth;
    options.max_fields = fields;
    return defaultSelection(s, named(type), options);
}

TEST(DefaultSelection, LeavesAndObjectsWithinDepth) {
    const Schema s = sampleSchema();
    // tags (a required argument) and legacy (deprecated) are left out; owner's own objects are
    // past the depth.
    EXPECT_EQ(selectionOf(s, "Item"), "{ id name owner { id name } color }");
    EXPECT_EQ(selectionOf(s, "Item", 1), "{ id name color }");
    EXPECT_EQ(selectionOf(s, "ItemConnection"),
              "{ edges { cursor } pageInfo { hasNextPage } total }");
    EXPECT_EQ(selectionOf(s, "ItemConnection", 3),
              "{ edges { cursor node { id name color } } pageInfo { hasNextPage } total }");
    EXPECT_EQ(selectionOf(s, "String"), "");
    EXPECT_EQ(selectionOf(s, "Order"), "");
    EXPECT_EQ(defaultSelection(s, nonNull(listOf(named("PageInfo"))), ImportOptions{}),
              "{ hasNextPage }");
}

TEST(DefaultSelection, RecursiveTypesAreBoundedByDepth) {
    const Schema s = sampleSchema();
    EXPECT_EQ(selectionOf(s, "User"), "{ id name friends { id name } best { id name } }");
    EXPECT_EQ(selectionOf(s, "User", 3),
              "{ id name friends { id name friends { id name } best { id name } } "
              "best { id name friends { id name } best { id name } } }");
    const std::string deepest = selectionOf(s, "User", 8);
    EXPECT_EQ(std::count(deepest.begin(), deepest.end(), '{'),
              std::count(deepest.begin(), deepest.end(), '}'));
    EXPECT_EQ(selectionOf(s, "User", 100), deepest);      // clamped to 8
    EXPECT_EQ(selectionOf(s, "User", 0), "{ id name }");  // clamped to 1
}

TEST(DefaultSelection, WidthIsBounded) {
    const Schema s = sampleSchema();
    EXPECT_EQ(selectionOf(s, "User", 2, 1), "{ id }");
    EXPECT_EQ(selectionOf(s, "User", 2, 3), "{ id name friends { id name } }");
    // A wide, deep recursive type stays within the per-document budget.
    Schema wide = sampleSchema();
    std::vector<Field> fields;
    fields.reserve(65);
    for (int i = 0; i < 64; ++i) {
        fields.push_back(field("f" + std::to_string(i), named("Wide")));
    }
    fields.push_back(field("id", named("ID")));
    add(wide, object("Wide", fields));
    const std::string text = selectionOf(wide, "Wide", 8);
    EXPECT_LT(text.size(), 40'000U);
    EXPECT_NE(text.find("id"), std::string::npos);
}

TEST(DefaultSelection, UnionsInterfacesAndEmptyObjects) {
    const Schema s = sampleSchema();
    EXPECT_EQ(selectionOf(s, "SearchResult"),
              "{ __typename ... on Item { id name color } ... on User { id name } }");
    EXPECT_EQ(selectionOf(s, "Node"), "{ id }");
    EXPECT_EQ(selectionOf(s, "Empty"), "{ __typename }");
}

rapidjson::Document parse(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    EXPECT_FALSE(doc.HasParseError()) << json;
    return doc;
}

const rapidjson::Value* find(const rapidjson::Document& doc, const std::string& name) {
    for (const auto& op : doc.GetArray()) {
        if (name == op["name"].GetString()) {
            return &op;
        }
    }
    return nullptr;
}

std::string document(const rapidjson::Document& doc, const std::string& name) {
    const rapidjson::Value* op = find(doc, name);
    if (op == nullptr) {
        ADD_FAILURE() << "no operation " << name;
        return "";
    }
    return (*op)["config"]["document"].GetString();
}

TEST(ImportOperations, NamesDocumentsAndDescriptions) {
    const Schema s = sampleSchema();
    ImportOptions options;
    options.endpoint = "http://127.0.0.1:4000/graphql";
    options.prefix = "gql.";
    std::vector<std::string> warnings;
    const std::string text = importOperations(s, options, warnings);
    const auto doc = parse(text);
    ASSERT_TRUE(doc.IsArray());
    std::vector<std::string> names;
    for (const auto& op : doc.GetArray()) {
        names.emplace_back(op["name"].GetString());
    }
    EXPECT_EQ(names, (std::vector<std::string>{"gql.items", "gql.items_by_owner", "gql.node",
                                               "gql.search", "gql.version", "gql.me", "gql.empty",
                                               "gql.sorted", "gql.get_url_for_item",
                                               "gql.create_item", "gql.items_mutation"}));
    EXPECT_EQ(warnings,
              (std::vector<std::string>{
                  "Query.old is deprecated: not imported",
                  "Query.broken: argument x: type Item is not an input type: not imported",
                  "subscriptions (Subscription) are not imported: the graphql plugin runs "
                  "queries and mutations"}));

    const rapidjson::Value& first = doc[0];
    EXPECT_STREQ(first["description"].GetString(), "Items of an owner");
    EXPECT_STREQ(first["protocol"].GetString(), "graphql");
    EXPECT_STREQ(first["config"]["endpoint"].GetString(), "http://127.0.0.1:4000/graphql");
    EXPECT_STREQ(first["config"]["operation_name"].GetString(), "Items");
    EXPECT_EQ(document(doc, "gql.items_by_owner"),
              "query ItemsByOwner($owner: ID!, $first: Int = 10) { itemsByOwner(owner: $owner, "
              "first: $first) { edges { cursor } pageInfo { hasNextPage } total } }");
    EXPECT_STREQ((*find(doc, "gql.items_by_owner"))["config"]["operation_name"].GetString(),
                 "ItemsByOwner");
    EXPECT_STREQ((*find(doc, "gql.items_by_owner"))["description"].GetString(),
                 "GraphQL query field itemsByOwner");
    EXPECT_EQ(document(doc, "gql.version"), "query Version { version }");
    EXPECT_EQ(document(doc, "gql.me"),
              "query Me { me { id name friends { id name } best { id name } } }");
    EXPECT_EQ(document(doc, "gql.empty"), "query Empty { empty { __typename } }");
    EXPECT_EQ(document(doc, "gql.search"),
              "query Search($text: String!) { search(text: $text) { __typename ... on Item { id "
              "name color } ... on User { id name } } }");
    EXPECT_EQ(document(doc, "gql.sorted"),
              "query Sorted($order: Order = ASC, $filter: ItemFilter = {owner: \"me\", colors: "
              "[RED, true_], note: \"a \\\"b\\\"\\n\"}) { sorted(order: $order, filter: $filter) "
              "{ id name owner { id name } color } }");
    EXPECT_STREQ((*find(doc, "gql.get_url_for_item"))["config"]["operation_name"].GetString(),
                 "GetURLForItem");
    EXPECT_EQ(document(doc, "gql.create_item"),
              "mutation CreateItem($input: CreateItemInput!) { createItem(input: $input) { id "
              "name owner { id name } color } }");
    EXPECT_STREQ((*find(doc, "gql.create_item"))["description"].GetString(),
                 "GraphQL mutation field createItem");
    EXPECT_EQ(document(doc, "gql.items_mutation"), "mutation Items { items }");

    // Pretty: two-space indent, one member per line.
    EXPECT_TRUE(text.starts_with("[\n  {\n    \"name\": \"gql.items\",\n")) << text;
}

TEST(ImportOperations, WithoutMutationsOrPrefix) {
    const Schema s = sampleSchema();
    ImportOptions options;
    options.mutations = false;
    std::vector<std::string> warnings;
    const auto doc = parse(importOperations(s, options, warnings));
    ASSERT_EQ(doc.Size(), 9U);
    EXPECT_STREQ(doc[0]["name"].GetString(), "items");
    EXPECT_EQ(find(doc, "create_item"), nullptr);
}

TEST(ImportOperations, NameCollisionsAndLongNames) {
    Schema s;
    NamedType str;
    str.name = "String";
    add(s, str);
    const std::string longName(200, 'a');
    add(s,
        object("Query", {field("itemCount", named("String")), field("item_count", named("String")),
                         field("ItemCount", named("String")), field(longName, named("String"))}));
    add(s, object("Mutation", {field("itemCount", named("String"))}));
    s.query_type = "Query";
    s.mutation_type = "Mutation";
    std::vector<std::string> warnings;
    const auto doc = parse(importOperations(s, ImportOptions{}, warnings));
    ASSERT_EQ(doc.Size(), 5U);
    EXPECT_STREQ(doc[0]["name"].GetString(), "item_count");
    EXPECT_STREQ(doc[1]["name"].GetString(), "item_count_2");
    EXPECT_STREQ(doc[2]["name"].GetString(), "item_count_3");
    EXPECT_EQ(std::string(doc[3]["name"].GetString()), std::string(128, 'a'));
    EXPECT_STREQ(doc[4]["name"].GetString(), "item_count_mutation");
    EXPECT_EQ(warnings.size(), 2U);
}

TEST(ImportOperations, UnusableDefaultsAreLeftOut) {
    Schema s;
    NamedType integer;
    integer.name = "Int";
    add(s, integer);
    const std::string deep = std::string(100, '[') + std::string(100, ']');
    add(s, object("Query", {field("a", named("Int"),
                                  {arg("x", listOf(named("Int")), deep),
                                   arg("y", named("Int"), "{bad"), arg("z", named("Int"), "1")})}));
    s.query_type = "Query";
    std::vector<std::string> warnings;
    const auto doc = parse(importOperations(s, ImportOptions{}, warnings));
    ASSERT_EQ(doc.Size(), 1U);
    EXPECT_EQ(document(doc, "a"),
              "query A($x: [Int], $y: Int, $z: Int = 1) { a(x: $x, y: $y, z: $z) }");
}

TEST(ImportOperations, EmptySchemaGivesAnEmptyArray) {
    std::vector<std::string> warnings;
    EXPECT_EQ(importOperations(Schema{}, ImportOptions{}, warnings), "[]");
    EXPECT_TRUE(warnings.empty());
}

constexpr std::string_view kSdl = R"(
"""An ISO-8601 date"""
scalar DateTime
enum Order { ASC DESC }
enum Color { RED GREEN @deprecated(reason: "no") }
input ItemFilter { owner: ID, colors: [Color!] = [RED], since: DateTime, and: [ItemFilter!] }
input CreateItemInput { name: String!, color: Color = RED, filter: ItemFilter }
input Pick @oneOf { id: ID, name: String }
interface Node { id: ID! }
type Item implements Node {
  id: ID!
  name: String
  owner: User
  tags(first: Int!): [String]
  legacy: String @deprecated
  color: Color
  created: DateTime
}
type User implements Node { id: ID! name: String friends: [User!]! best: User }
union SearchResult = Item | User
type Query {
  "Items of an owner"
  items(
    "Whose items"
    owner: ID!
    first: Int = 10
    order: Order = ASC
    filter: ItemFilter = {owner: "me", colors: [RED]}
  ): [Item!]!
  node(id: ID!): Node
  search(text: String!, pick: Pick): [SearchResult!]!
  version: String!
  me: User
  old: String @deprecated
  matrix(m: [[Int!]]!): [[Int]]
  getURLForItem(id: ID!): String
}
type Mutation { createItem(input: CreateItemInput!): Item  items: Int }
type Subscription { ticks: Int }
)";

// Every imported document parses, names its operation, passes checkOperation and yields an input
// schema that crankd compiles.
TEST(ImportFromSdl, EveryDocumentParsesAndChecks) {
    std::string error;
    const auto schema = schemaFromSdl(kSdl, error);
    ASSERT_TRUE(schema) << error;
    ImportOptions options;
    options.endpoint = "http://127.0.0.1:4000/graphql";
    for (std::size_t depth = 1; depth <= 8; ++depth) {
        options.max_depth = depth;
        std::vector<std::string> warnings;
        const auto doc = parse(importOperations(*schema, options, warnings));
        ASSERT_EQ(doc.Size(), 9U);
        EXPECT_EQ(warnings.size(), 2U);  // Query.old, subscriptions
        for (const auto& op : doc.GetArray()) {
            const std::string text = op["config"]["document"].GetString();
            const std::string name = op["config"]["operation_name"].GetString();
            const auto executable = parseExecutable(text, error);
            ASSERT_TRUE(executable) << error << "\n" << text;
            const OperationDefinition* operation = selectOperation(*executable, name, error);
            ASSERT_NE(operation, nullptr) << error;
            EXPECT_EQ(operation->name, name);
            EXPECT_EQ(operation->root_fields.size(), 1U) << text;
            EXPECT_EQ(checkOperation(*operation, *schema), "") << text;
            std::vector<std::string> input_warnings;
            const std::string input =
                variablesInputSchema(*operation, &*schema, input_warnings, error);
            ASSERT_NE(input, "") << error;
            EXPECT_TRUE(input_warnings.empty());
            auto compiled = json::compileSchema(input, "input_schema");
            EXPECT_TRUE(compiled) << (compiled ? "" : compiled.error().message) << "\n" << input;
        }
    }
}

TEST(ImportFromSdl, DocumentsAndDefaultsRoundTrip) {
    std::string error;
    const auto schema = schemaFromSdl(kSdl, error);
    ASSERT_TRUE(schema) << error;
    ImportOptions options;
    options.prefix = "shop_";
    std::vector<std::string> warnings;
    const auto doc = parse(importOperations(*schema, options, warnings));
    EXPECT_EQ(document(doc, "shop_items"),
              "query Items($owner: ID!, $first: Int = 10, $order: Order = ASC, $filter: "
              "ItemFilter = {owner: \"me\", colors: [RED]}) { items(owner: $owner, first: "
              "$first, order: $order, filter: $filter) { id name owner { id name } color created "
              "} }");
    EXPECT_EQ(document(doc, "shop_node"), "query Node($id: ID!) { node(id: $id) { id } }");
    EXPECT_EQ(document(doc, "shop_search"),
              "query Search($text: String!, $pick: Pick) { search(text: $text, pick: $pick) { "
              "__typename ... on Item { id name color created } ... on User { id name } } }");
    EXPECT_EQ(document(doc, "shop_matrix"), "query Matrix($m: [[Int!]]!) { matrix(m: $m) }");
    EXPECT_EQ(document(doc, "shop_items_mutation"), "mutation Items { items }");
    EXPECT_STREQ((*find(doc, "shop_items"))["description"].GetString(), "Items of an owner");

    const auto executable = parseExecutable(document(doc, "shop_items"), error);
    ASSERT_TRUE(executable) << error;
    const OperationDefinition& op = executable->operations.at(0);
    ASSERT_EQ(op.variables.size(), 4U);
    EXPECT_EQ(op.variables[1].default_json, "10");
    EXPECT_EQ(op.variables[2].default_json, "\"ASC\"");
    const auto filter = parse(op.variables[3].default_json.value_or("null"));
    EXPECT_STREQ(filter["owner"].GetString(), "me");
    EXPECT_STREQ(filter["colors"][0].GetString(), "RED");

    // The input schema: descriptions from the arguments, defaults, the filter's $defs.
    std::vector<std::string> input_warnings;
    const auto input = parse(variablesInputSchema(op, &*schema, input_warnings, error));
    EXPECT_STREQ(input["properties"]["owner"]["description"].GetString(), "Whose items");
    EXPECT_EQ(input["properties"]["first"]["default"].GetInt(), 10);
    EXPECT_STREQ(input["properties"]["order"]["default"].GetString(), "ASC");
    EXPECT_TRUE(input["$defs"].HasMember("ItemFilter"));
    ASSERT_EQ(input["required"].Size(), 1U);
    EXPECT_STREQ(input["required"][0].GetString(), "owner");
}

TEST(DefaultSelection, SelfReferencingFieldsThatSelectNothingAreExploredOnce) {
    // type T { f0: T ... f39: T }: nothing to select anywhere. Every (type, level) that selects
    // nothing is remembered, so this is 8 levels of 40 fields, not 40 ** 7 subtrees (hours).
    Schema s = sampleSchema();
    std::vector<Field> fields;
    fields.reserve(40);
    for (int i = 0; i < 40; ++i) {
        fields.push_back(field("f" + std::to_string(i), named("T")));
    }
    add(s, object("T", fields));
    EXPECT_EQ(selectionOf(s, "T", 8), "{ __typename }");
    // The same with a leaf past the depth: U's leaf is at level 9.
    std::vector<Field> u_fields = fields;
    for (auto& f : u_fields) {
        f.type = named("U");
    }
    u_fields.push_back(field("deeper", named("V")));
    add(s, object("U", u_fields));
    std::vector<Field> v_fields = u_fields;
    v_fields.push_back(field("id", named("ID")));
    add(s, object("V", v_fields));
    // V at level 8 selects id; a U at level 7 selects `deeper { id }`, and so on up.
    const std::string at8 = selectionOf(s, "U", 8);
    EXPECT_EQ(at8.substr(0, 9), "{ f0 { f0") << at8.substr(0, 200);
    EXPECT_LE(at8.size(), 2000U * 16U);
    ImportOptions options;
    options.max_depth = 8;
    add(s, object("Deep", {field("t", named("T")), field("u", named("U"))}));
    std::vector<std::string> warnings;
    EXPECT_FALSE(importOperations(s, options, warnings).empty());
}

}  // namespace
}  // namespace crank::graphql
