// variablesInputSchema: the JSON Schema of a GraphQL operation's variables, checked for its exact
// text where the form matters, compiled with crankd's own JSON Schema compiler
// (host/json/json_schema.h) and used to accept and reject sample inputs.
#include "variables_schema.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "graphql_syntax.h"
#include "json/json_schema.h"

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

InputValue input(const std::string& name, TypeRef type, const std::string& description = "",
                 std::optional<std::string> default_json = std::nullopt) {
    InputValue v;
    v.name = name;
    v.type = std::move(type);
    v.description = description;
    v.default_json = std::move(default_json);
    return v;
}

Field field(const std::string& name, TypeRef type, std::vector<InputValue> args = {},
            const std::string& description = "") {
    Field f;
    f.name = name;
    f.type = std::move(type);
    f.args = std::move(args);
    f.description = description;
    return f;
}

NamedType type(NamedType::Kind kind, const std::string& name, const std::string& description = "") {
    NamedType t;
    t.kind = kind;
    t.name = name;
    t.description = description;
    return t;
}

void add(Schema& schema, NamedType t) {
    std::string name = t.name;
    schema.types.emplace(std::move(name), std::move(t));
}

/// scalar DateTime, enum Color, inputs ItemFilter (nested, recursive through `and`), Node
/// (recursive), Pick (@oneOf), Unused; output types Item, Query, Mutation.
Schema sampleSchema() {
    Schema s;
    for (const char* builtin : {"Int", "Float", "String", "Boolean", "ID"}) {
        add(s, type(NamedType::Kind::scalar, builtin));
    }
    add(s, type(NamedType::Kind::scalar, "DateTime", "An ISO-8601 date"));
    NamedType color = type(NamedType::Kind::enum_type, "Color", "A color");
    color.enum_values = {{"RED", "", false}, {"GREEN", "", false}, {"BLUE", "old", true}};
    add(s, color);
    NamedType filter = type(NamedType::Kind::input_object, "ItemFilter", "Which items");
    filter.input_fields = {
        input("name", named("String"), "Part of the name"),
        input("color", named("Color")),
        input("tags", listOf(nonNull(named("String")))),
        input("and", listOf(nonNull(named("ItemFilter")))),
        input("created", named("DateTime")),
        input("limit", nonNull(named("Int")), "", "10"),
        input("owner", nonNull(named("ID"))),
    };
    add(s, filter);
    NamedType node = type(NamedType::Kind::input_object, "Node");
    node.input_fields = {input("value", nonNull(named("Int"))), input("next", named("Node"))};
    add(s, node);
    NamedType pick = type(NamedType::Kind::input_object, "Pick");
    pick.one_of = true;
    pick.input_fields = {input("id", named("ID")), input("name", named("String"))};
    add(s, pick);
    NamedType unused = type(NamedType::Kind::input_object, "Unused");
    unused.input_fields = {input("x", named("Int"))};
    add(s, unused);
    NamedType item = type(NamedType::Kind::object, "Item");
    item.fields = {field("id", nonNull(named("ID"))), field("name", named("String"))};
    add(s, item);
    NamedType query = type(NamedType::Kind::object, "Query");
    query.fields = {
        field("items", nonNull(listOf(nonNull(named("Item")))),
              {input("filter", named("ItemFilter"), "Only these items"),
               input("first", named("Int"), "How many", "10")},
              "The items"),
        field("item", named("Item"), {input("id", nonNull(named("ID")), "The item's id")},
              "One item"),
    };
    add(s, query);
    s.query_type = "Query";
    return s;
}

OperationDefinition operation(std::vector<VariableDefinition> variables,
                              std::vector<std::string> root_fields = {"items"},
                              std::vector<VariableUse> uses = {}) {
    OperationDefinition op;
    op.variables = std::move(variables);
    op.root_fields = std::move(root_fields);
    op.root_variable_uses = std::move(uses);
    return op;
}

