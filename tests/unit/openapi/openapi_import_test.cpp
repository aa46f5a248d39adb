// OpenAPI import: what each operation of a document becomes, member by member, and that the
// result loads and compiles with crankd's own config loader, schema and template compilers.

#include "openapi/openapi_import.h"

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "openapi_test_support.h"

namespace crank::openapi {
namespace {

using testing::Imported;
using testing::importError;
using testing::importOk;
using testing::loadAndCompile;
using testing::renderOperation;
using testing::validateInput;

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string petstore() {
    return readFile(std::string(CRANK_OPENAPI_TEST_DATA) + "/petstore.json");
}

TEST(OpenApiPetstore, OneOperationPerPathAndMethodInDocumentOrder) {
    const Imported in = importOk(petstore());
    ASSERT_EQ(in.result.operation_count, 7U);
    std::vector<std::string> names;
    for (const auto& o : in.doc["operations"].GetArray()) {
        names.emplace_back(o["name"].GetString());
    }
    EXPECT_EQ(names, (std::vector<std::string>{"listPets", "createPet", "listPets_2", "showPetById",
                                               "delete_pets_petId", "update_pet",
                                               "get_stores_store.id_items"}));
    for (const auto& o : in.doc["operations"].GetArray()) {
        EXPECT_EQ(json::toJsonText(o["protocol"]), R"("rest")");
        EXPECT_EQ(json::toJsonText(o["execution"]), R"({"mode":"unary"})");
    }
    // Pretty-printed with two spaces, one newline at the end.
    EXPECT_EQ(in.result.json.substr(0, 20), "{\n  \"operations\": [\n");
    EXPECT_EQ(in.result.json.back(), '\n');
}

TEST(OpenApiPetstore, QueryAndHeaderParameters) {
    const Imported in = importOk(petstore());
    EXPECT_EQ(in.member("listPets", "title"), R"("List all pets")");
    EXPECT_EQ(in.member("listPets", "description"),
              R"("List all pets\n\nReturns the pets, a page at a time.")");
    // Server variables take their defaults; the server's trailing slash is not doubled.
    EXPECT_EQ(in.member("listPets", "config"),
              R"({"method":"GET","url":"https://petstore.example.com:8443/v1/pets",)"
              R"("query":{"limit":"{{ limit }}","status":"{{ status }}","tags":"{{ tags }}"},)"
              R"("headers":{"X-Request-ID":"{{ X-Request-ID }}"}})");
    EXPECT_EQ(in.member("listPets", "input_schema"),
              R"({"type":"object","properties":{)"
              R"("limit":{"type":"integer","format":"int32","minimum":1,"maximum":100,)"
              R"("default":20,"description":"How many pets to return"},)"
              R"("status":{"type":"string","enum":["available","pending","sold"],)"
              R"("default":"available"},)"
              R"("tags":{"type":"array","items":{"type":"string"},"maxItems":10},)"
              R"("X-Request-ID":{"type":"string","format":"uuid",)"
              R"("description":"Echoed in the response"}}})");
    EXPECT_TRUE(
        in.warned("/paths/~1pets/get/parameters/4: cookie parameter \"session\" is left "
                  "out"))
        << in.warnings();
}

TEST(OpenApiPetstore, PostWithReferencedRequestBody) {
    const Imported in = importOk(petstore());
    EXPECT_EQ(in.member("createPet", "config"),
              R"({"method":"POST","url":"https://petstore.example.com:8443/v1/pets",)"
              R"("body":"{{ body }}"})");
    // requestBodies/NewPet -> schemas/NewPet -> schemas/Owner, inlined; nullable becomes a type
    // union; example becomes examples; xml is dropped; the body's description is kept.
    EXPECT_EQ(in.member("createPet", "input_schema"),
              R"({"type":"object","properties":{"body":{"type":"object","required":["name"],)"
              R"("properties":{"name":{"type":"string","minLength":1,"examples":["Rex"]},)"
              R"("tag":{"type":["string","null"]},)"
              R"("owner":{"type":["object","null"],"properties":{"name":{"type":"string"},)"
              R"("email":{"type":"string","format":"email","pattern":"^[^@]+@[^@]+$"}}}},)"
              R"("description":"The pet to add"}},"required":["body"]})");
}

TEST(OpenApiPetstore, PathParametersFromThePathItemAndFallbackNames) {
    const Imported in = importOk(petstore());
    EXPECT_EQ(in.member("showPetById", "config"),
              R"({"method":"GET","url":"https://petstore.example.com:8443/v1/pets/)"
              R"({{ petId | url }}","query":{"fields":"{{ fields }}"}})");
    EXPECT_EQ(in.member("showPetById", "input_schema"),
              R"({"type":"object","properties":{"petId":{"type":"integer","format":"int64",)"
              R"("description":"The pet's id"},"fields":{"type":"string"}},"required":["petId"]})");
    // No operationId: <method>_<path>; no summary: no title, the description alone.
    EXPECT_EQ(in.member("delete_pets_petId", "title"), "<none>");
    EXPECT_EQ(in.member("delete_pets_petId", "description"), R"("Deletes a pet for good.")");
    EXPECT_EQ(in.member("delete_pets_petId", "config"),
              R"({"method":"DELETE","url":"https://petstore.example.com:8443/v1/pets/)"
              R"({{ petId | url }}","headers":{"X-Reason":"{{ X-Reason }}"}})");
    EXPECT_EQ(in.member("delete_pets_petId", "input_schema"),
              R"({"type":"object","properties":{"petId":{"type":"integer","format":"int64",)"
              R"("description":"The pet's id"},"X-Reason":{"type":["string","null"]}},)"
              R"("required":["petId","X-Reason"]})");
}

TEST(OpenApiPetstore, NamesAreSanitisedAndMadeUnique) {
    const Imported in = importOk(petstore());
    EXPECT_TRUE(
        in.warned("/paths/~1pets~1search/get: the name \"listPets\" is taken by "
                  "/paths/~1pets/get; named \"listPets_2\""))
        << in.warnings();
    EXPECT_TRUE(
        in.warned("/paths/~1pets~1{petId}/patch/operationId: \"update pet!\" is not a "
                  "tool name"))
        << in.warnings();
    EXPECT_EQ(in.member("listPets_2", "title"), R"("Search pets")");
}

TEST(OpenApiPetstore, JsonSuffixMediaTypeSetsContentType) {
    const Imported in = importOk(petstore());
    EXPECT_EQ(in.member("update_pet", "config"),
              R"({"method":"PATCH","url":"https://petstore.example.com:8443/v1/pets/)"
              R"({{ petId | url }}","headers":{"Content-Type":"application/merge-patch+json"},)"
              R"("body":"{{ body }}"})");
    EXPECT_EQ(in.member("update_pet", "input_schema"),
              R"({"type":"object","properties":{"petId":{"type":"integer","format":"int64",)"
              R"("description":"The pet's id"},"body":{"type":"object","properties":{)"
              R"("name":{"type":"string"},"status":{"type":["string","null"],)"
              R"("enum":["available","pending","sold",null]}},"additionalProperties":false}},)"
              R"("required":["petId","body"]})");
}

