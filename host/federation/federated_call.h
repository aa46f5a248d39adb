#pragma once

// The crank_call of one request to an upstream: cancellation, deadline, progress, log lines and
// requests to the client go to the downstream call it serves (when there is one); an error the
// adapter sets becomes a JSON-RPC error object that names the upstream.
//
// THREADING: the adapter calls it from its threads, concurrently, while the request runs.

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <string_view>

#include "federation/upstream_link.h"
#include "mcp/tool_registry.h"
#include "plugins/plugin_call.h"

namespace crank::federation {

class FederatedCall final : public plugins::PluginCall {
public:
    using Clock = std::chrono::steady_clock;

    /// `stopping`: what ends it early (the link's openFlags() or requestFlags()).
    FederatedCall(const UpstreamLink& link, mcp::ToolCall* call, Clock::time_point deadline,
                  StopFlags stopping);

    crank_emit_result emit(std::string_view item_json) noexcept override;
    void setError(crank_error_code code, std::string_view message,
                  std::string_view details_json) noexcept override;
    void progress(double progress, double total, std::string_view message) noexcept override;
    bool isCancelled() const noexcept override;
    crank_cancel_reason cancelReason() const noexcept override;
    std::string_view logContext() const noexcept override { return context_; }
    void scrubLogLine(std::string& line) const override;
    void notify(std::string_view method, std::string_view params_json) noexcept override;
    crank_status request(std::string_view method, std::string_view params_json,
                         std::int64_t timeout_ms, std::string& answer) noexcept override;

    /// The message of errorJson(): what an operator reads.
    std::string errorMessage(std::string_view method) const;
    /// The JSON-RPC error object for a failed request: the upstream's own when it sent one.
    std::string errorJson(std::string_view method) const;

private:
    const UpstreamLink& link_;
    mcp::ToolCall* call_;
    Clock::time_point deadline_;
    StopFlags stopping_;
    std::string context_;
    mutable std::mutex mutex_;
    crank_error_code code_ = CRANK_ERR_INTERNAL;
    std::string message_;
    std::string details_;
};

}  // namespace crank::federation
