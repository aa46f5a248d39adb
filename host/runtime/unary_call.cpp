#include "runtime/unary_call.h"

#include <optional>

#include "mcp/tool_registry.h"
#include "runtime/error_names.h"

namespace crank::runtime {

UnaryCall::UnaryCall(std::string operation_name, SecretScrubber scrubber, mcp::ToolCall* tool_call,
                     bool forward_progress, const std::atomic<bool>* stopping,
                     std::size_t max_items, std::size_t max_bytes,
                     std::chrono::steady_clock::time_point deadline)
    : operation_name_(std::move(operation_name)),
      scrubber_(std::move(scrubber)),
      tool_call_(tool_call),
      forward_progress_(forward_progress),
      stopping_(stopping),
      max_items_(max_items),
      max_bytes_(max_bytes),
      deadline_(deadline) {}

crank_emit_result UnaryCall::emit(std::string_view item_json) noexcept {
    try {
        std::lock_guard lock(mutex_);
        if (closed_ || overflowed_) {
            return CRANK_EMIT_CANCELLED;
        }
        if (items_.size() >= max_items_ || item_json.size() > max_bytes_ - bytes_) {
            overflowed_ = true;
            return CRANK_EMIT_CANCELLED;
        }
        items_.emplace_back(item_json);
        bytes_ += item_json.size();
        return CRANK_EMIT_ACCEPTED;
    } catch (...) {
        return CRANK_EMIT_CANCELLED;
    }
}

void UnaryCall::setError(crank_error_code code, std::string_view message,
                         std::string_view details_json) noexcept {
    try {
        UpstreamError error{std::string(errorCodeName(code)), scrubber_.scrub(message),
                            clientErrorDetails(details_json, scrubber_)};
        std::lock_guard lock(mutex_);
        error_ = std::move(error);
    } catch (...) {
        // Out of memory: the call still fails, with a generic message.
    }
}

void UnaryCall::progress(double progress, double total, std::string_view message) noexcept {
    try {
        std::lock_guard lock(mutex_);
        // notifications/progress must grow; the client never sees a late or repeated value.
        if (closed_ || !forward_progress_ || tool_call_ == nullptr || progress <= last_progress_) {
            return;
        }
        last_progress_ = progress;
        const std::optional<double> known = total < 0 ? std::nullopt : std::optional<double>(total);
        if (scrubber_.empty()) {
            tool_call_->progress(progress, known, message);
        } else {
            tool_call_->progress(progress, known, scrubber_.scrub(message));
        }
    } catch (...) {
        // Progress is best effort.
    }
}

bool UnaryCall::isCancelled() const noexcept {
    if (std::chrono::steady_clock::now() >= deadline_ ||
        (stopping_ != nullptr && stopping_->load())) {
        return true;
    }
    std::lock_guard lock(mutex_);
    return closed_ || (tool_call_ != nullptr && tool_call_->cancelled());
}

crank_cancel_reason UnaryCall::cancelReason() const noexcept {
    if (!isCancelled()) {
        return CRANK_CANCEL_NONE;
    }
    if (std::chrono::steady_clock::now() >= deadline_) {
        return CRANK_CANCEL_DEADLINE;
    }
    std::lock_guard lock(mutex_);
    if (!closed_ && tool_call_ != nullptr && tool_call_->stoppingForRestart()) {
        return CRANK_CANCEL_SHUTDOWN;
    }
    return CRANK_CANCEL_REQUESTED;
}

void UnaryCall::setCursor(std::string_view cursor) noexcept {
    try {
        {
            std::lock_guard lock(mutex_);
            cursor_ = std::string(cursor);
        }
        if (cursor_sink_) {
            cursor_sink_(cursor);
        }
    } catch (...) {
        // A lost cursor only means the next call starts from the beginning.
    }
}

void UnaryCall::close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
}

std::vector<std::string> UnaryCall::takeItems() {
    std::lock_guard lock(mutex_);
    return std::move(items_);
}

std::optional<UpstreamError> UnaryCall::error() const {
    std::lock_guard lock(mutex_);
    return error_;
}

std::optional<std::string> UnaryCall::cursor() const {
    std::lock_guard lock(mutex_);
    return cursor_;
}

bool UnaryCall::overflowed() const {
    std::lock_guard lock(mutex_);
    return overflowed_;
}

bool UnaryCall::timedOut() const {
    return std::chrono::steady_clock::now() >= deadline_;
}

std::uint64_t UnaryCall::bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
}

}  // namespace crank::runtime