VariableDefinition variable(const std::string& name, TypeRef t,
                            std::optional<std::string> default_json = std::nullopt) {
    return VariableDefinition{name, std::move(t), std::move(default_json)};
}

rapidjson::Document parse(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    EXPECT_FALSE(doc.HasParseError()) << json;
    return doc;
}

/// The input schema of `op` against `schema`, expected to succeed and to compile.
struct Built {
    std::string text;
    std::vector<std::string> warnings;
    json::CompiledSchema compiled;

    bool accepts(const std::string& instance) const {
        const auto result = compiled.validate(instance);
        return result.ok();
    }
};

Built build(const OperationDefinition& op, const Schema* schema) {
    Built b{"", {}, json::compileSchema(R"({"type":"object"})", "fallback").value()};
    std::string error = "not cleared";
    b.text = variablesInputSchema(op, schema, b.warnings, error);
    EXPECT_EQ(error, "");
    auto compiled = json::compileSchema(b.text, "input_schema");
    if (!compiled) {
        ADD_FAILURE() << compiled.error().message << "\n" << b.text;
        return b;
    }
    b.compiled = compiled.value();
    return b;
}

TEST(VariablesSchema, BuiltInScalarsExactly) {
    const Schema schema = sampleSchema();
    const Built b = build(operation({variable("i", nonNull(named("Int"))),
                                     variable("f", named("Float")), variable("s", named("String")),
                                     variable("b", named("Boolean")), variable("id", named("ID"))}),
                          &schema);
    EXPECT_EQ(b.text, R"({"type":"object","properties":{)"
                      R"("i":{"type":"integer","minimum":-2147483648,"maximum":2147483647},)"
                      R"("f":{"type":"number"},"s":{"type":"string"},"b":{"type":"boolean"},)"
                      R"("id":{"type":["string","integer"]}},"required":["i"],)"
                      R"("additionalProperties":false})");
    EXPECT_TRUE(b.warnings.empty());
    EXPECT_TRUE(b.accepts(R"({"i": 1})"));
    EXPECT_TRUE(b.accepts(R"({"i": -2147483648, "f": 1.5, "s": "x", "b": true, "id": "a"})"));
    EXPECT_TRUE(b.accepts(R"({"i": 2147483647, "id": 42})"));
    EXPECT_FALSE(b.accepts(R"({})"));
    EXPECT_FALSE(b.accepts(R"({"i": 2147483648})"));
    EXPECT_FALSE(b.accepts(R"({"i": -2147483649})"));
    EXPECT_FALSE(b.accepts(R"({"i": 1.5})"));
    EXPECT_FALSE(b.accepts(R"({"i": 1, "id": true})"));
    EXPECT_FALSE(b.accepts(R"({"i": 1, "f": "1"})"));
    EXPECT_FALSE(b.accepts(R"({"i": 1, "extra": 1})"));
    EXPECT_FALSE(b.accepts(R"({"i": null})"));
}

TEST(VariablesSchema, NoVariablesIsAClosedEmptyObject) {
    const Schema schema = sampleSchema();
    const Built b = build(operation({}), &schema);
    EXPECT_EQ(b.text, R"({"type":"object","properties":{},"additionalProperties":false})");
    EXPECT_TRUE(b.accepts("{}"));
    EXPECT_FALSE(b.accepts(R"({"a": 1})"));
}

TEST(VariablesSchema, EnumsListEveryValue) {
    const Schema schema = sampleSchema();
    const Built b = build(operation({variable("c", nonNull(named("Color")))}), &schema);
    const auto doc = parse(b.text);
    const auto& c = doc["properties"]["c"];
    EXPECT_STREQ(c["type"].GetString(), "string");
    ASSERT_EQ(c["enum"].Size(), 3U);
    EXPECT_STREQ(c["enum"][2].GetString(), "BLUE");  // deprecated, still valid
    EXPECT_STREQ(c["description"].GetString(), "A color");
    EXPECT_TRUE(b.accepts(R"({"c": "RED"})"));
    EXPECT_TRUE(b.accepts(R"({"c": "BLUE"})"));
    EXPECT_FALSE(b.accepts(R"({"c": "red"})"));
    EXPECT_FALSE(b.accepts(R"({"c": 1})"));
}

