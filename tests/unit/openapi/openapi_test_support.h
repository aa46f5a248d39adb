#pragma once

// Helpers of the OpenAPI import tests: run an import, find an operation, and put the output
// through crankd's own config loader, schema compiler and template compiler.

#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "config/config_loader.h"
#include "json/json_schema.h"
#include "json/json_template.h"
#include "json/json_text.h"
#include "openapi/openapi_import.h"

namespace crank::openapi::testing {

/// An import that succeeded, with its output parsed.
struct Imported {
    ImportResult result;
    rapidjson::Document doc;

    /// The operation called `name`; fails the test when there is none.
    const rapidjson::Value& op(std::string_view name) const {
        static const rapidjson::Value null_value;
        const rapidjson::Value& ops = doc["operations"];
        for (const rapidjson::Value& o : ops.GetArray()) {
            if (std::string_view(o["name"].GetString(), o["name"].GetStringLength()) == name) {
                return o;
            }
        }
        ADD_FAILURE() << "no operation named " << name << " in\n" << result.json;
        return null_value;
    }
    /// Compact JSON of member `key` of operation `name` ("<none>" when absent).
    std::string member(std::string_view name, const char* key) const {
        const rapidjson::Value& o = op(name);
        if (!o.IsObject() || !o.HasMember(key)) {
            return "<none>";
        }
        return json::toJsonText(o[key]);
    }
    bool warned(std::string_view fragment) const {
        for (const std::string& w : result.warnings) {
            if (w.find(fragment) != std::string::npos) {
                return true;
            }
        }
        return false;
    }
    std::string warnings() const {
        std::string all;
        for (const std::string& w : result.warnings) {
            all += w + "\n";
        }
        return all;
    }
};

inline Imported importOk(std::string_view document, const ImportOptions& options = {}) {
    Imported out;
    Result<ImportResult> r = importOpenApi(document, options);
    if (!r) {
        ADD_FAILURE() << "import failed: " << r.error().message;
        out.doc.Parse(R"({"operations": []})");
        return out;
    }
    out.result = std::move(*r);
    out.doc.Parse(out.result.json.c_str());
    EXPECT_FALSE(out.doc.HasParseError()) << out.result.json;
    return out;
}

/// The error message of an import that must fail.
inline std::string importError(std::string_view document, const ImportOptions& options = {}) {
    Result<ImportResult> r = importOpenApi(document, options);
    if (r) {
        return "<imported>";
    }
    EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
    return r.error().message;
}

/// Loads `json` as a crankd config (the import's output is one: {"operations": [...]}) and
/// compiles every operation's input schema and config templates as crankd does. Returns the
/// config; fails the test on any error.
inline config::Config loadAndCompile(const std::string& json) {
    config::LoadResult loaded = config::loadConfigText(json, "imported.json");
    for (const config::ConfigError& e : loaded.errors) {
        ADD_FAILURE() << "config loader: " << e.toString();
    }
    if (!loaded.config) {
        return {};
    }
    for (std::size_t i = 0; i < loaded.config->operations.size(); ++i) {
        const config::OperationConfig& op = loaded.config->operations[i];
        const std::string where = "operations[" + std::to_string(i) + "]";
        auto schema = json::compileSchema(op.input_schema_json, where + ".input_schema");
        EXPECT_TRUE(schema.ok()) << op.name << ": " << schema.error().message;
        auto compiled = json::compileTemplate(op.config_json, where + ".config");
        EXPECT_TRUE(compiled.ok()) << op.name << ": " << compiled.error().message;
    }
    return std::move(*loaded.config);
}

/// The operation `name` of a loaded config.
inline const config::OperationConfig* findOperation(const config::Config& c,
                                                    std::string_view name) {
    for (const config::OperationConfig& op : c.operations) {
        if (op.name == name) {
            return &op;
        }
    }
    ADD_FAILURE() << "no operation " << name;
    return nullptr;
}

/// The operation's config rendered over `input` (JSON text).
inline std::string renderOperation(const config::Config& c, std::string_view name,
                                   std::string_view input) {
    const config::OperationConfig* op = findOperation(c, name);
    if (op == nullptr) {
        return "<none>";
    }
    auto compiled = json::compileTemplate(op->config_json, "config");
    if (!compiled) {
        return "<compile: " + compiled.error().message + ">";
    }
    auto rendered = json::render(*compiled, input, std::size_t{1} << 20U);
    return rendered ? *rendered : "<render: " + rendered.error().message + ">";
}

/// The first validation failure of `input` against the operation's input schema ("" if valid).
inline std::string validateInput(const config::Config& c, std::string_view name,
                                 std::string_view input) {
    const config::OperationConfig* op = findOperation(c, name);
    if (op == nullptr) {
        return "<none>";
    }
    auto schema = json::compileSchema(op->input_schema_json, "input_schema");
    if (!schema) {
        return "<compile: " + schema.error().message + ">";
    }
    return schema->validate(input).firstMessage();
}

}  // namespace crank::openapi::testing