TEST(OpenApiPetstore, NamesThatAreNotPlainPathMembersAreEscaped) {
    const Imported in = importOk(petstore());
    EXPECT_EQ(in.member("get_stores_store.id_items", "description"),
              R"("(deprecated) GET /stores/{store.id}/items")");
    EXPECT_EQ(in.member("get_stores_store.id_items", "config"),
              R"({"method":"GET","url":"https://petstore.example.com:8443/v1/stores/)"
              R"({{ store\\.id | url }}/items","query":{"page[size]":"{{ page[size] }}"}})");
    // exclusiveMinimum: true (OpenAPI 3.0) becomes the 2020-12 number form.
    EXPECT_EQ(in.member("get_stores_store.id_items", "input_schema"),
              R"({"type":"object","properties":{"store.id":{"type":"string"},)"
              R"("page[size]":{"type":"integer","exclusiveMinimum":0}},"required":["store.id"]})");
}

TEST(OpenApiPetstore, LoadsCompilesValidatesAndRenders) {
    const Imported in = importOk(petstore());
    const config::Config c = loadAndCompile(in.result.json);
    ASSERT_EQ(c.operations.size(), 7U);
    EXPECT_EQ(c.operations[0].protocol, "rest");

    EXPECT_EQ(renderOperation(c, "showPetById", R"({"petId": 7, "fields": "a b"})"),
              R"({"method":"GET","url":"https://petstore.example.com:8443/v1/pets/7",)"
              R"("query":{"fields":"a b"}})");
    // Missing optional parameters leave their member out.
    EXPECT_EQ(renderOperation(c, "listPets", R"({"limit": 5, "tags": ["a", "b"]})"),
              R"({"method":"GET","url":"https://petstore.example.com:8443/v1/pets",)"
              R"("query":{"limit":5,"tags":["a","b"]},"headers":{}})");
    EXPECT_EQ(renderOperation(c, "get_stores_store.id_items",
                              R"({"store.id": "a/b c", "page[size]": 3})"),
              R"({"method":"GET","url":"https://petstore.example.com:8443/v1/stores/a%2Fb%20c/)"
              R"(items","query":{"page[size]":3}})");
    EXPECT_EQ(renderOperation(c, "createPet", R"({"body": {"name": "Rex"}})"),
              R"({"method":"POST","url":"https://petstore.example.com:8443/v1/pets",)"
              R"("body":{"name":"Rex"}})");

    EXPECT_EQ(validateInput(c, "listPets", R"({"limit": 5, "status": "sold"})"), "");
    EXPECT_EQ(validateInput(c, "listPets", R"({"limit": 0})"),
              "input.limit: must be an integer ≥ 1, got 0");
    EXPECT_NE(validateInput(c, "listPets", R"({"status": "lost"})"), "");
    EXPECT_EQ(validateInput(c, "createPet", R"({"body": {"name": "Rex", "tag": null,
                                                          "owner": null}})"),
              "");
    EXPECT_NE(validateInput(c, "createPet", R"({"body": {"name": ""}})"), "");
    EXPECT_NE(validateInput(c, "createPet", R"({})"), "");
    EXPECT_NE(validateInput(c, "showPetById", R"({"fields": "x"})"), "");
    EXPECT_EQ(validateInput(c, "update_pet", R"({"petId": 1, "body": {"status": null}})"), "");
    EXPECT_NE(validateInput(c, "update_pet", R"({"petId": 1, "body": {"colour": "red"}})"), "");
    EXPECT_NE(
        validateInput(c, "get_stores_store.id_items", R"({"store.id": "s", "page[size]": 0})"), "");
}

