#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "mcp/endpoint_access.h"
#include "mcp/legacy/mcp_session.h"
#include "mcp/request_scope.h"
#include "mcp/tool_registry.h"
#include "mcp/wire/request_id.h"

namespace crank::mcp {

/// The ToolCall given to a tool called in a 2025-era MCP session: cancellation from the session's
/// in-flight table, progress and log notifications onto the request's stream (or the session's
/// standalone stream), and requests to the client (sampling, elicitation, roots) on the request's
/// stream, answered by a later POST of the session.
class LegacyToolCall final : public ToolCall {
public:
    /// Registers request `id` as in flight in the session (notifications/cancelled finds it
    /// there) until destroyed. `stream`: the SSE stream the request is answered on; nullopt for
    /// a JSON answer (no progress then, logs go to the standalone stream, nothing can be asked of
    /// the client).
    LegacyToolCall(std::shared_ptr<McpSession> session, std::optional<std::uint64_t> stream,
                   std::optional<RequestId> progressToken, const RequestId& id, Caller caller);
    ~LegacyToolCall() override;
    LegacyToolCall(const LegacyToolCall&) = delete;
    LegacyToolCall& operator=(const LegacyToolCall&) = delete;

    Caller caller() const override { return caller_; }
    bool cancelled() const override { return cancelled_->load(); }
    bool progressRequested() const override { return progressToken_.has_value(); }
    ClientAnswer requestClient(std::string_view method, std::string_view paramsJson,
                               std::chrono::milliseconds timeout) override;
    void progress(double progress, std::optional<double> total, std::string_view message) override;
    void log(LogLevel level, std::string_view logger, std::string_view dataJson) override;
    bool clientDeclares(std::string_view capability) const override;
    std::optional<LogLevel> logLevel() const override;

private:
    std::shared_ptr<McpSession> session_;
    std::optional<std::uint64_t> stream_;
    std::optional<RequestId> progressToken_;
    std::string key_;  ///< the request's id as JSON text: its entry in the in-flight table
    std::shared_ptr<std::atomic<bool>> cancelled_;
    Caller caller_;
};

/// A request of a 2025-era session, as the method table sees it: its Who, and SessionToolCalls
/// on the stream it is answered on (none for a JSON answer).
class LegacyScope final : public RequestScope {
public:
    LegacyScope(std::shared_ptr<McpSession> session, const Who& who,
                std::optional<std::uint64_t> stream, bool shows_task_support)
        : session_(std::move(session)),
          who_(who),
          stream_(stream),
          shows_task_support_(shows_task_support) {}

    const Who& who() const override { return who_; }
    std::unique_ptr<ToolCall> beginCall(const RequestId& id,
                                        std::optional<RequestId> progress_token) override {
        return std::make_unique<LegacyToolCall>(session_, stream_, std::move(progress_token), id,
                                                who_.caller());
    }
    std::string sessionId() const override { return session_->id(); }
    bool sessionEnded() const override { return session_->ended(); }
    bool showsTaskSupport() const override { return shows_task_support_; }
    /// The 2025 era has no rounds on the wire: the client is asked on the call's stream.
    InputStep inputRequired(const InputNeed& need, ToolCall& call, std::string_view /*tool*/,
                            std::chrono::milliseconds wait) override {
        return askClient(need, call, wait);
    }

private:
    std::shared_ptr<McpSession> session_;
    const Who& who_;
    std::optional<std::uint64_t> stream_;
    bool shows_task_support_;
};

/// True when the session's client declared a capability that lets a server ask it something
/// during a call (sampling, elicitation, roots).
bool clientCanBeAsked(const McpSession& session);

}  // namespace crank::mcp
