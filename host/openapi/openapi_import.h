#pragma once

// `crankd import-openapi`: turns an OpenAPI 3.0.x / 3.1.x document (JSON) into crankd
// operations of protocol `rest`, one per path and method, ready for the config's `operations`.
//
// Each operation gets a tool name (the operationId, or `<method>_<path>`, sanitised and made
// unique), a title and description, a REST config whose strings are input templates
// (`"url": "http://h/pets/{{ petId | url }}"`, `"query": {"limit": "{{ limit }}"}`,
// `"headers": {...}`, `"body": "{{ body }}"`), an input schema with one property per parameter
// plus `body` (local `$ref`s inlined, OpenAPI-only keywords translated or dropped, so that
// crankd's validator accepts it) and `"execution": {"mode": "unary"}`.
// What cannot be translated faithfully (a cookie parameter, a `$ref` cycle, a keyword crankd's
// validator does not know) is left out with a warning; what is not an OpenAPI 3 document is an
// error naming the JSON pointer where it is wrong (`/paths/~1items/get/parameters/2: ...`).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace crank::openapi {

/// Bounds on one import: hostile documents are refused or cut, never followed without limit.
struct ImportLimits {
    static constexpr std::size_t default_max_document_bytes = std::size_t{64} * 1024 * 1024;
    std::size_t max_document_bytes = default_max_document_bytes;  ///< the document's text
    std::size_t max_document_depth = 256;  ///< nesting of objects and arrays in the document
    std::size_t max_warnings = 200;        ///< warnings kept (then one "... more" line)
};

struct ImportOptions {
    /// Prepended to every tool name (letters, digits, `_`, `-`, `.`; at most 64 characters).
    std::string prefix;
    /// The upstream's base URL (`http://` or `https://`); replaces the document's `servers`.
    std::optional<std::string> server;
    ImportLimits limits;
};

struct ImportResult {
    /// `{"operations": [...]}`, pretty-printed (2 spaces), ending with a newline.
    std::string json;
    /// What was left out or changed, one line each (`/paths/~1a/get: ...`).
    std::vector<std::string> warnings;
    std::size_t operation_count = 0;
};

/// Checks `prefix`: "" or 1..64 of A-Z a-z 0-9 _ - . (ErrorCode::invalid_argument).
Result<void> checkPrefix(std::string_view prefix);
/// Checks a base URL given on the command line: absolute `http://` or `https://` with a host,
/// no white space, no braces (ErrorCode::invalid_argument).
Result<void> checkServer(std::string_view server);

/// Imports one OpenAPI document given as JSON text. Errors are ErrorCode::invalid_argument:
/// malformed JSON (with the byte offset), Swagger 2.0, a document that is not OpenAPI 3, a
/// structural error at a JSON pointer, a remote or dangling `$ref`, no usable server, a bad
/// option.
Result<ImportResult> importOpenApi(std::string_view document_json, const ImportOptions& options);

}  // namespace crank::openapi
