#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "plugins/plugin_call.h"
#include "runtime/safety_stage.h"
#include "runtime/secret_scrubber.h"
#include "runtime/session_buffer.h"
#include "runtime/window_result.h"

namespace crank::runtime {

/// The host side of one session's stream (the `crank_call` its plugin emits into): every item
/// goes through the safety stage into the session's bounded buffer; the buffer's answer becomes
/// the emit result (pause, rejected-full). Polls read the buffer from request threads.
class LiveSession final : public plugins::PluginCall {
public:
    LiveSession(std::string operation_name, SecretScrubber scrubber, SafetyStage safety,
                SessionBuffer::Limits limits);

    // PluginCall, called by the plugin from its threads.
    crank_emit_result emit(std::string_view item_json) noexcept override;
    void setError(crank_error_code code, std::string_view message,
                  std::string_view details_json) noexcept override;
    bool isCancelled() const noexcept override { return cancelled_.load(); }
    void complete(crank_status status) noexcept override;
    void setCursor(std::string_view cursor) noexcept override;
    std::string_view logContext() const noexcept override { return operation_name_; }
    void scrubLogLine(std::string& line) const override { scrubber_.scrubInPlace(line); }

    /// Called once, on the completing thread and outside every lock of this object, right after
    /// complete() recorded the status. Set it before the stream starts.
    void onComplete(std::function<void()> callback) { on_complete_ = std::move(callback); }

    /// The safety stage alone, for a host-run producer (PolledStream) that offers items to the
    /// buffer itself, so that an item it must offer again after a pause is screened only once:
    /// the item as the stage passed it, or nullopt when the stage dropped it (counted).
    /// Same threading as emit(): one producer.
    std::optional<std::string> screen(std::string_view item_json) noexcept;
    /// Records why the stream failed (a host-run producer; a plugin calls setError).
    void fail(UpstreamError error) noexcept;

    SessionBuffer& buffer() { return buffer_; }
    /// Asks the plugin to stop (is_cancelled, and emit answers cancelled).
    void cancel() { cancelled_.store(true); }
    /// Waits up to `until` for complete(); true when it came.
    bool waitForComplete(std::chrono::steady_clock::time_point until);
    std::optional<crank_status> completion() const;
    std::optional<UpstreamError> error() const;
    /// Items the safety stage dropped (malformed, duplicates, sampled out).
    std::uint64_t safetyDropped() const { return safety_dropped_.load(); }
    std::string upstreamCursor() const;

private:
    std::string operation_name_;
    SecretScrubber scrubber_;
    /// The last item the buffer refused (REJECTED_FULL): the plugin emits it again after
    /// stream_resume, and it must not pass the safety stage twice. Emitting thread only.
    struct Refused {
        std::string raw;
        std::string screened;
    };
    std::optional<Refused> refused_;
    SafetyStage safety_;  // used only on the emitting thread (one producer per call)
    SessionBuffer buffer_;
    std::atomic<bool> cancelled_{false};
    std::atomic<std::uint64_t> safety_dropped_{0};
    mutable std::mutex mutex_;
    std::condition_variable completed_;
    std::optional<crank_status> completion_;
    std::optional<UpstreamError> error_;
    std::string upstream_cursor_;
    std::function<void()> on_complete_;
};

}  // namespace crank::runtime
