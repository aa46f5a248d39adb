#pragma once

#include <string>
#include <string_view>

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
};

/// Reads tools/call params (JSON text) in one pass over them; the error
/// (ErrorCode::invalid_argument) names the member that is wrong, for a -32602 answer.
/// `known_meta`: the `_meta` of these params when the caller has read it already (it is then
/// taken as it is, not read again).
Result<ToolCallParams> parseToolCallParams(std::string_view params_json,
                                           const RequestMeta* known_meta = nullptr);

}  // namespace crank::mcp
