#pragma once

// The audit entry of one tools/call of a unary or window operation (`unary.call`,
// `window.call`): which agent of which workspace called which tool, how it ended and how long it
// took, so that a mutating operation leaves a trace like the session and job actions do.

#include <cstdint>

#include "mcp/tool_registry.h"
#include "runtime/audit_log.h"
#include "runtime/operation.h"

namespace crank::runtime {

/// Appends the event for `result` of `op` called by `caller` to `log` (best effort: a refusal
/// is logged). Outcome "ok", or "error" for an isError result, whose text (already scrubbed of
/// the operation's secrets, at most 512 bytes) goes into the detail as `error`.
void auditToolCall(AuditLog& log, const mcp::Caller& caller, const Operation& op,
                   const mcp::ToolResult& result, std::int64_t elapsed_ms);

}  // namespace crank::runtime
