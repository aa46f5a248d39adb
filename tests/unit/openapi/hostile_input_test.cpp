// OpenAPI import of documents that are broken, not OpenAPI 3, or built to hurt: every one is an
// error naming what is wrong and where, or an output that stays bounded and loads.

#include <string>

#include <gtest/gtest.h>

#include "openapi/openapi_import.h"
#include "openapi_test_support.h"

namespace crank::openapi {
namespace {

using testing::Imported;
using testing::importError;
using testing::importOk;
using testing::loadAndCompile;

/// A 3.0 document with one operation, `method` /items, whose operation object is `operation`.
std::string withOperation(const std::string& operation, const std::string& components = "{}",
                          const std::string& method = "get") {
    return R"({"openapi": "3.0.3", "servers": [{"url": "https://h"}], "paths": {"/items": {")" +
           method + R"(": )" + operation + R"(}}, "components": )" + components + "}";
}

TEST(OpenApiHostile, MalformedAndTruncatedJson) {
    EXPECT_EQ(importError(R"({"openapi": "3.0.0", "paths": {})"),
              "malformed JSON at byte 32: missing a comma or '}' after an object member");
    EXPECT_EQ(importError(R"({"openapi": "3.0.0",, })"),
              "malformed JSON at byte 20: missing a name for object member");
    EXPECT_EQ(importError(""), "malformed JSON at byte 0: the document is empty");
    const std::string text = withOperation(R"({"operationId": "a"})");
    const std::string message = importError(text.substr(0, text.size() / 2));
    EXPECT_TRUE(message.starts_with("malformed JSON at byte ")) << message;
    EXPECT_EQ(importError("{\"openapi\": \"3.0.0\xff\"}"),
              "malformed JSON at byte 18: invalid encoding in string");
}

TEST(OpenApiHostile, DeepNestingAndSizeAreBounded) {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    EXPECT_EQ(importError(deep), "nested deeper than 256 levels at byte 256");
    ImportOptions small;
    small.limits.max_document_bytes = 100;
    EXPECT_EQ(importError(withOperation("{}"), small), "larger than 100 bytes");
}

TEST(OpenApiHostile, NotOpenApi3) {
    EXPECT_EQ(importError(R"({"swagger": "2.0", "info": {}, "paths": {}})"),
              "Swagger 2.0 is not supported; convert it to OpenAPI 3 (for example with "
              "https://converter.swagger.io) and import that");
    EXPECT_EQ(importError("[]"),
              "the document is not an OpenAPI 3 object: expected a JSON object, got an array");
    EXPECT_EQ(importError(R"({"paths": {}})"),
              "/openapi: missing: the document is not an OpenAPI 3 object");
    EXPECT_EQ(importError(R"({"openapi": 3.1, "paths": {}})"),
              "/openapi: must be a version string like \"3.1.0\", got 3.1");
    EXPECT_EQ(importError(R"({"openapi": "2.0", "paths": {}})"),
              "/openapi: unsupported version \"2.0\": only OpenAPI 3.0.x and 3.1.x are imported");
    EXPECT_EQ(importError(R"({"openapi": "3.0.0"})"), "/paths: missing (OpenAPI 3.0 requires it)");
    EXPECT_EQ(importError(R"({"openapi": "3.0.0", "paths": []})"),
              "/paths: must be an object of paths, got an array");
    EXPECT_EQ(importError(R"({"openapi": "3.0.0", "paths": {"items": {}}})"),
              "/paths/items: a path must begin with \"/\"");
    EXPECT_EQ(importError(R"({"openapi": "3.0.0", "paths": {"/a": {"get": 5}}})"),
              "/paths/~1a/get: an operation must be an object, got 5");
    EXPECT_EQ(importError(R"({"openapi": "3.0.0", "paths": {"/a/{b": {"get": {}}}})"),
              "/paths/~1a~1{b: unclosed \"{\" at byte 3 of the path");
    // 3.1 makes paths optional: nothing to import, said so.
    const Imported empty = importOk(R"({"openapi": "3.1.0", "webhooks": {}})");
    EXPECT_EQ(empty.result.operation_count, 0U);
    EXPECT_EQ(empty.result.json, "{\n  \"operations\": []\n}\n");
    EXPECT_TRUE(empty.warned("/paths: missing")) << empty.warnings();
}

TEST(OpenApiHostile, BadParameters) {
    EXPECT_EQ(importError(withOperation(R"({"parameters": [{"name": "a", "in": "query"},
        {"name": "b", "in": "query"}, {"in": "query", "schema": {}}]})")),
              "/paths/~1items/get/parameters/2: a parameter needs \"name\" (a non-empty string)");
    EXPECT_EQ(importError(withOperation(R"({"parameters": [{"name": "a", "in": "body"}]})")),
              "/paths/~1items/get/parameters/0/in: must be \"query\", \"header\", \"path\" or "
              "\"cookie\", got \"body\"");
    EXPECT_EQ(importError(withOperation(R"({"parameters": {"name": "a"}})")),
              "/paths/~1items/get/parameters: must be an array of parameters, got an object");
    EXPECT_EQ(importError(withOperation(R"({"parameters": ["limit"]})")),
              "/paths/~1items/get/parameters/0: a parameter must be an object, got \"limit\"");
    // A parameter $ref that loops.
    EXPECT_EQ(
        importError(withOperation(R"({"parameters": [{"$ref": "#/components/parameters/A"}]})",
                                  R"({"parameters": {"A": {"$ref": "#/components/parameters/B"},
                                            "B": {"$ref": "#/components/parameters/A"}}})")),
        "/components/parameters/B/$ref: more than 32 $refs in a row (a cycle?)");
}

