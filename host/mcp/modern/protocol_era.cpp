#include "mcp/modern/protocol_era.h"

#include <utility>
#include <variant>

#include "json/json_scanner.h"
#include "util/json_string.h"

namespace crank::mcp {
namespace {

EraVerdict refused(int status, std::int64_t code, std::string message, std::string data_json = {}) {
    EraVerdict verdict;
    verdict.era = Era::modern;
    verdict.refusal = EraRefusal{status, code, std::move(message), std::move(data_json)};
    return verdict;
}

/// False when `params_json` cannot hold the 2026 claim: its key is nowhere in the text (a key
/// written with a JSON escape is read in full, to be safe).
bool mayClaim(std::string_view params_json) {
    return params_json.find(kMetaProtocolVersion) != std::string_view::npos ||
           params_json.find('\\') != std::string_view::npos;
}

/// True when params._meta has the protocolVersion key, for a _meta readRequestMeta refused.
bool claimsVersion(std::string_view params_json) {
    const Result<std::string> meta = extractMember(params_json, "_meta");
    if (!meta || meta->empty() || meta->front() != '{') {
        return false;
    }
    const Result<std::string> claim = extractMember(*meta, kMetaProtocolVersion);
    return claim && !claim->empty();
}

}  // namespace

std::string supportedVersionsJson() {
    std::string out = "[";
    for (const char* version : kModernVersions) {
        out += (out.size() > 1 ? "," : "") + jsonString(version);
    }
    return out + "]";
}

std::string unsupportedVersionData(std::string_view requested) {
    return R"({"supported":)" + supportedVersionsJson() + R"(,"requested":)" +
           jsonString(requested) + "}";
}

EraVerdict classifyPost(const ParsedBody& parsed, std::string_view protocol_header) {
    // One verdict, returned by name on every path (built in place, never moved).
    EraVerdict verdict;
    const auto refuse = [&verdict](int status, std::int64_t code, std::string message,
                                   std::string data_json = {}) {
        verdict = refused(status, code, std::move(message), std::move(data_json));
    };
    if (parsed.fatal || parsed.batch || parsed.entries.size() != 1) {
        return verdict;
    }
    if (const auto* rejection = std::get_if<JsonRpcRejection>(&parsed.entries.front());
        rejection != nullptr && modernVersionSupported(protocol_header)) {
        // A message that is not valid JSON-RPC (an id too long, a "jsonrpc" not "2.0") sent as
        // 2026-era: its own error, not the 2025 era's "initialize first".
        refuse(400, rejection->code, rejection->message);
        return verdict;
    }
    const auto* message = std::get_if<JsonRpcMessage>(&parsed.entries.front());
    if (message == nullptr ||
        (message->kind != JsonRpcKind::request && message->kind != JsonRpcKind::notification)) {
        return verdict;
    }
    const bool modern_header = modernVersionSupported(protocol_header);
    Result<RequestMeta> meta = RequestMeta{};
    if (message->kind == JsonRpcKind::request && message->method == "tools/call") {
        verdict.tool_call = parseToolCallParams(*message);
        meta = *verdict.tool_call ? Result<RequestMeta>((*verdict.tool_call)->meta)
                                  : readRequestMeta(*message);
    } else if (modern_header || mayClaim(message->params_json)) {
        meta = readRequestMeta(*message);
    }
    if (!meta) {
        // A _meta that holds the claim beside a bad member (a progress token of the wrong type)
        // is 2026-era too; one that cannot hold it is 2026-era only by the header.
        if (modern_header || claimsVersion(message->params_json)) {
            refuse(400, kInvalidParams, meta.error().message);
        }
        return verdict;
    }
    if (!meta->claims_version) {
        if (!modern_header) {
            return verdict;
        }
        verdict.era = Era::modern;
        if (message->kind == JsonRpcKind::request) {
            verdict.refusal = EraRefusal{400,
                                         kInvalidParams,
                                         "params._meta[\"" + std::string(kMetaProtocolVersion) +
                                             "\"] is required with MCP-Protocol-Version " +
                                             json::scan::describeString(protocol_header),
                                         {}};
        }
        verdict.meta = std::move(*meta);
        return verdict;
    }
    const std::string& claimed = meta->protocol_version;
    if (claimed.empty()) {
        refuse(400, kInvalidParams,
               "params._meta[\"" + std::string(kMetaProtocolVersion) +
                   "\"] must be a non-empty string");
        return verdict;
    }
    if (protocol_header.empty()) {
        refuse(400, kHeaderMismatch,
               "the MCP-Protocol-Version header is required, equal to params._meta[\"" +
                   std::string(kMetaProtocolVersion) + "\"] (" +
                   json::scan::describeString(claimed) + ")");
        return verdict;
    }
    if (protocol_header != claimed) {
        refuse(400, kHeaderMismatch,
               "MCP-Protocol-Version " + json::scan::describeString(protocol_header) +
                   " differs from params._meta[\"" + std::string(kMetaProtocolVersion) + "\"] " +
                   json::scan::describeString(claimed));
        return verdict;
    }
    if (!modernVersionSupported(claimed)) {
        refuse(400, kUnsupportedProtocolVersion,
               "unsupported protocol version " + json::scan::describeString(claimed),
               unsupportedVersionData(claimed));
        return verdict;
    }
    if (message->kind == JsonRpcKind::request) {
        if (!meta->client_capabilities) {
            refuse(400, kInvalidParams,
                   "params._meta[\"" + std::string(kMetaClientCapabilities) +
                       "\"] is required (an object; {} declares none)");
            return verdict;
        }
        if (meta->client_capabilities->json().front() != '{') {
            refuse(
                400, kInvalidParams,
                "params._meta[\"" + std::string(kMetaClientCapabilities) + "\"] must be an object");
            return verdict;
        }
    }
    verdict.era = Era::modern;
    verdict.meta = std::move(*meta);
    return verdict;
}

}  // namespace crank::mcp
