#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "mcp/endpoint_access.h"
#include "mcp/input_rounds.h"
#include "mcp/tool_registry.h"
#include "mcp/wire/request_id.h"

namespace crank::mcp {

/// What the method table needs of the transport one request came by: who is calling, and the
/// running side of a call. A 2025-era session and a stateless 2026-era request each give their
/// own; the methods themselves do not know which era they serve.
class RequestScope {
public:
    virtual ~RequestScope() = default;

    virtual const Who& who() const = 0;

    /// The running side of request `id` while a tool or a catalog method runs: its cancellation,
    /// progress (with `progress_token`), log notifications and requests to the client. The
    /// request counts as in flight until the returned call is destroyed.
    virtual std::unique_ptr<ToolCall> beginCall(const RequestId& id,
                                                std::optional<RequestId> progress_token) = 0;

    /// The MCP session the request belongs to (catalog subscriptions are kept per session); ""
    /// in the stateless era.
    virtual std::string sessionId() const { return {}; }
    /// True once the 2025 session of the request has ended (deleted or expired meanwhile).
    virtual bool sessionEnded() const { return false; }

    /// tools/list shows `execution.taskSupport` (2025-11-25 sessions with Tasks).
    virtual bool showsTaskSupport() const { return false; }

    /// A run of tool `tool` (with `call`) answered `need` (ToolResult::input, MRTR; the method
    /// table has checked it is well formed): the request's answer (2026: an input_required
    /// result), or the answers the tool runs again with (2025: the client was asked on the
    /// call's stream, each answer awaited at most `wait`).
    virtual InputStep inputRequired(const InputNeed& need, ToolCall& call, std::string_view tool,
                                    std::chrono::milliseconds wait) = 0;

    /// The request's W3C trace context (set by its transport), given to every call it begins.
    const TraceContext& trace() const { return trace_; }
    void setTrace(TraceContext trace) { trace_ = std::move(trace); }

private:
    TraceContext trace_;
};

}  // namespace crank::mcp