TEST(VariablesSchema, InputObjectsGoToDefsReachableOnly) {
    const Schema schema = sampleSchema();
    const Built b = build(operation({variable("filter", named("ItemFilter"))}), &schema);
    const auto doc = parse(b.text);
    EXPECT_STREQ(doc["properties"]["filter"]["$ref"].GetString(), "#/$defs/ItemFilter");
    ASSERT_TRUE(doc.HasMember("$defs"));
    EXPECT_TRUE(doc["$defs"].HasMember("ItemFilter"));
    EXPECT_FALSE(doc["$defs"].HasMember("Unused"));
    EXPECT_FALSE(doc["$defs"].HasMember("Node"));
    const auto& def = doc["$defs"]["ItemFilter"];
    EXPECT_STREQ(def["type"].GetString(), "object");
    EXPECT_STREQ(def["description"].GetString(), "Which items");
    EXPECT_FALSE(def["additionalProperties"].GetBool());
    ASSERT_EQ(def["required"].Size(), 1U);  // limit has a default
    EXPECT_STREQ(def["required"][0].GetString(), "owner");
    EXPECT_EQ(def["properties"]["limit"]["default"].GetInt(), 10);
    EXPECT_STREQ(def["properties"]["name"]["description"].GetString(), "Part of the name");
    EXPECT_STREQ(def["properties"]["created"]["description"].GetString(),
                 "GraphQL scalar DateTime: An ISO-8601 date");
    EXPECT_STREQ(def["properties"]["and"]["items"]["$ref"].GetString(), "#/$defs/ItemFilter");

    EXPECT_TRUE(b.accepts(R"({})"));
    EXPECT_TRUE(b.accepts(R"({"filter": {"owner": "u1"}})"));
    EXPECT_TRUE(b.accepts(R"({"filter": {"owner": 7, "name": "a", "color": "GREEN",
        "tags": ["x", "y"], "created": "2024-01-01", "limit": 5,
        "and": [{"owner": "u2", "and": [{"owner": "u3"}]}]}})"));
    EXPECT_FALSE(b.accepts(R"({"filter": {}})"));
    EXPECT_FALSE(b.accepts(R"({"filter": {"owner": "u1", "color": "PINK"}})"));
    EXPECT_FALSE(b.accepts(R"({"filter": {"owner": "u1", "tags": [1]}})"));
    EXPECT_FALSE(
        b.accepts(R"({"filter": {"owner": "u1", "and": [{"owner": "u2", "and": [{}]}]}})"));
    EXPECT_FALSE(b.accepts(R"({"filter": {"owner": "u1", "unknown": 1}})"));
    EXPECT_FALSE(b.accepts(R"({"filter": {"owner": "u1", "limit": 4294967296}})"));
}

TEST(VariablesSchema, RecursiveInput) {
    const Schema schema = sampleSchema();
    const Built b = build(operation({variable("n", nonNull(named("Node")))}), &schema);
    EXPECT_TRUE(b.accepts(R"({"n": {"value": 1}})"));
    EXPECT_TRUE(b.accepts(R"({"n": {"value": 1, "next": {"value": 2, "next": {"value": 3}}}})"));
    EXPECT_FALSE(b.accepts(R"({"n": {"value": 1, "next": {"next": {"value": 3}}}})"));
    EXPECT_FALSE(b.accepts(R"({"n": {"value": 1, "next": {"value": "2"}}})"));
    EXPECT_FALSE(b.accepts(R"({})"));
}