TEST(OpenApiHostile, BadReferences) {
    EXPECT_EQ(importError(withOperation(
                  R"({"parameters": [{"name": "a", "in": "query",
                      "schema": {"$ref": "#/components/schemas/Nope"}}]})",
                  R"({"schemas": {}})")),
              "/paths/~1items/get/parameters/0/schema/$ref: \"#/components/schemas/Nope\" points "
              "to nothing: the document has no \"/components/schemas/Nope\"");
    EXPECT_EQ(
        importError(withOperation(R"({"requestBody": {"$ref": "#/components/requestBodies/X"}})")),
        "/paths/~1items/get/requestBody/$ref: \"#/components/requestBodies/X\" points to "
        "nothing: the document has no \"/components/requestBodies\"");
    EXPECT_EQ(
        importError(withOperation(R"({"parameters": [{"$ref": "common.json#/parameters/a"}]})")),
        "/paths/~1items/get/parameters/0/$ref: \"common.json#/parameters/a\" is not a "
        "reference inside this document; only local references (\"#/components/...\") are "
        "supported: bundle the document into one file first");
    EXPECT_EQ(importError(withOperation(R"({"parameters": [{"name": "a", "in": "query",
                      "schema": {"$ref": "https://example.com/schemas/a.json"}}]})")),
              "/paths/~1items/get/parameters/0/schema/$ref: \"https://example.com/schemas/a.json\" "
              "is not a reference inside this document; only local references "
              "(\"#/components/...\") are supported: bundle the document into one file first");
    EXPECT_EQ(importError(withOperation(R"({"parameters": [{"name": "a", "in": "query",
                      "schema": {"$ref": "#anchor"}}]})")),
              "/paths/~1items/get/parameters/0/schema/$ref: \"#anchor\" is not a JSON pointer "
              "(\"#/components/...\")");
    EXPECT_EQ(importError(withOperation(R"({"parameters": [{"name": "a", "in": "query",
                      "schema": {"$ref": 5}}]})")),
              "/paths/~1items/get/parameters/0/schema/$ref: must be a string, got 5");
    // Escaped pointers resolve: ~1 is "/", %25 is "%".
    const Imported in = importOk(withOperation(
        R"({"operationId": "a", "parameters": [{"name": "a", "in": "query",
            "schema": {"$ref": "#/components/schemas/a~1b%25"}}]})",
        R"({"schemas": {"a/b%": {"type": "boolean"}}})"));
    EXPECT_EQ(in.member("a", "input_schema"),
              R"({"type":"object","properties":{"a":{"type":"boolean"}}})");
}