TEST(OpenApiOptions, ServerAndPrefix) {
    ImportOptions options;
    options.server = "http://127.0.0.1:9/";
    options.prefix = "pets.";
    const Imported in = importOk(petstore(), options);
    EXPECT_EQ(in.member("pets.showPetById", "config"),
              R"({"method":"GET","url":"http://127.0.0.1:9/pets/{{ petId | url }}",)"
              R"("query":{"fields":"{{ fields }}"}})");
    EXPECT_EQ(in.member("pets.listPets_2", "title"), R"("Search pets")");
    loadAndCompile(in.result.json);

    options.prefix = "bad prefix";
    EXPECT_NE(importError(petstore(), options).find("--prefix"), std::string::npos);
    options.prefix = std::string(65, 'p');
    EXPECT_NE(importError(petstore(), options).find("at most 64"), std::string::npos);
    options.prefix = "";
    for (const char* bad : {"127.0.0.1:9", "ftp://h/", "/v1", "http://", "http:///x",
                            "http://h/{{x}}", "http://h/{x}", "http://h /"}) {
        options.server = bad;
        EXPECT_NE(importError(petstore(), options).find("--server"), std::string::npos) << bad;
    }
    EXPECT_TRUE(checkServer("https://api.example.com/v1").ok());
}

constexpr std::string_view kOpenApi31 = R"({
  "openapi": "3.1.0",
  "info": {"title": "t", "version": "1"},
  "servers": [{"url": "http://api.test"}],
  "paths": {
    "/things/{id}": {
      "put": {
        "operationId": "putThing",
        "parameters": [
          {"name": "id", "in": "path", "required": true, "schema": {"type": ["string", "integer"]}},
          {"name": "id", "in": "header", "schema": {"type": "string"}},
          {"name": "body", "in": "query", "schema": {"type": "boolean", "const": true}},
          {"name": "a|b", "in": "query", "schema": {"type": "string"}},
          {"name": "$x", "in": "query", "schema": {"type": "string"}},
          {"name": "filter", "in": "query",
           "content": {"application/json": {"schema": {"type": "object"}}}}
        ],
        "requestBody": {
          "content": {"application/json; charset=utf-8": {"schema": {"$ref": "#/components/schemas/Thing"}}}
        }
      }
    }
  },
  "components": {
    "schemas": {
      "Thing": {
        "$id": "https://example.com/thing",
        "$defs": {"unused": {"type": "string"}},
        "type": "object",
        "properties": {
          "size": {"type": ["number", "null"], "exclusiveMaximum": 10, "examples": [1, 2]},
          "kind": {"$ref": "#/components/schemas/Kind", "description": "the kind"},
          "label": {"allOf": [{"$ref": "#/components/schemas/Kind"}], "nullable": true},
          "child": {"$ref": "#/components/schemas/Kind", "minLength": 2},
          "code": {"type": "string", "pattern": "(?<=x)y"},
          "extra": {"if": {"type": "string"}, "then": {"minLength": 1}, "x-internal": true},
          "nothing": {"type": "file"}
        },
        "propertyNames": {"pattern": "^[a-z]+$"}
      },
      "Kind": {"type": "string", "enum": ["a", "b"]}
    }
  }
})";