TEST(VariablesSchema, ListsOfLists) {
    const Schema schema = sampleSchema();
    const Built b =
        build(operation({variable("m", nonNull(listOf(listOf(nonNull(named("Int"))))))}), &schema);
    const auto doc = parse(b.text);
    EXPECT_STREQ(doc["properties"]["m"]["type"].GetString(), "array");
    // [[Int!]]!: the inner lists may be null, their items not.
    EXPECT_STREQ(doc["properties"]["m"]["items"]["anyOf"][0]["type"].GetString(), "array");
    EXPECT_STREQ(doc["properties"]["m"]["items"]["anyOf"][1]["type"].GetString(), "null");
    EXPECT_TRUE(b.accepts(R"({"m": [[1, 2], [3], []]})"));
    EXPECT_TRUE(b.accepts(R"({"m": [[1], null]})"));
    EXPECT_FALSE(b.accepts(R"({"m": [[1, null]]})"));
    EXPECT_TRUE(b.accepts(R"({"m": []})"));
    EXPECT_FALSE(b.accepts(R"({"m": [1]})"));
    EXPECT_FALSE(b.accepts(R"({"m": [["1"]]})"));
    EXPECT_FALSE(b.accepts(R"({"m": 1})"));
}

TEST(VariablesSchema, DefaultsMakeNonNullOptional) {
    const Schema schema = sampleSchema();
    const Built b = build(operation({variable("first", nonNull(named("Int")), "10"),
                                     variable("colors", listOf(named("Color")), R"(["RED"])"),
                                     variable("f", named("ItemFilter"), R"({"owner": "me"})")}),
                          &schema);
    const auto doc = parse(b.text);
    EXPECT_FALSE(doc.HasMember("required"));
    EXPECT_EQ(doc["properties"]["first"]["default"].GetInt(), 10);
    EXPECT_STREQ(doc["properties"]["colors"]["default"][0].GetString(), "RED");
    EXPECT_STREQ(doc["properties"]["f"]["default"]["owner"].GetString(), "me");
    EXPECT_TRUE(b.accepts("{}"));
}

TEST(VariablesSchema, OneOfTakesExactlyOneProperty) {
    const Schema schema = sampleSchema();
    const Built b = build(operation({variable("p", nonNull(named("Pick")))}), &schema);
    const auto doc = parse(b.text);
    const auto& def = doc["$defs"]["Pick"];
    EXPECT_EQ(def["minProperties"].GetUint(), 1U);
    EXPECT_EQ(def["maxProperties"].GetUint(), 1U);
    EXPECT_FALSE(def.HasMember("required"));
    EXPECT_TRUE(b.accepts(R"({"p": {"id": "1"}})"));
    EXPECT_TRUE(b.accepts(R"({"p": {"name": "x"}})"));
    EXPECT_FALSE(b.accepts(R"({"p": {}})"));
    EXPECT_FALSE(b.accepts(R"({"p": {"id": "1", "name": "x"}})"));
    EXPECT_FALSE(b.accepts(R"({"p": {"other": "1"}})"));
}

TEST(VariablesSchema, CustomScalarsAreStringsSayingTheScalar) {
    Schema schema = sampleSchema();
    add(schema, type(NamedType::Kind::scalar, "JSON"));
    const Built b = build(
        operation({variable("at", named("DateTime")), variable("j", named("JSON"))}), &schema);
    const auto doc = parse(b.text);
    EXPECT_STREQ(doc["properties"]["at"]["type"].GetString(), "string");
    EXPECT_STREQ(doc["properties"]["at"]["description"].GetString(),
                 "GraphQL scalar DateTime: An ISO-8601 date");
    EXPECT_STREQ(doc["properties"]["j"]["description"].GetString(), "GraphQL scalar JSON");
    EXPECT_TRUE(b.accepts(R"({"at": "2024-05-01T00:00:00Z"})"));
    EXPECT_FALSE(b.accepts(R"({"at": 5})"));
}

