#pragma once

// Which protocol era one POST to the MCP endpoint belongs to (MCP 2026-07-28, SEP-2575; the
// TypeScript SDK's classifyInboundRequest). Both eras share the endpoint: a request whose
// `params._meta` claims a protocol version is of the stateless 2026-07-28 era, whatever its
// method; so is any request sent with a 2026-07-28 MCP-Protocol-Version header, which then must
// carry the claim. Everything else (initialize, Mcp-Session-Id traffic, batches, responses the
// client posts, bodies that are not JSON-RPC) is 2025-era, answered as before.
//
// THREADING: pure functions.

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "mcp/wire/json_rpc.h"
#include "mcp/wire/request_meta.h"
#include "mcp/wire/tool_call_params.h"
#include "util/error.h"

namespace crank::mcp {

/// 2026-07-28-era protocol versions served, newest first.
inline constexpr const char* kModernVersions[] = {"2026-07-28"};

/// Error codes of MCP 2026-07-28 (SEP-2322, SEP-2575).
inline constexpr std::int64_t kHeaderMismatch = -32020;
inline constexpr std::int64_t kMissingRequiredClientCapability = -32021;
inline constexpr std::int64_t kUnsupportedProtocolVersion = -32022;

/// True when `version` is one of kModernVersions.
inline bool modernVersionSupported(std::string_view version) {
    return std::any_of(std::begin(kModernVersions), std::end(kModernVersions),
                       [&](const char* v) { return version == v; });
}

/// kModernVersions as a JSON array (server/discover's supportedVersions).
std::string supportedVersionsJson();

/// {"supported":[...],"requested":REQUESTED}: the data of a -32022 error (`requested` echoed
/// whole: the client's own claim, bounded by the body limit).
std::string unsupportedVersionData(std::string_view requested);

enum class Era { legacy, modern };

/// Why a 2026-era request is refused before any method runs: an HTTP status and the JSON-RPC
/// error of the body (with the request's id).
struct EraRefusal {
    int status = 400;
    std::int64_t code = kInvalidParams;
    std::string message;
    std::string data_json;  ///< "" when none
};

/// The verdict for one POST body.
struct EraVerdict {
    Era era = Era::legacy;
    /// A 2026-era request: its `_meta`, read once (empty for a refused one).
    RequestMeta meta;
    /// A 2026-era request that breaks the era's envelope rules; nullopt when it may go on.
    std::optional<EraRefusal> refusal;
    /// A tools/call request of either era: its params, read once here, for the era and for the
    /// call (its error, when they are wrong, is the call's -32602).
    std::optional<Result<ToolCallParams>> tool_call;
};

/// Classifies `parsed` (a POST body) sent with MCP-Protocol-Version `protocol_header` ("" when
/// absent). For a 2026-era request it also checks what every such request must carry, in the
/// order the conformance suite expects: `_meta` readable; the protocolVersion claim a string; the
/// header present and equal to it (-32020); the version served (-32022, its data naming the
/// supported ones); the clientCapabilities key an object (-32602). A notification with a
/// 2026-era header and no claim is 2026-era and is accepted (202) as it is. Params that cannot
/// hold the claim (its key is not in their text) are not read at all, but a tools/call's, which
/// are read once into `tool_call`.
EraVerdict classifyPost(const ParsedBody& parsed, std::string_view protocol_header);

}  // namespace crank::mcp