TEST(OpenApiHostile, BadSchemas) {
    EXPECT_EQ(importError(withOperation(R"({"parameters": [{"name": "a", "in": "query",
                      "schema": "string"}]})")),
              "/paths/~1items/get/parameters/0/schema: a schema must be an object (or true or "
              "false), got \"string\"");
    EXPECT_EQ(importError(withOperation(R"({"parameters": [{"name": "a", "in": "query",
                      "schema": {"properties": []}}]})")),
              "/paths/~1items/get/parameters/0/schema/properties: must be an object, got an array");
    EXPECT_EQ(importError(withOperation(R"({"parameters": [{"name": "a", "in": "query",
                      "schema": {"allOf": {}}}]})")),
              "/paths/~1items/get/parameters/0/schema/allOf: must be an array of schemas, got an "
              "object");
    // Wrongly typed keyword values are dropped (with a warning), never passed to the validator.
    const Imported in = importOk(withOperation(R"({"operationId": "a", "parameters": [
        {"name": "a", "in": "query", "schema": {"type": "strin", "minLength": -1, "maximum": "9",
          "required": true, "enum": "x", "multipleOf": 0, "uniqueItems": "yes", "allOf": [],
          "exclusiveMinimum": true, "nullable": "yes", "examples": 5, "foo": 1,
          "properties": {"p": {"type": "string"}, "p": {"type": "integer"}}}}]})"));
    EXPECT_EQ(in.member("a", "input_schema"),
              R"({"type":"object","properties":{"a":{"properties":{"p":{"type":"string"}}}}})");
    for (const char* w :
         {"type: unknown type \"strin\"", "minLength: must be a non-negative",
          "maximum: must be a number", "required: must be an array", "enum: must be an array",
          "multipleOf: must be a number > 0", "uniqueItems: must be true or false",
          "allOf: an empty array", "exclusiveMinimum: true without a number",
          "nullable: must be true", "examples: must be an array", "foo: unknown keyword",
          "properties/p: given twice"}) {
        EXPECT_TRUE(in.warned(w)) << w << "\n" << in.warnings();
    }
    loadAndCompile(in.result.json);
}

TEST(OpenApiHostile, AbsurdlyLongOperationIdAndNames) {
    const std::string id(100000, 'x');
    Imported in = importOk(withOperation(R"({"operationId": ")" + id + R"("})"));
    const std::string name(128, 'x');
    ASSERT_EQ(in.result.operation_count, 1U);
    EXPECT_EQ(in.doc["operations"][0]["name"].GetString(), name);
    EXPECT_TRUE(in.warned("is not a tool name")) << in.warnings();
    // Two of them: the second is cut to make room for its suffix.
    ImportOptions options;
    options.prefix = "p-";
    in = importOk(R"({"openapi": "3.0.0", "servers": [{"url": "https://h"}], "paths": {
        "/a": {"get": {"operationId": ")" +
                      id + R"("}},
        "/b": {"get": {"operationId": ")" +
                      id + R"("}}}})",
                  options);
    ASSERT_EQ(in.result.operation_count, 2U);
    EXPECT_EQ(in.doc["operations"][0]["name"].GetString(), "p-" + std::string(126, 'x'));
    EXPECT_EQ(in.doc["operations"][1]["name"].GetString(), "p-" + std::string(124, 'x') + "_2");
    loadAndCompile(in.result.json);
    // An operationId with nothing usable falls back to <method>_<path>.
    in = importOk(withOperation(R"({"operationId": "日本語"})"));
    EXPECT_EQ(in.doc["operations"][0]["name"].GetString(), std::string("get_items"));
}