TEST(VariablesSchema, ArgumentDescriptionsForVariablesPassedToRootFields) {
    const Schema schema = sampleSchema();
    const Built b =
        build(operation({variable("id", nonNull(named("ID"))), variable("f", named("ItemFilter")),
                         variable("n", named("Int")), variable("other", named("Int"))},
                        {"item", "items"},
                        {{"item", "id", "id"},
                         {"items", "filter", "f"},
                         {"items", "first", "n"},
                         {"nope", "x", "other"}}),
              &schema);
    const auto doc = parse(b.text);
    EXPECT_STREQ(doc["properties"]["id"]["description"].GetString(), "The item's id");
    EXPECT_STREQ(doc["properties"]["f"]["description"].GetString(), "Only these items");
    EXPECT_STREQ(doc["properties"]["f"]["$ref"].GetString(), "#/$defs/ItemFilter");
    EXPECT_STREQ(doc["properties"]["n"]["description"].GetString(), "How many");
    EXPECT_FALSE(doc["properties"]["other"].HasMember("description"));
}

TEST(VariablesSchema, Errors) {
    const Schema schema = sampleSchema();
    std::vector<std::string> warnings;
    std::string error;
    EXPECT_EQ(variablesInputSchema(operation({variable("filter", named("Filter"))}), &schema,
                                   warnings, error),
              "");
    EXPECT_EQ(error, "variable $filter: type Filter is not in the schema");
    EXPECT_EQ(variablesInputSchema(operation({variable("x", listOf(nonNull(named("Item"))))}),
                                   &schema, warnings, error),
              "");
    EXPECT_EQ(error, "variable $x: type Item is an object type, not an input type");

    Schema broken = sampleSchema();
    NamedType bad = type(NamedType::Kind::input_object, "Bad");
    bad.input_fields = {input("item", named("Item"))};
    add(broken, bad);
    EXPECT_EQ(
        variablesInputSchema(operation({variable("b", named("Bad"))}), &broken, warnings, error),
        "");
    EXPECT_EQ(error, "input Bad.item: type Item is an object type, not an input type");
    EXPECT_TRUE(warnings.empty());
}

TEST(VariablesSchema, WithoutASchema) {
    const Built b = build(
        operation({variable("id", nonNull(named("ID"))), variable("f", named("ItemFilter")),
                   variable("l", listOf(named("DateTime"))), variable("g", named("ItemFilter"))}),
        nullptr);
    const auto doc = parse(b.text);
    EXPECT_EQ(std::string(doc["properties"]["id"]["type"][0].GetString()), "string");
    EXPECT_STREQ(doc["properties"]["f"]["description"].GetString(),
                 "GraphQL type ItemFilter (the schema was not available)");
    EXPECT_FALSE(doc["properties"]["f"].HasMember("type"));
    EXPECT_STREQ(doc["properties"]["l"]["items"]["anyOf"][0]["description"].GetString(),
                 "GraphQL type DateTime (the schema was not available)");
    ASSERT_EQ(b.warnings.size(), 1U);
    EXPECT_EQ(b.warnings[0],
              "the schema was not available: variables of types ItemFilter, DateTime are not "
              "checked");
    EXPECT_TRUE(b.accepts(R"({"id": 1, "f": {"anything": [1]}, "l": [1, "x"]})"));
    EXPECT_FALSE(b.accepts(R"({"f": {}})"));
}

