#pragma once

// `crankd import-graphql ENDPOINT_OR_SCHEMA_FILE [--prefix P] [--endpoint URL] [--depth N]
// [--header 'Name: value']...`: reads a GraphQL schema (an http:// or https:// URL is asked for
// its introspection; anything else is a file, "-" standard input, holding SDL or introspection
// JSON), imports one operation per root query and mutation field, and says what to print where.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace crank::graphql_import {

/// Exit statuses of the command (the same as import-openapi's).
enum ImportExit : int {
    kImportOk = 0,
    kImportBadDocument = 1,  ///< unreadable file or endpoint, a schema that does not parse, ...
    kImportUsage = 2,        ///< a bad option (prefix, endpoint, depth, header)
};

struct CommandOptions {
    static constexpr std::size_t default_max_document_bytes = std::size_t{32} * 1024 * 1024;
    /// The endpoint to introspect (http:// or https://) or the schema file ("-": stdin).
    std::string source;
    /// Prepended to every tool name (letters, digits, `_`, `-`, `.`; at most 64 characters).
    std::string prefix;
    /// The operations' endpoint: defaults to `source` when that is a URL, required otherwise.
    std::optional<std::string> endpoint;
    /// Object levels selected below each root field (1..8).
    std::size_t depth = 2;
    /// Extra request headers for the introspection request ("Name: value"), e.g. credentials.
    /// They are not written into the output.
    std::vector<std::string> headers;
    /// Bounds of reading the schema: its bytes (file or response body) and the whole request.
    std::size_t max_document_bytes = default_max_document_bytes;
    std::chrono::milliseconds timeout{10'000};
};

/// What the command printed.
struct CommandOutput {
    int exit_code = kImportOk;
    std::string out;  ///< standard output: {"operations": [...]}
    std::string err;  ///< standard error: warnings, a summary line, or the error
};

/// Whether `source` names an endpoint (http:// or https://) rather than a file.
bool isUrl(std::string_view source);
/// Checks an endpoint URL: absolute http:// or https:// with a host, no white space
/// (ErrorCode::invalid_argument, the message begins with `what`: "--endpoint: ...").
Result<void> checkEndpoint(std::string_view url, std::string_view what = "--endpoint");
/// Checks `--depth`: an integer 1..8.
Result<std::size_t> parseDepth(std::string_view text);
/// Checks `--header`: "Name: value", a token name, no control characters.
Result<void> checkHeader(std::string_view header);

/// Runs the command. Messages begin with "crankd: import-graphql: ".
CommandOutput runImportCommand(const CommandOptions& options);

}  // namespace crank::graphql_import
