#include "graphql_config.h"

#include <algorithm>
#include <array>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <crank/sdk/http/text.hpp>

namespace crank::graphql {
namespace {

using Json = rapidjson::Value;

constexpr std::size_t kMaxDepth = 256;
constexpr std::int64_t kMaxIntrospectionMs = 60'000;

std::string str(const Json& v) {
    return {v.GetString(), v.GetStringLength()};
}

bool templated(std::string_view s) {
    return s.find("{{") != std::string_view::npos;
}

class Parser {
public:
    Parser(bool rendered, std::vector<ConfigProblem>& problems)
        : rendered_(rendered), problems_(problems) {}

    void parse(const Json& root, GraphqlConfig& c) {
        for (const auto& m : root.GetObject()) {
            const std::string name = str(m.name);
            if (std::find(kOwn.begin(), kOwn.end(), name) == kOwn.end() &&
                std::find(sdk::http::kHttpSettingMembers.begin(),
                          sdk::http::kHttpSettingMembers.end(),
                          name) == sdk::http::kHttpSettingMembers.end()) {
                problem(name, "unknown member of the GraphQL config");
            }
        }
        endpoint(root, c);
        const std::optional<std::string> document = string(root, "document");
        if (!document) {
            if (root.FindMember("document") == root.MemberEnd()) {
                problem("document",
                        "is required: the GraphQL query or mutation to send, with its variables");
            }
        } else if (document->size() > GraphqlDefaults::max_document_bytes) {
            problem("document", "is larger than " +
                                    std::to_string(GraphqlDefaults::max_document_bytes) + " bytes");
        } else if (templated(*document) && !rendered_) {
            problem("document",
                    "must not hold input templates: pass values as GraphQL variables "
                    "(\"$name\" in the document, the tool's input or `variables` in the config)");
        } else {
            c.document = *document;
        }
        c.operation_name = string(root, "operation_name").value_or("");
        c.cursor_variable = string(root, "cursor_variable").value_or("");
        const auto variables = root.FindMember("variables");
        if (variables != root.MemberEnd()) {
            if (!variables->value.IsObject()) {
                problem("variables", "expected an object: variable name to value");
            } else {
                rapidjson::StringBuffer buffer;
                rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
                variables->value.Accept(writer);
                c.variables.emplace(buffer.GetString(), buffer.GetSize());
            }
        }
        path(root, "data_path", c.data_path);
        path(root, "has_next_path", c.has_next_path);
        c.schema_file = string(root, "schema_file").value_or("");
        const auto introspection = root.FindMember("introspection");
        if (introspection != root.MemberEnd()) {
            if (introspection->value.IsBool()) {
                c.introspection = introspection->value.GetBool();
            } else {
                problem("introspection", "expected true or false");
            }
        }
        const auto timeout = root.FindMember("introspection_timeout_ms");
        if (timeout != root.MemberEnd()) {
            if (!timeout->value.IsInt64() || timeout->value.GetInt64() < 1 ||
                timeout->value.GetInt64() > kMaxIntrospectionMs) {
                problem("introspection_timeout_ms",
                        "expected a whole number of milliseconds from 1 to 60000");
            } else {
                c.introspection_timeout_ms = timeout->value.GetInt64();
            }
        }
    }

private:
    static constexpr std::array<std::string_view, 10> kOwn = {
        "endpoint",        "document",
        "operation_name",  "variables",
        "cursor_variable", "data_path",
        "has_next_path",   "schema_file",
        "introspection",   "introspection_timeout_ms"};

    void problem(std::string path, std::string message) {
        problems_.push_back({std::move(path), std::move(message)});
    }

    std::optional<std::string> string(const Json& root, const char* key) {
        const auto it = root.FindMember(key);
        if (it == root.MemberEnd()) {
            return std::nullopt;
        }
        if (!it->value.IsString() || it->value.GetStringLength() == 0) {
            problem(key, "expected a non-empty string");
            return std::nullopt;
        }
        return str(it->value);
    }

    void endpoint(const Json& root, GraphqlConfig& c) {
        const auto it = root.FindMember("endpoint");
        if (it == root.MemberEnd()) {
            problem("endpoint", "is required: the GraphQL endpoint's http:// or https:// URL");
            return;
        }
        if (!it->value.IsString()) {
            problem("endpoint", "expected a string");
            return;
        }
        c.endpoint_text = str(it->value);
        if (rendered_ || !templated(c.endpoint_text)) {
            std::string error;
            c.endpoint = sdk::http::parseUrl(c.endpoint_text, error);
            if (!c.endpoint) {
                problem("endpoint", sdk::http::excerpt(error, 512));  // it may quote the URL whole
            }
            return;
        }
        const std::string head = c.endpoint_text.substr(0, 8);
        if (head.rfind("http://", 0) != 0 && head.rfind("https://", 0) != 0) {
            problem("endpoint", "must start with http:// or https:// (templates may follow)");
        }
    }

