#pragma once

// The headers a 2026-07-28 client mirrors from a tool call's arguments (SEP-2243): an input
// property annotated `"x-mcp-header": "Region"` is sent as `Mcp-Param-Region` on the tools/call
// POST, and `Mcp-Name` carries the tool's name. A tool whose annotations break the rules is not
// published: the server would refuse every call of it, or route it wrongly.
//
// The rules, as implemented:
// - the annotation is a non-empty RFC 9110 token (no space, colon, control or non-ASCII
//   character), unique among the tool's annotations case-insensitively;
// - on a property of type "string", "integer" or "boolean" only (a type array may add "null");
// - the property is reached from the root through `properties` only: an annotation under
//   `items`, `oneOf`, `anyOf`, `allOf`, `not`, `if`, `$defs`, `additionalProperties`... is refused;
// - bounds against a hostile schema: at most 64 annotations a tool, a name of at most 64 bytes,
//   property names on the way of at most 256 bytes;
// - values: a string as it is, an integer in decimal (at most 2^53 - 1 in magnitude), true or
//   false; null or absent: no header; a string with a byte outside visible ASCII and space, with
//   leading or trailing whitespace, or that looks like the encoded form itself, is sent as
//   `=?base64?{base64 of its UTF-8}?=`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include <crank/sdk/http/exchange.hpp>

namespace crank::mcpc {

/// One argument a tool mirrors into a header.
struct MirroredParam {
    std::vector<std::string> path;  ///< property names from the arguments object down
    std::string header;             ///< "Mcp-Param-Region"
};

/// The annotations of `input_schema` (a tool's inputSchema); nullopt, with `why` naming the
/// property and the rule, when one is invalid.
std::optional<std::vector<MirroredParam>> readMirroredParams(const rapidjson::Value& input_schema,
                                                             std::string& why);

/// `text` as a header value: as it is, or base64-wrapped when it must be (see above).
std::string headerText(std::string_view text);

/// The header value of an argument: nullopt for null, and for a type no header carries.
std::optional<std::string> paramHeaderValue(const rapidjson::Value& value);

/// Appends the Mcp-Param-* headers of `arguments` (a tools/call's arguments object).
void appendParamHeaders(const std::vector<MirroredParam>& params, const rapidjson::Value& arguments,
                        sdk::http::HeaderList& out);

}  // namespace crank::mcpc
