#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "plugins/plugin_call.h"
#include "runtime/safety_stage.h"
#include "runtime/secret_scrubber.h"
#include "runtime/stop_reason.h"
#include "runtime/window_result.h"

namespace crank::plugins {
class AggregatorHandle;
}  // namespace crank::plugins

namespace crank::runtime {

/// The host side of one window (the `crank_call` of its stream): every item the upstream
/// pushes is checked against the window's limits, goes through the safety stage and into the
/// aggregate, all inside emit() on the plugin's thread, so nothing is queued and memory stays
/// bounded by the aggregator's caps. The thread running the tool call waits on it (wait()) for
/// the first stop condition: the stream's complete(), a limit, the window's duration, the
/// upstream's silence, or the client's cancel.
///
/// Held by shared_ptr: when a plugin does not acknowledge a cancel in time, the reaper keeps it
/// alive until the plugin calls complete(). After stop, emit() answers CANCELLED without touching
/// the aggregate, so the aggregate can be destroyed as soon as the window has its snapshot.
///
/// The operation's secrets (`scrubber`) are removed from the errors (the plugin's and the
/// aggregator's) and from the log lines of both as they arrive, and from the snapshot, the cursor
/// and the error that finish() returns.
class WindowCollector final : public plugins::PluginCall {
public:
    struct Limits {
        std::uint64_t max_items = 0;
        std::uint64_t max_bytes = 0;
    };

    WindowCollector(std::string operation_name, SecretScrubber scrubber, SafetyStage safety,
                    const plugins::AggregatorHandle& aggregator, Limits limits);
    ~WindowCollector() override;
    WindowCollector(const WindowCollector&) = delete;
    WindowCollector& operator=(const WindowCollector&) = delete;

    /// Creates the aggregate (errors go to this call's error()). False on failure.
    bool createAggregate(std::string_view config_json);

    // PluginCall, called by the plugin from its threads.
    crank_emit_result emit(std::string_view item_json) noexcept override;
    void setError(crank_error_code code, std::string_view message,
                  std::string_view details_json) noexcept override;
    bool isCancelled() const noexcept override { return stopping_.load(); }
    void complete(crank_status status) noexcept override;
    void setCursor(std::string_view cursor) noexcept override;
    std::string_view logContext() const noexcept override { return operation_name_; }
    void scrubLogLine(std::string& line) const override { scrubber_.scrubInPlace(line); }

    /// Takes one item on the host's own thread (windows that poll a request/response upstream).
    crank_emit_result intake(std::string_view item_json) noexcept { return emit(item_json); }

    /// Stops the window for `reason` unless it has stopped already (the first reason wins).
    void stop(StopReason reason);
    /// The reason it stopped, once it has.
    std::optional<StopReason> stopReason() const;
    /// Waits until something happens (a stop, complete(), or `until`); returns at once if the
    /// window has stopped or the stream has completed.
    void waitUntil(std::chrono::steady_clock::time_point until);
    /// Waits up to `until` for complete(); true when it came.
    bool waitForComplete(std::chrono::steady_clock::time_point until);
    bool completed() const;
    /// Time of the last item or of the start, whichever is later (the silence timer).
    std::chrono::steady_clock::time_point lastActivity() const;
    std::uint64_t received() const;

    /// Folds the completion status into the stop reason: a stream that completed before any
    /// stop ended with upstream_end, or upstream_error after an error.
    void settle();
    /// The snapshot and counters, then destroys the aggregate. Call once, after stop.
    Result<WindowResult> finish(std::int64_t elapsed_ms, std::size_t writer_limit);

    std::optional<UpstreamError> error() const;
    /// The cursor after a poll whose items were all taken (ignored once an item was refused: the
    /// next window must start at the first item this one did not take).
    void setPollCursor(std::string cursor);
    /// The upstream answered (a poll that returned, even without items): resets the silence
    /// timer.
    void touch();
    /// The upstream failed (a polled window): records the error and stops with upstream_error.
    void fail(UpstreamError error);

private:
    /// The crank_call an aggregator gets: errors and logs only. accept() and snapshot() run
    /// under mutex_, so an aggregator calling emit() or set_cursor() on the window's own call
    /// would deadlock; on this one they are refused.
    class AggregateCall final : public plugins::PluginCall {
    public:
        explicit AggregateCall(WindowCollector& owner) : owner_(owner) {}
        crank_emit_result emit(std::string_view /*item_json*/) noexcept override {
            return CRANK_EMIT_CANCELLED;
        }
        void setError(crank_error_code code, std::string_view message,
                      std::string_view details_json) noexcept override {
            owner_.setError(code, message, details_json);
        }
        bool isCancelled() const noexcept override { return owner_.stopping_.load(); }
        std::string_view logContext() const noexcept override { return owner_.logContext(); }
        void scrubLogLine(std::string& line) const override { owner_.scrubLogLine(line); }

    private:
        WindowCollector& owner_;
    };

    crank_emit_result stopLocked(StopReason reason);

    std::string operation_name_;
    SecretScrubber scrubber_;
    SafetyStage safety_;
    const plugins::AggregatorHandle& aggregator_;
    Limits limits_;
    AggregateCall aggregate_call_{*this};

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::atomic<bool> stopping_{false};
    crank_aggregate* aggregate_ = nullptr;
    std::optional<StopReason> stop_reason_;
    std::optional<crank_status> completion_;
    // Apart from mutex_: an aggregator reports errors from inside accept() and snapshot(), which
    // run under mutex_. Lock order: mutex_, then error_mutex_.
    mutable std::mutex error_mutex_;
    std::optional<UpstreamError> error_;
    bool aggregate_failed_ = false;
    std::optional<std::string> cursor_;
    /// An item was refused (not taken): later cursors would skip it, so they are ignored.
    bool refused_ = false;
    std::uint64_t received_ = 0;
    std::uint64_t item_count_ = 0;
    std::uint64_t dropped_ = 0;
    std::uint64_t bytes_ = 0;
    std::atomic<std::int64_t> last_activity_ns_;
};

}  // namespace crank::runtime