TEST(OpenApi31, TypeArraysRefSiblingsAndCollisions) {
    const Imported in = importOk(kOpenApi31);
    ASSERT_EQ(in.result.operation_count, 1U);
    EXPECT_EQ(in.member("putThing", "config"),
              R"({"method":"PUT","url":"http://api.test/things/{{ id | url }}",)"
              R"("query":{"body":"{{ body }}","a|b":"{{ a_b }}","$x":"{{ $.$x }}",)"
              R"("filter":"{{ filter | json }}"},"headers":{"id":"{{ id_header }}"},)"
              R"("body":"{{ request_body }}"})");
    EXPECT_EQ(
        in.member("putThing", "input_schema"),
        R"({"type":"object","properties":{"id":{"type":["string","integer"]},)"
        R"("id_header":{"type":"string"},"body":{"type":"boolean","const":true},)"
        R"("a_b":{"type":"string"},"$x":{"type":"string"},"filter":{"type":"object"},)"
        R"("request_body":{"type":"object","properties":{)"
        R"("size":{"type":["number","null"],"exclusiveMaximum":10,"examples":[1,2]},)"
        R"("kind":{"type":"string","enum":["a","b"],"description":"the kind"},)"
        R"("label":{"anyOf":[{"allOf":[{"type":"string","enum":["a","b"]}]},{"type":"null"}]},)"
        R"("child":{"allOf":[{"type":"string","enum":["a","b"]}],"minLength":2},)"
        R"("code":{"type":"string"},"extra":{},"nothing":{"type":"string"}}}},)"
        R"("required":["id"]})");
    EXPECT_TRUE(in.warned("id_header")) << in.warnings();
    EXPECT_TRUE(in.warned("the request body's input property is \"request_body\""))
        << in.warnings();
    EXPECT_TRUE(in.warned("the name \"a|b\" cannot be written in an input template"))
        << in.warnings();
    EXPECT_TRUE(
        in.warned("/components/schemas/Thing/properties/code/pattern: not accepted by "
                  "crankd's validator"))
        << in.warnings();
    EXPECT_TRUE(
        in.warned("/components/schemas/Thing/properties/extra/if: not supported by "
                  "crankd's validator"))
        << in.warnings();
    EXPECT_TRUE(in.warned("/components/schemas/Thing/propertyNames: not supported"))
        << in.warnings();
    const config::Config c = loadAndCompile(in.result.json);
    EXPECT_EQ(testing::renderOperation(c, "putThing",
                                       R"({"id": "x/1", "id_header": "h", "a_b": "v", "$x": 1,
                                           "filter": {"k": 1}, "request_body": {"size": 1}})"),
              R"({"method":"PUT","url":"http://api.test/things/x%2F1","query":{"a|b":"v",)"
              R"("$x":1,"filter":"{\"k\":1}"},"headers":{"id":"h"},"body":{"size":1}})");
    EXPECT_EQ(validateInput(c, "putThing", R"({"id": 1, "request_body": {"label": null}})"), "");
    EXPECT_NE(validateInput(c, "putThing", R"({"id": 1, "request_body": {"label": "c"}})"), "");
    EXPECT_NE(validateInput(c, "putThing", R"({"id": 1, "request_body": {"child": "a"}})"), "");
}