TEST(VariablesSchema, DefsAreBounded) {
    Schema schema = sampleSchema();
    constexpr int kChain = 2100;
    for (int i = 0; i < kChain; ++i) {
        NamedType t = type(NamedType::Kind::input_object, "T" + std::to_string(i));
        t.input_fields = {input("next", named("T" + std::to_string(i + 1))),
                          input("v", named("Int"))};
        if (i == kChain - 1) {
            t.input_fields.pop_back();
            t.input_fields[0] = input("v", named("Int"));
        }
        add(schema, t);
    }
    const Built b = build(operation({variable("t", named("T0"))}), &schema);
    const auto doc = parse(b.text);
    EXPECT_EQ(doc["$defs"].MemberCount(), 2000U);
    ASSERT_EQ(b.warnings.size(), 1U);
    EXPECT_EQ(b.warnings[0],
              "the variables reach more than 2000 input types: T2000 and those after it are not "
              "checked");
    EXPECT_TRUE(b.accepts(R"({"t": {"v": 1, "next": {"v": 2}}})"));
    EXPECT_FALSE(b.accepts(R"({"t": {"v": "1"}})"));
}

TEST(VariablesSchema, DeepTypeWrappersAreRefused) {
    const Schema schema = sampleSchema();
    TypeRef t = named("Int");
    for (int i = 0; i < 100; ++i) {
        t = listOf(t);
    }
    std::vector<std::string> warnings;
    std::string error;
    EXPECT_EQ(variablesInputSchema(operation({variable("deep", t)}), &schema, warnings, error), "");
    EXPECT_EQ(error, "variable $deep: the type is nested more than 64 levels deep");
}

TEST(VariablesSchema, UnusableDefaultsAreLeftOut) {
    const Schema schema = sampleSchema();
    const std::string deep = std::string(100, '[') + std::string(100, ']');
    const Built b = build(operation({variable("a", listOf(named("Int")), deep),
                                     variable("b", nonNull(named("Int")), "{not json")}),
                          &schema);
    const auto doc = parse(b.text);
    EXPECT_FALSE(doc["properties"]["a"].HasMember("default"));
    EXPECT_FALSE(doc["properties"]["b"].HasMember("default"));
    EXPECT_FALSE(doc.HasMember("required"));  // b has a default, if not a usable one
}

TEST(OperationDescription, FromTheRootField) {
    const Schema schema = sampleSchema();
    OperationDefinition op = operation({}, {"items"});
    EXPECT_EQ(operationDescription(op, &schema), "The items");
    EXPECT_EQ(operationDescription(op, nullptr), "GraphQL query: items");
    op.root_fields = {"items", "item", "items", "__typename"};
    EXPECT_EQ(operationDescription(op, &schema), "GraphQL query: items, item");
    op.kind = OperationDefinition::Kind::mutation;
    op.root_fields = {"items"};  // not a mutation field
    EXPECT_EQ(operationDescription(op, &schema), "GraphQL mutation: items");
    op.root_fields.clear();
    EXPECT_EQ(operationDescription(op, &schema), "GraphQL mutation");
    EXPECT_EQ(operationDescription(op, nullptr), "");
    op.name = "Create";
    EXPECT_EQ(operationDescription(op, nullptr), "GraphQL mutation Create");
}

