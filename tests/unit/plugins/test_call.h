#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/plugin_call.h"

namespace crank::plugins::testing {

/// A PluginCall that records what a plugin does through the host API. `answer` decides the
/// result of each emit() attempt (by attempt number, from 0); items are kept when taken.
class TestCall final : public PluginCall {
public:
    std::function<crank_emit_result(std::size_t attempt)> answer;

    crank_emit_result emit(std::string_view item_json) noexcept override {
        std::lock_guard lock(mutex_);
        const crank_emit_result result = answer ? answer(attempts_) : CRANK_EMIT_ACCEPTED;
        ++attempts_;
        if (result == CRANK_EMIT_ACCEPTED || result == CRANK_EMIT_ACCEPTED_PAUSE) {
            items_.emplace_back(item_json);
        }
        last_result_ = result;
        changed_.notify_all();
        return result;
    }
    void setError(crank_error_code code, std::string_view message,
                  std::string_view details_json) noexcept override {
        std::lock_guard lock(mutex_);
        error_code_ = code;
        error_message_ = message;
        error_details_ = details_json;
    }
    void progress(double progress, double /*total*/,
                  std::string_view /*message*/) noexcept override {
        std::lock_guard lock(mutex_);
        last_progress_ = progress;
    }
    bool isCancelled() const noexcept override { return cancelled_.load(); }
    void complete(crank_status status) noexcept override {
        std::lock_guard lock(mutex_);
        completions_.push_back(status);
        changed_.notify_all();
    }
    void setCursor(std::string_view cursor) noexcept override {
        std::lock_guard lock(mutex_);
        cursor_ = cursor;
    }
    std::string_view logContext() const noexcept override { return "test_operation"; }

    void cancel() { cancelled_ = true; }

    /// Waits (up to 10 s) until `ready` holds; false on timeout.
    bool waitUntil(const std::function<bool(const TestCall&)>& ready) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return ready(*this); });
    }

    // Accessors for use inside waitUntil (lock held) or after the plugin is done.
    const std::vector<std::string>& itemsUnlocked() const { return items_; }
    std::size_t attemptsUnlocked() const { return attempts_; }
    const std::vector<crank_status>& completionsUnlocked() const { return completions_; }

    std::vector<std::string> items() {
        std::lock_guard lock(mutex_);
        return items_;
    }
    std::vector<crank_status> completions() {
        std::lock_guard lock(mutex_);
        return completions_;
    }
    std::optional<crank_error_code> errorCode() {
        std::lock_guard lock(mutex_);
        return error_code_;
    }
    std::string errorMessage() {
        std::lock_guard lock(mutex_);
        return error_message_;
    }
    std::string cursor() {
        std::lock_guard lock(mutex_);
        return cursor_;
    }
    double lastProgress() {
        std::lock_guard lock(mutex_);
        return last_progress_;
    }

private:
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::atomic<bool> cancelled_{false};
    std::size_t attempts_ = 0;
    std::vector<std::string> items_;
    crank_emit_result last_result_ = CRANK_EMIT_ACCEPTED;
    std::vector<crank_status> completions_;
    std::optional<crank_error_code> error_code_;
    std::string error_message_;
    std::string error_details_;
    std::string cursor_;
    double last_progress_ = 0;
};

/// A request for `operation` with `request_json` (everything else empty).
inline crank_request makeRequest(std::string_view operation, std::string_view request_json) {
    crank_request request{};
    request.struct_size = sizeof request;
    request.operation_name = {operation.data(), operation.size()};
    request.request_json = {request_json.data(), request_json.size()};
    return request;
}

}  // namespace crank::plugins::testing
