#pragma once

// The routing headers of MCP 2026-07-28 over Streamable HTTP (SEP-2243): every request repeats in
// headers what its body says, so that an intermediary can route it without reading the body;
// a server that reads the body checks that the two agree.
// - `Mcp-Method`: the request's method, on every request;
// - `Mcp-Name`: `params.name` of tools/call and prompts/get, `params.uri` of resources/read,
//   `params.taskId` of tasks/get, tasks/update and tasks/cancel;
// - `Mcp-Param-{Name}`: a tools/call argument whose property in the tool's inputSchema declares
//   `"x-mcp-header": "{Name}"`.
// Header names are case-insensitive and values case-sensitive; optional whitespace around a value
// is not part of it. A value that is not plain visible ASCII is sent as `=?base64?{UTF-8}?=` (the
// prefix in lower case, as a proxy following the specification reads it); Mcp-Method never is,
// since method names are plain ASCII.
// Any disagreement, a missing header, or a malformed value is refused 400 + -32020.
//
// THREADING: pure functions.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/modern/protocol_era.h"
#include "mcp/wire/json_rpc.h"
#include "mcp/wire/param_headers.h"

namespace Poco::Net {
class NameValueCollection;
}  // namespace Poco::Net

namespace crank::mcp {

/// The value a routing header carries: optional whitespace trimmed, the `=?base64?...?=` form
/// decoded (a value without both the prefix and the suffix is literal). nullopt when the base64
/// is malformed (a character outside its alphabet, missing or misplaced padding), or a literal
/// holds a byte outside visible ASCII, space and tab.
std::optional<std::string> decodeHeaderValue(std::string_view raw);

/// The member of `params` that Mcp-Name repeats for `method` ("name", "uri", "taskId"); "" for
/// a method without one.
std::string_view nameMemberOf(std::string_view method);

/// Checks Mcp-Method (on every request) and Mcp-Name (where nameMemberOf names a member) of
/// `headers` against `message`; the refusal naming the header and what differs, nullopt when
/// they agree. A notification is checked only for the headers it carries. `target`: the value of
/// that member when the caller has read it already (nullopt: read from the params here).
std::optional<EraRefusal> checkStandardHeaders(
    const Poco::Net::NameValueCollection& headers, const JsonRpcMessage& message,
    const std::optional<std::string_view>& target = std::nullopt);

/// Checks the Mcp-Param-* headers of a tools/call against its arguments (`arguments_json`, an
/// object or "") for every header `declared` (compileParamHeaders of the tool's inputSchema,
/// done when the tool is published): a string argument must arrive as the same text, a number as a
/// JSON number of the same exact value (json::canonicalNumber), a boolean as true/false; a null or
/// absent argument must arrive with no header; an object or array there is refused, since no
/// header carries it.
/// Headers no property declares are ignored (an intermediary may add its own).
std::optional<EraRefusal> checkParamHeaders(const Poco::Net::NameValueCollection& headers,
                                            const std::vector<ParamHeader>& declared,
                                            std::string_view arguments_json);

}  // namespace crank::mcp
