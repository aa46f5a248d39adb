#include "runtime/live_session.h"

#include "runtime/error_names.h"

namespace crank::runtime {

LiveSession::LiveSession(std::string operation_name, SecretScrubber scrubber, SafetyStage safety,
                         SessionBuffer::Limits limits)
    : operation_name_(std::move(operation_name)),
      scrubber_(std::move(scrubber)),
      safety_(std::move(safety)),
      buffer_(limits) {}

crank_emit_result LiveSession::emit(std::string_view item_json) noexcept {
    if (cancelled_.load()) {
        return CRANK_EMIT_CANCELLED;
    }
    try {
        std::string text;
        if (refused_ && refused_->raw == item_json) {
            // The item the buffer refused, emitted again after stream_resume: it passed the
            // safety stage already (a second pass would drop it as a duplicate, or sample again).
            text = std::move(refused_->screened);
            refused_.reset();
        } else {
            refused_.reset();
            const SafetyDecision d = safety_.process(item_json);
            if (!d.accepted) {
                safety_dropped_.fetch_add(1);
                return CRANK_EMIT_ACCEPTED;
            }
            text = std::string(d.text);
        }
        switch (buffer_.offer(std::move(text))) {
            case SessionBuffer::Offer::accepted:
            case SessionBuffer::Offer::dropped:
                return CRANK_EMIT_ACCEPTED;
            case SessionBuffer::Offer::accepted_pause:
                return CRANK_EMIT_ACCEPTED_PAUSE;
            case SessionBuffer::Offer::rejected_full:
                // offer() leaves a refused item as it was.
                // NOLINTNEXTLINE(bugprone-use-after-move)
                refused_ = Refused{std::string(item_json), std::move(text)};
                return CRANK_EMIT_REJECTED_FULL;
        }
    } catch (...) {  // out of memory: the item is lost, the session goes on
        safety_dropped_.fetch_add(1);
    }
    return CRANK_EMIT_ACCEPTED;
}

std::optional<std::string> LiveSession::screen(std::string_view item_json) noexcept {
    try {
        const SafetyDecision d = safety_.process(item_json);
        if (d.accepted) {
            return std::string(d.text);
        }
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory: the item is lost, counted
    }
    safety_dropped_.fetch_add(1);
    return std::nullopt;
}

void LiveSession::fail(UpstreamError error) noexcept {
    try {
        if (!scrubber_.empty()) {
            error.message = scrubber_.scrub(error.message);
        }
        const std::lock_guard<std::mutex> lock(mutex_);
        error_ = std::move(error);
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory; the failure still completes
    }
}

void LiveSession::setError(crank_error_code code, std::string_view message,
                           std::string_view details_json) noexcept {
    try {
        const std::lock_guard<std::mutex> lock(mutex_);
        error_ = UpstreamError{std::string(errorCodeName(code)),
                               scrubber_.empty() ? std::string(message) : scrubber_.scrub(message),
                               clientErrorDetails(details_json, scrubber_)};
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory; the failure still completes
    }
}

void LiveSession::complete(crank_status status) noexcept {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (completion_) {
            return;
        }
        completion_ = status;
    }
    completed_.notify_all();
    if (on_complete_) {
        try {
            on_complete_();
        } catch (...) {  // NOLINT(bugprone-empty-catch): polls and stops still see it
        }
    }
}

void LiveSession::setCursor(std::string_view cursor) noexcept {
    try {
        const std::lock_guard<std::mutex> lock(mutex_);
        upstream_cursor_.assign(cursor);
    } catch (...) {  // NOLINT(bugprone-empty-catch): a lost cursor only loses resumability
    }
}

bool LiveSession::waitForComplete(std::chrono::steady_clock::time_point until) {
    std::unique_lock<std::mutex> lock(mutex_);
    return completed_.wait_until(lock, until, [this] { return completion_.has_value(); });
}

std::optional<crank_status> LiveSession::completion() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return completion_;
}

std::optional<UpstreamError> LiveSession::error() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return error_;
}

std::string LiveSession::upstreamCursor() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return upstream_cursor_;
}

}  // namespace crank::runtime
