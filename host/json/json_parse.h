#pragma once

#include <cstddef>
#include <string_view>

#include "json/json_value.h"
#include "util/error.h"

namespace crank::json {

/// Bounds on one parse. Deeply nested input is refused before anything recurses over it.
struct ParseLimits {
    static constexpr std::size_t default_max_bytes = std::size_t{16} * 1024 * 1024;
    static constexpr std::size_t default_max_depth = 64;
    std::size_t max_bytes = default_max_bytes;  ///< longer text is refused without parsing
    std::size_t max_depth = default_max_depth;  ///< nesting of objects and arrays (1 = `{}`)
    /// Refuse bytes that are not UTF-8. Off only for text that is passed on as it came (an
    /// upstream's answer, a plugin's output), which RapidJSON then copies byte for byte.
    bool validate_utf8 = true;
};

/// Parses `text` (exactly one JSON value, whitespace around it allowed) into `doc`, replacing its
/// content. Strict: UTF-8 is validated, no NaN/Infinity, no comments, no trailing garbage (an
/// embedded NUL byte included). A lone surrogate escape ("\udc00") decodes to U+FFFD, so that
/// the document holds only UTF-8. Errors (ErrorCode::invalid_argument) read
/// `{where}: malformed JSON at byte 12: missing a comma or "}" after an object member`,
/// `{where}: nested deeper than 64 levels at byte 130`, `{where}: larger than 16777216 bytes`
/// (no `{where}: ` prefix when `where` is empty). On failure `doc` holds null.
Result<void> parseJson(std::string_view text, Document& doc, std::string_view where,
                       const ParseLimits& limits = {});

}  // namespace crank::json

namespace crank::json {

/// True when `text` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above
/// U+10FFFF). ASCII runs are checked eight bytes at a time.
bool isValidUtf8(std::string_view text);

}  // namespace crank::json