    void path(const Json& root, const char* key, DataPath& out) {
        const std::optional<std::string> text = string(root, key);
        if (!text) {
            return;
        }
        sdk::PathError error;
        std::optional<sdk::Path> parsed = sdk::parsePath(*text, &error);
        if (!parsed) {
            problem(key, "\"" + sdk::http::excerpt(*text, 128) + "\": " + error.message +
                             " at byte " + std::to_string(error.offset));
            return;
        }
        if (parsed->hasWildcard()) {
            problem(key, "a wildcard (*) cannot be used here: the path names one value");
            return;
        }
        out.text = *text;
        out.path = std::move(*parsed);
    }

    bool rendered_;
    std::vector<ConfigProblem>& problems_;
};

}  // namespace

std::optional<GraphqlConfig> parseGraphqlConfig(std::string_view json, bool rendered,
                                                std::vector<ConfigProblem>& problems) {
    if (sdk::http::jsonNestingDepth(json) > kMaxDepth) {
        problems.push_back({"", "the GraphQL config is nested deeper than " +
                                    std::to_string(kMaxDepth) + " levels"});
        return std::nullopt;
    }
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
    if (doc.HasParseError()) {
        problems.push_back({"", std::string("the GraphQL config is not valid JSON: ") +
                                    rapidjson::GetParseError_En(doc.GetParseError()) + " at byte " +
                                    std::to_string(doc.GetErrorOffset())});
        return std::nullopt;
    }
    if (!doc.IsObject()) {
        problems.push_back({"", "the GraphQL config must be an object"});
        return std::nullopt;
    }
    GraphqlConfig config;
    const std::size_t before = problems.size();
    Parser(rendered, problems).parse(doc, config);
    std::vector<sdk::http::SettingProblem> settingProblems;
    sdk::http::readHttpSettings(doc, "GraphQL", config.http, settingProblems);
    for (auto& p : settingProblems) {
        problems.push_back({std::move(p.path), std::move(p.message)});
    }
    if (problems.size() != before) {
        return std::nullopt;
    }
    return config;
}

std::string_view graphqlConfigSchema() {
    return R"json({
  "type": "object",
  "required": ["endpoint", "document"],
  "properties": {
    "endpoint": {"type": "string", "format": "uri", "minLength": 1, "description": "the GraphQL endpoint's absolute http(s) URL; templates allowed, each value percent-encoded"},
    "document": {"type": "string", "minLength": 1, "description": "a GraphQL query or mutation (no templates: use variables)"},
    "operation_name": {"type": "string", "minLength": 1},
    "variables": {"type": "object"},
    "cursor_variable": {"type": "string", "minLength": 1},
    "data_path": {"type": "string", "minLength": 1},
    "has_next_path": {"type": "string", "minLength": 1},
    "schema_file": {"type": "string", "minLength": 1},
    "introspection": {"type": "boolean"},
    "introspection_timeout_ms": {"type": "integer", "minimum": 1, "maximum": 60000},
    "headers": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean", "null"]}},
    "timeouts": {"type": "object", "additionalProperties": false, "properties": {
      "connect_ms": {"type": "integer", "minimum": 1, "maximum": 86400000},
      "headers_ms": {"type": "integer", "minimum": 1, "maximum": 86400000},
      "total_ms": {"type": "integer", "minimum": 1, "maximum": 86400000}}},
    "tls": {"type": "object", "additionalProperties": false, "properties": {
      "verify": {"type": "boolean"}, "ca_file": {"type": "string", "minLength": 1}}},
    "max_response_bytes": {"type": "integer", "minimum": 1, "maximum": 1073741824},
    "follow_redirects": {"type": "integer", "minimum": 0, "maximum": 20},
    "redirect_origins": {"type": "array", "items": {"type": "string", "minLength": 1}},
    "compression": {"type": "boolean"},
    "keep_alive": {"type": "object", "additionalProperties": false, "properties": {
      "max_idle": {"type": "integer", "minimum": 0, "maximum": 1024},
      "idle_timeout_ms": {"type": "integer", "minimum": 1, "maximum": 86400000}}}
  },
  "additionalProperties": false
})json";
}

}  // namespace crank::graphql
