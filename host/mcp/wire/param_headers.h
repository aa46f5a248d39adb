#pragma once

// The Mcp-Param-* headers a tool declares (MCP 2026-07-28, SEP-2243): an input property with
// `"x-mcp-header": "{Name}"` is mirrored by the header `Mcp-Param-{Name}`. Read from the tool's
// inputSchema once, when the tool is published, not on every call.

#include <string>
#include <string_view>
#include <vector>

namespace crank::mcp {

struct ParamHeader {
    std::string property;  ///< the argument's name
    std::string header;    ///< "Mcp-Param-" and the declared name
};

/// The headers `input_schema_json` declares, in its properties' order; none when it declares
/// none or is not an object schema with properties.
std::vector<ParamHeader> compileParamHeaders(std::string_view input_schema_json);

}  // namespace crank::mcp