TEST(OpenApiRefs, CycleBecomesAnyValueWithWarning) {
    const Imported in = importOk(R"({
      "openapi": "3.0.0", "servers": [{"url": "https://h"}],
      "paths": {"/tree": {"post": {"operationId": "plant", "requestBody": {"content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}}},
      "components": {"schemas": {"Node": {"type": "object", "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}}}
    })");
    EXPECT_EQ(in.member("plant", "input_schema"),
              R"({"type":"object","properties":{"body":{"type":"object","properties":{)"
              R"("value":{"type":"integer"},"children":{"type":"array","items":{}}}}}})");
    EXPECT_TRUE(
        in.warned("/components/schemas/Node/properties/children/items/$ref: $ref cycle "
                  "through \"#/components/schemas/Node\"; replaced by {} (any value)"))
        << in.warnings();
    loadAndCompile(in.result.json);
}

TEST(OpenApiRefs, SharedSchemasAreInlinedEachTime) {
    // Not a cycle: the same schema used twice side by side.
    const Imported in = importOk(R"({
      "openapi": "3.0.0", "servers": [{"url": "https://h"}],
      "paths": {"/p": {"post": {"operationId": "p", "requestBody": {"content": {
        "application/json": {"schema": {"type": "object", "properties": {
          "a": {"$ref": "#/components/schemas/Id"}, "b": {"$ref": "#/components/schemas/Id"}}}}}}}}},
      "components": {"schemas": {"Id": {"type": "string", "format": "uuid"}}}
    })");
    EXPECT_EQ(in.member("p", "input_schema"),
              R"({"type":"object","properties":{"body":{"type":"object","properties":{)"
              R"("a":{"type":"string","format":"uuid"},"b":{"type":"string","format":"uuid"}}}}})");
    EXPECT_TRUE(in.result.warnings.empty()) << in.warnings();
}

TEST(OpenApiServers, ResolutionAndErrors) {
    const std::string paths = R"("paths": {"/a": {"get": {"operationId": "a"}}})";
    EXPECT_EQ(importError(R"({"openapi": "3.0.0", )" + paths + "}"),
              "the document has no servers; pass --server URL");
    EXPECT_EQ(importError(R"({"openapi": "3.0.0", "servers": [], )" + paths + "}"),
              "the document has no servers; pass --server URL");
    EXPECT_EQ(importError(R"({"openapi": "3.0.0", "servers": [{"url": "/v1"}], )" + paths + "}"),
              R"(/servers/0/url: "/v1" is not an absolute http:// or https:// URL; pass )"
              R"(--server URL (the API's base URL))");
    EXPECT_EQ(importError(R"({"openapi": "3.0.0", "servers": [{"url": "https://{host}/"}], )" +
                          paths + "}"),
              R"(/servers/0/url: the server variable "host" has no default in )"
              R"(/servers/0/variables (a string); pass --server URL)");
    // --server makes the document's servers irrelevant, relative or missing.
    ImportOptions options;
    options.server = "http://127.0.0.1:9";
    EXPECT_EQ(
        importOk(R"({"openapi": "3.0.0", "servers": [{"url": "/v1"}], )" + paths + "}", options)
            .member("a", "config"),
        R"({"method":"GET","url":"http://127.0.0.1:9/a"})");
    // An operation's own servers come first.
    EXPECT_EQ(importOk(R"({"openapi": "3.1.0", "servers": [{"url": "https://doc"}], "paths": {
                            "/a": {"servers": [{"url": "https://item"}],
                                   "get": {"operationId": "a"},
                                   "put": {"operationId": "b",
                                           "servers": [{"url": "https://op/x"}]}}}})")
                  .member("b", "config"),
              R"({"method":"PUT","url":"https://op/x/a"})");
}

TEST(OpenApiOperations, SkippedAndAdjusted) {
    const Imported in = importOk(R"({
      "openapi": "3.0.1", "servers": [{"url": "https://h"}],
      "paths": {
        "x-extension": {"anything": true},
        "/a/{b}/{c}": {
          "summary": "shared",
          "trace": {"operationId": "t"},
          "get": {"operationId": "g", "requestBody": {"content": {"application/json": {}}},
                  "parameters": [
                    {"name": "b", "in": "path", "required": true},
                    {"name": "zz", "in": "path", "required": true},
                    {"name": "Authorization", "in": "header"},
                    {"name": "Host", "in": "header"},
                    {"name": "bad header", "in": "header"},
                    {"name": "m", "in": "query", "style": "deepObject", "schema": {"type": "object"}},
                    {"name": "X-List", "in": "header", "schema": {"type": ["array", "null"]}}]},
          "post": {"operationId": "p", "requestBody": {"required": true, "content": {
                    "multipart/form-data": {}, "text/plain": {}}}}
        }
      }
    })");
    ASSERT_EQ(in.result.operation_count, 2U);
    EXPECT_TRUE(in.warned("/paths/~1a~1{b}~1{c}/trace: TRACE is not supported")) << in.warnings();
    EXPECT_EQ(in.member("g", "config"),
              R"({"method":"GET","url":"https://h/a/{{ b | url }}/{{ c | url }}",)"
              R"("query":{"m":"{{ m }}"},"headers":{"X-List":"{{ X-List }}"}})");
    EXPECT_EQ(in.member("g", "input_schema"),
              R"({"type":"object","properties":{"b":{},"m":{"type":"object"},)"
              R"("X-List":{"type":["array","null"]},"c":{"type":"string"}},"required":["b","c"]})");
    EXPECT_TRUE(in.warned("header parameter \"X-List\" may be an array or object"))
        << in.warnings();
    EXPECT_TRUE(in.warned("the path parameter \"c\" is not defined")) << in.warnings();
    EXPECT_TRUE(in.warned("path parameter \"zz\" does not appear in the path")) << in.warnings();
    EXPECT_TRUE(
        in.warned("header parameter \"Authorization\" is ignored, as OpenAPI says; give "
                  "the operation an auth_profile instead"))
        << in.warnings();
    EXPECT_TRUE(in.warned("header \"Host\" is the rest plugin's own")) << in.warnings();
    EXPECT_TRUE(in.warned("\"bad header\" is not a valid header name")) << in.warnings();
    EXPECT_TRUE(in.warned("style \"deepObject\" is not supported")) << in.warnings();
    EXPECT_TRUE(in.warned("the rest plugin sends no body with GET")) << in.warnings();
    EXPECT_EQ(in.member("p", "config"), R"({"method":"POST","url":"https://h/a/{{ b | url }}/)"
                                        R"({{ c | url }}"})");
    EXPECT_TRUE(
        in.warned("no JSON media type (multipart/form-data, text/plain); the request body "
                  "is left out"))
        << in.warnings();
    // The path item's summary is not the operation's; the fallback description names it.
    EXPECT_EQ(in.member("p", "description"), R"("POST /a/{b}/{c}")");
    loadAndCompile(in.result.json);
}

TEST(OpenApiOperations, LiteralPathAndServerTextIsNotATemplate) {
    ImportOptions options;
    options.server = "http://127.0.0.1:9/base";
    const Imported in = importOk(R"({"openapi": "3.0.0", "paths": {
      "/odd path/{{x}}/é": {"get": {"operationId": "odd"}}}})",
                                 options);
    // "{{x}}" is a parameter named "{x" followed by a literal "}"; literal text is
    // percent-encoded, so no brace of it can run into a template.
    EXPECT_EQ(in.member("odd", "config"),
              R"({"method":"GET","url":"http://127.0.0.1:9/base/odd%20path/{{ {x | url }}%7D/)"
              R"(%C3%A9"})");
    EXPECT_TRUE(in.warned("the path parameter \"{x\" is not defined")) << in.warnings();
    loadAndCompile(in.result.json);
}

TEST(OpenApiOperations, DescriptionsAndTitlesAreBounded) {
    const std::string long_text(20000, 'd');
    const Imported in =
        importOk(R"({"openapi": "3.0.0", "servers": [{"url": "https://h"}],
      "paths": {"/a": {"get": {"operationId": "a", "summary": ")" +
                 std::string(300, 's') + R"(", "description": ")" + long_text + R"("}}}})");
    const auto& op = in.op("a");
    EXPECT_EQ(op["title"].GetStringLength(), 256U);
    EXPECT_LE(op["description"].GetStringLength(), 8192U);
    EXPECT_TRUE(std::string_view(op["description"].GetString()).ends_with("\xE2\x80\xA6"));
    loadAndCompile(in.result.json);
}

}  // namespace
}  // namespace crank::openapi
