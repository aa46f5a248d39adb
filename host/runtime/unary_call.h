#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "plugins/plugin_call.h"
#include "runtime/secret_scrubber.h"
#include "runtime/window_result.h"

namespace crank::mcp {
class ToolCall;
}  // namespace crank::mcp

namespace crank::runtime {

/// The host side of one unary_call: collects the response(s) the adapter emits, bounded by
/// `max_items` and `max_bytes`, and the error it reports. Cancelled when the MCP client cancels
/// (`tool_call`), crankd stops (`stopping`), or `deadline` passes. With `forward_progress`, the
/// plugin's progress goes to the client while the call runs (a polling window reports its own).
/// The operation's secrets (`scrubber`) are removed from the plugin's error message, progress
/// messages and log lines as they arrive.
class UnaryCall final : public plugins::PluginCall {
public:
    UnaryCall(std::string operation_name, SecretScrubber scrubber, mcp::ToolCall* tool_call,
              bool forward_progress, const std::atomic<bool>* stopping, std::size_t max_items,
              std::size_t max_bytes, std::chrono::steady_clock::time_point deadline);

    crank_emit_result emit(std::string_view item_json) noexcept override;
    void setError(crank_error_code code, std::string_view message,
                  std::string_view details_json) noexcept override;
    void progress(double progress, double total, std::string_view message) noexcept override;
    bool isCancelled() const noexcept override;
    crank_cancel_reason cancelReason() const noexcept override;
    void setCursor(std::string_view cursor) noexcept override;
    std::string_view logContext() const noexcept override { return operation_name_; }
    void scrubLogLine(std::string& line) const override { scrubber_.scrubInPlace(line); }

    /// Called once the adapter's unary_call returned: no more progress goes to the client.
    void close();
    /// `sink` receives every cursor the plugin sets, as it sets it (outside the call's lock).
    void setCursorSink(std::function<void(std::string_view)> sink) {
        cursor_sink_ = std::move(sink);
    }

    std::vector<std::string> takeItems();
    std::optional<UpstreamError> error() const;
    std::optional<std::string> cursor() const;
    /// The responses went past max_items or max_bytes (the rest was refused).
    bool overflowed() const;
    /// The deadline has passed.
    bool timedOut() const;
    std::uint64_t bytes() const;

private:
    std::string operation_name_;
    SecretScrubber scrubber_;
    mcp::ToolCall* tool_call_;
    bool forward_progress_;
    const std::atomic<bool>* stopping_;
    std::size_t max_items_;
    std::size_t max_bytes_;
    std::chrono::steady_clock::time_point deadline_;
    std::function<void(std::string_view)> cursor_sink_;

    mutable std::mutex mutex_;
    std::vector<std::string> items_;
    std::uint64_t bytes_ = 0;
    bool overflowed_ = false;
    bool closed_ = false;
    double last_progress_ = -1;
    std::optional<UpstreamError> error_;
    std::optional<std::string> cursor_;
};

}  // namespace crank::runtime