// From text to input schema: schemaFromSdl, parseExecutable, variablesInputSchema.
TEST(VariablesSchemaFromText, SdlAndOperation) {
    constexpr std::string_view kSdl = R"(
        """When, as ISO-8601"""
        scalar DateTime
        enum Status { OPEN CLOSED }
        input Range { from: DateTime!, to: DateTime }
        input Filter @oneOf { status: Status, range: Range, any: [Filter!] }
        type Ticket { id: ID! }
        type Query {
          tickets(
            "What to look for"
            filter: Filter
            "Page size"
            first: Int = 20
          ): [Ticket!]!
        }
    )";
    std::string error;
    const auto schema = schemaFromSdl(kSdl, error);
    ASSERT_TRUE(schema) << error;
    const auto document = parseExecutable(
        "query Find($f: Filter!, $n: Int = 5, $pages: [[Int!]!]) "
        "{ tickets(filter: $f, first: $n) { id } }",
        error);
    ASSERT_TRUE(document) << error;
    const OperationDefinition& op = document->operations.at(0);
    const Built b = build(op, &*schema);
    const auto doc = parse(b.text);
    EXPECT_STREQ(doc["properties"]["f"]["description"].GetString(), "What to look for");
    EXPECT_STREQ(doc["properties"]["n"]["description"].GetString(), "Page size");
    EXPECT_EQ(doc["properties"]["n"]["default"].GetInt(), 5);
    EXPECT_STREQ(doc["$defs"]["Range"]["properties"]["from"]["description"].GetString(),
                 "GraphQL scalar DateTime: When, as ISO-8601");
    EXPECT_TRUE(b.accepts(R"({"f": {"status": "OPEN"}})"));
    EXPECT_TRUE(b.accepts(R"({"f": {"range": {"from": "2024-01-01"}}, "n": 3})"));
    EXPECT_TRUE(b.accepts(R"({"f": {"any": [{"status": "OPEN"}, {"range": {"from": "x"}}]}})"));
    EXPECT_TRUE(b.accepts(R"({"f": {"status": "OPEN"}, "pages": [[1], []]})"));
    EXPECT_FALSE(b.accepts(R"({"f": {"status": "OPEN", "range": {"from": "x"}}})"));
    EXPECT_FALSE(b.accepts(R"({"f": {"range": {"to": "x"}}})"));
    EXPECT_FALSE(b.accepts(R"({"f": {"any": [{}]}})"));
    EXPECT_FALSE(b.accepts(R"({"f": {"status": "open"}})"));
    EXPECT_FALSE(b.accepts(R"({"n": 1})"));
    EXPECT_FALSE(b.accepts(R"({"f": {"status": "OPEN"}, "pages": [1]})"));
    EXPECT_EQ(operationDescription(op, &*schema), "GraphQL query: tickets");
}

TEST(VariablesSchema, DefsReferencesAreJsonPointerTokens) {
    // The readers refuse such names; a Schema built by hand may still have them.
    Schema schema = sampleSchema();
    NamedType odd = type(NamedType::Kind::input_object, "a/b~c");
    odd.input_fields = {input("n", nonNull(named("Int")))};
    add(schema, odd);
    const Built b = build(operation({variable("v", nonNull(named("a/b~c")))}), &schema);
    EXPECT_NE(b.text.find(R"("$ref":"#/$defs/a~1b~0c")"), std::string::npos) << b.text;
    EXPECT_NE(b.text.find(R"("$defs":{"a/b~c":)"), std::string::npos) << b.text;
    EXPECT_TRUE(b.accepts(R"({"v": {"n": 1}})"));
    EXPECT_FALSE(b.accepts(R"({"v": {"n": "x"}})"));
    EXPECT_FALSE(b.accepts(R"({"v": {}})"));
}

TEST(VariablesSchema, InvalidUtf8InAHandBuiltSchemaIsRepaired) {
    Schema schema = sampleSchema();
    schema.types.at("ItemFilter").description = "caf\xE9";
    schema.types.at("ItemFilter").input_fields[0].description = "\xFF";
    const Built b = build(operation({variable("f", named("ItemFilter"))}), &schema);
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag>(b.text.data(), b.text.size());
    EXPECT_FALSE(doc.HasParseError()) << b.text;
    EXPECT_NE(b.text.find("caf\xEF\xBF\xBD"), std::string::npos) << b.text;
}

TEST(VariablesSchema, ErrorsQuoteExcerptsOfNames) {
    Schema schema = sampleSchema();
    const std::string n(kMaxNameBytes, 'n');
    std::vector<std::string> warnings;
    std::string error;
    EXPECT_EQ(
        variablesInputSchema(operation({variable(n, named("T" + n))}), &schema, warnings, error),
        "");
    EXPECT_LT(error.size(), 1024U) << error;
    EXPECT_EQ(error.substr(0, 13), "variable $nnn");
}

}  // namespace
}  // namespace crank::graphql
