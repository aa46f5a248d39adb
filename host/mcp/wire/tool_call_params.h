#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/json_scanner.h"
#include "mcp/wire/request_meta.h"
#include "util/error.h"

namespace crank::mcp {

/// The members of an MRTR retry (2026-07-28) in the params of tools/call, prompts/get or
/// resources/read.
struct InputRetry {
    /// `inputResponses`: key → the answer (a JSON object). Empty when absent.
    std::map<std::string, std::string, std::less<>> responses;
    bool has_responses = false;  ///< `inputResponses` was there (even as {})
    /// `requestState`, the string as the server gave it; nullopt when absent.
    std::optional<std::string> state;
    /// True for a retry: it carries answers or a state.
    bool present() const { return has_responses || state.has_value(); }
};

/// `params` of a tools/call, read once where the request comes in.
struct ToolCallParams {
    std::string name;
    std::string arguments_json = "{}";  ///< an object, as the client wrote it; {} when absent
    /// `params.task` (2025-11-25 task-augmented call) as JSON text; empty when absent.
    std::string task_json;
    RequestMeta meta;  ///< `params._meta`: the progress token, the era's keys
    InputRetry retry;  ///< `inputResponses` and `requestState` of an MRTR retry (2026-07-28)
};

/// Reads `inputResponses` and `requestState` of an MRTR retry from `members` (the params'
/// members, in `params_json`) into `out`; the error names the member that is wrong (an
/// inputResponses that is not an object, an answer that is not one, a requestState that is not
/// a string).
Result<void> readInputRetry(std::string_view params_json,
                            const std::vector<json::scan::RawMember>& members, InputRetry& out);

/// `params` of a prompts/get or resources/read as far as MRTR needs them: what it targets (the
/// prompt's name, the resource's URI), the prompt's arguments, and the retry members.
struct CatalogTarget {
    std::string target;
    std::string arguments_json = "{}";
    InputRetry retry;
};
/// Reads them from `params_json`; the error names the member that is wrong.
Result<CatalogTarget> parseCatalogTarget(std::string_view method, std::string_view params_json);

/// Reads tools/call params (JSON text) in one pass over them; the error
/// (ErrorCode::invalid_argument) names the member that is wrong, for a -32602 answer.
/// `known_meta`: the `_meta` of these params when the caller has read it already (it is then
/// taken as it is, not read again).
Result<ToolCallParams> parseToolCallParams(std::string_view params_json,
                                           const RequestMeta* known_meta = nullptr);

struct JsonRpcMessage;

/// The same for a tools/call message, from what the body's scan recorded when it did
/// (JsonRpcMessage::params_scan): its params and `_meta` are not read again.
Result<ToolCallParams> parseToolCallParams(const JsonRpcMessage& message);

}  // namespace crank::mcp
