#pragma once

// `params._meta` of an MCP request, read once where the request comes in. Both protocol eras put
// the progress token and the W3C trace context there; the 2026-07-28 era also puts there what a
// 2025 client said once per session (its protocol version, capabilities, name, log level), so its
// presence is what tells the eras apart (protocol_era.h).
//
// THREADING: pure functions.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/json_scanner.h"
#include "mcp/wire/client_capabilities.h"
#include "mcp/wire/request_id.h"
#include "util/error.h"

namespace crank::mcp {

/// The `_meta` keys of MCP 2026-07-28 (SEP-2575).
inline constexpr std::string_view kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kMetaClientCapabilities =
    "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr std::string_view kMetaLogLevel = "io.modelcontextprotocol/logLevel";
inline constexpr std::string_view kMetaServerInfo = "io.modelcontextprotocol/serverInfo";

/// What a request's `params._meta` holds. Values are checked for their type only where a reader
/// needs one; JSON members stay compact text.
struct RequestMeta {
    bool present = false;  ///< params has a `_meta` object
    std::optional<RequestId> progress_token;
    /// The 2026-07-28 claim was made: `_meta` has the protocolVersion key (whatever its value).
    bool claims_version = false;
    std::string protocol_version;  ///< its value when it is a string; "" otherwise
    /// `clientCapabilities`, read once (its text kept: the era's reader checks it is an object);
    /// null when absent.
    SharedClientCapabilities client_capabilities;
    /// Compact JSON of each key when present (any type: the era's reader checks it); "" when
    /// absent.
    std::string client_info_json;
    std::string log_level_json;
    /// W3C trace context (`traceparent`, `tracestate`, `baggage`) when they are strings.
    std::string traceparent;
    std::string tracestate;
    std::string baggage;

    /// What the request declared: none when it sent no clientCapabilities.
    const SharedClientCapabilities& capabilities() const {
        return client_capabilities ? client_capabilities : noClientCapabilities();
    }
};

/// Reads `_meta` from a request's params (JSON text; "" when absent). An absent `_meta`, or
/// params that are not an object, give an empty RequestMeta. invalid_argument, naming the member,
/// when params is not valid JSON, `_meta` is not an object, or `progressToken` is neither a string
/// nor an integer.
Result<RequestMeta> readRequestMeta(std::string_view params_json);

/// The same from the text of the `_meta` object itself.
Result<RequestMeta> readMetaObject(std::string_view meta_json);

/// The same from `_meta`'s members as a scan recorded them, their spans in `text`.
Result<RequestMeta> readMetaMembers(std::string_view text,
                                    const std::vector<json::scan::RawMember>& members);

struct JsonRpcMessage;

/// readRequestMeta() of a message's params, from what the body's scan recorded when it did
/// (JsonRpcMessage::params_scan), without reading them again.
Result<RequestMeta> readRequestMeta(const JsonRpcMessage& message);

}  // namespace crank::mcp
