#pragma once

// A request of a 2026-07-28 client on Streamable HTTP (SEP-2575, SEP-2243): the per-request
// `_meta` (protocol version, client info, and the client capabilities of this very request)
// merged into its params, and the routing headers every POST carries: MCP-Protocol-Version equal
// to the `_meta` version, Mcp-Method, Mcp-Name for the methods that name something (tools/call
// and prompts/get: params.name; resources/read: params.uri; tasks/get, tasks/update and
// tasks/cancel: params.taskId), and a tool's Mcp-Param-* headers (param_headers.h). A value that
// a header cannot carry as it is goes base64-wrapped, as param_headers.h says.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "param_headers.h"
#include <crank/sdk/http/exchange.hpp>

namespace crank::mcpc {

inline constexpr std::string_view kModernProtocolVersion = "2026-07-28";

/// Who the client says it is, and the version it speaks.
struct ModernClient {
    std::string protocol_version{kModernProtocolVersion};
    std::string client_name = "crank";
    std::string client_version = "0";
};

struct ModernRequest {
    std::string body;               ///< the JSON-RPC request
    sdk::http::HeaderList headers;  ///< MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*
};

/// The params member Mcp-Name mirrors for `method` ("name", "uri", "taskId"), or nullptr.
const char* nameMemberOf(std::string_view method);

/// Builds request `id` of `method`. `params_json`: a JSON object's text, or empty for none; the
/// members of its `_meta` are kept (progressToken, traceparent...), the protocol's own keys set.
/// `capabilities_json`: the client capabilities of this request (a JSON object's text; "{}" for
/// none). `mirrored`: the called tool's Mcp-Param headers (tools/call), or nullptr. False, with
/// `error`, when params or capabilities are not JSON objects, or `_meta` is not one.
bool buildModernRequest(std::int64_t id, std::string_view method, std::string_view params_json,
                        const ModernClient& client, std::string_view capabilities_json,
                        const std::vector<MirroredParam>* mirrored, ModernRequest& out,
                        std::string& error);

}  // namespace crank::mcpc
