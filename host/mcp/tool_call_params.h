#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/json_scanner.h"
#include "mcp/request_meta.h"
#include "util/error.h"

namespace crank::mcp {

/// `params` of a tools/call, read once where the request comes in.
struct ToolCallParams {
    std::string name;
    std::string arguments_json = "{}";  ///< an object, as the client wrote it; {} when absent
    /// `params.task` (2025-11-25 task-augmented call) as JSON text; empty when absent.
    std::string task_json;
    RequestMeta meta;  ///< `params._meta`: the progress token, the era's keys
    /// `params.inputResponses` of an MRTR retry (2026-07-28): key → the answer (a JSON object).
    /// Empty when absent.
    std::map<std::string, std::string, std::less<>> input_responses;
    bool has_input_responses = false;  ///< `inputResponses` was there (even as {})
    /// `params.requestState` of an MRTR retry, the string as the server gave it; nullopt when
    /// absent.
    std::optional<std::string> request_state;
};

/// Reads `inputResponses` and `requestState` of an MRTR retry from `members` (the params'
/// members, in `params_json`) into `out`; the error names the member that is wrong (an
/// inputResponses that is not an object, an answer that is not one, a requestState that is not
/// a string).
Result<void> readInputRetry(std::string_view params_json,
                            const std::vector<scan::RawMember>& members, ToolCallParams& out);

/// Reads tools/call params (JSON text) in one pass over them; the error
/// (ErrorCode::invalid_argument) names the member that is wrong, for a -32602 answer.
/// `known_meta`: the `_meta` of these params when the caller has read it already (it is then
/// taken as it is, not read again).
Result<ToolCallParams> parseToolCallParams(std::string_view params_json,
                                           const RequestMeta* known_meta = nullptr);

}  // namespace crank::mcp