TEST(OpenApiHostile, DeepSchemasAreCutToFitTheConfigFile) {
    std::string schema = R"({"type": "string"})";
    for (int i = 0; i < 100; ++i) {
        schema = R"({"type": "object", "properties": {"n": )" + schema + "}}";
    }
    const Imported in = importOk(withOperation(R"({"operationId": "deep", "requestBody": {
        "content": {"application/json": {"schema": )" +
                                                   schema + "}}}}",
                                               "{}", "post"));
    EXPECT_TRUE(in.warned("schema nested deeper than 48 levels; replaced by {} (any value)"))
        << in.warnings();
    loadAndCompile(in.result.json);  // within the config file's 64 levels
}

TEST(OpenApiHostile, ExponentialRefFanOutIsBounded) {
    // S0 -> two S1 -> four S2 -> ... -> 2^24 copies if inlined without a bound.
    std::string schemas;
    for (int i = 0; i < 24; ++i) {
        schemas += R"("S)" + std::to_string(i) + R"(": {"type": "object", "properties": {)" +
                   R"("a": {"$ref": "#/components/schemas/S)" + std::to_string(i + 1) +
                   R"("}, "b": {"$ref": "#/components/schemas/S)" + std::to_string(i + 1) +
                   R"("}}},)";
    }
    schemas += R"("S24": {"type": "string"})";
    const std::string components = R"({"schemas": {)" + schemas + "}}";
    const Imported in = importOk(
        withOperation(R"({"operationId": "fan", "requestBody": {"content": {"application/json":
            {"schema": {"$ref": "#/components/schemas/S0"}}}}})",
                      components, "post"));
    EXPECT_TRUE(in.warned("the operation's input schema passed 20000 values")) << in.warnings();
    EXPECT_LT(in.result.json.size(), std::size_t{4} * 1024 * 1024);
    loadAndCompile(in.result.json);

    // Many operations sharing the fan-out: the document's own budget stops the import.
    std::string paths;
    for (int i = 0; i < 400; ++i) {
        paths += (i == 0 ? "" : ",") + std::string(R"("/p)") + std::to_string(i) +
                 R"(": {"post": {"requestBody": {"content": {"application/json": {"schema":
                     {"$ref": "#/components/schemas/S0"}}}}}})";
    }
    EXPECT_EQ(importError(R"({"openapi": "3.0.0", "servers": [{"url": "https://h"}], "paths": {)" +
                          paths + "}, \"components\": " + components + "}"),
              "the generated operations would hold more than 2000000 JSON values ($refs "
              "inlined); import a smaller part of the document");
}

TEST(OpenApiHostile, ManyTinyPathsAreBounded) {
    // 20 bytes of input, a few hundred of output each: the document budget stops it too.
    std::string paths;
    for (int i = 0; i < 150000; ++i) {
        paths += (i == 0 ? "\"/" : ",\"/") + std::to_string(i) + R"(": {"get": {}})";
    }
    EXPECT_EQ(importError(R"({"openapi": "3.0.0", "servers": [{"url": "https://h"}], "paths": {)" +
                          paths + "}}"),
              "the generated operations would hold more than 2000000 JSON values ($refs "
              "inlined); import a smaller part of the document");
}

TEST(OpenApiHostile, WarningsAreCapped) {
    std::string params;
    for (int i = 0; i < 500; ++i) {
        params += (i == 0 ? "" : ",") + std::string(R"({"name": "c)") + std::to_string(i) +
                  R"(", "in": "cookie"})";
    }
    const Imported in =
        importOk(withOperation(R"({"operationId": "a", "parameters": [)" + params + "]}"));
    ASSERT_EQ(in.result.warnings.size(), 201U);
    EXPECT_EQ(in.result.warnings.back(), "... 300 more warnings");
}

}  // namespace
}  // namespace crank::openapi
