#pragma once

// The GraphQL plugin's operation config (README.md, "Operation config"): parsed and checked once
// at config load (with templates still in it) and again per call (rendered over the tool input).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <crank/sdk/http/settings.hpp>
#include <crank/sdk/http/url.hpp>
#include <crank/sdk/path.hpp>

namespace crank::graphql {

/// Documented defaults and bounds (README.md).
struct GraphqlDefaults {
    static constexpr std::int64_t introspection_timeout_ms = 5'000;
    static constexpr std::size_t max_document_bytes = std::size_t{1024} * 1024;
    static constexpr std::size_t max_schema_bytes = std::size_t{32} * 1024 * 1024;
};

/// A path into `data` with its text as written (which names it in messages).
struct DataPath {
    std::string text;
    sdk::Path path;
    bool set() const { return !text.empty(); }
};

struct GraphqlConfig {
    std::string endpoint_text;               ///< as given (may hold templates before rendering)
    std::optional<sdk::http::Url> endpoint;  ///< parsed when the text has no template left
    std::string document;                    ///< the GraphQL document, never templated
    std::string operation_name;              ///< "" = the document's only operation
    std::optional<std::string> variables;    ///< compact JSON object, when given
    std::string cursor_variable;             ///< receives the host's cursor
    DataPath data_path;                      ///< the part of `data` the item carries
    DataPath has_next_path;                  ///< a boolean in `data`: more pages follow
    std::string schema_file;                 ///< SDL or introspection JSON, read at load
    bool introspection = true;               ///< introspect the endpoint at load (no schema_file)
    std::int64_t introspection_timeout_ms = GraphqlDefaults::introspection_timeout_ms;
    sdk::http::HttpSettings http;
};

struct ConfigProblem {
    std::string path;  ///< the member at fault ("timeouts.connect_ms"), "" for the whole config
    std::string message;
};

/// Parses `json`. `rendered`: the templates have been rendered (a call), so the endpoint must
/// parse whole. Problems are appended to `problems`; nullopt when there is any. The document is
/// not parsed here (graphql_syntax.h does, in the adapter).
std::optional<GraphqlConfig> parseGraphqlConfig(std::string_view json, bool rendered,
                                                std::vector<ConfigProblem>& problems);

/// The JSON Schema of the config that the plugin declares to the host.
std::string_view graphqlConfigSchema();

}  // namespace crank::graphql
