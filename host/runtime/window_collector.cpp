#include "runtime/window_collector.h"

#include "log/log.h"
#include "plugins/aggregator_handle.h"
#include "plugins/plugin_writer.h"
#include "runtime/error_names.h"

namespace crank::runtime {
namespace {

std::int64_t steadyNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

WindowCollector::WindowCollector(std::string operation_name, SecretScrubber scrubber,
                                 SafetyStage safety, const plugins::AggregatorHandle& aggregator,
                                 Limits limits)
    : operation_name_(std::move(operation_name)),
      scrubber_(std::move(scrubber)),
      safety_(std::move(safety)),
      aggregator_(aggregator),
      limits_(limits),
      last_activity_ns_(steadyNs()) {}

WindowCollector::~WindowCollector() {
    if (aggregate_ != nullptr) {
        aggregator_.destroy(aggregate_);
    }
}

bool WindowCollector::createAggregate(std::string_view config_json) {
    crank_aggregate* aggregate = aggregator_.create(config_json, aggregate_call_);
    std::lock_guard lock(mutex_);
    aggregate_ = aggregate;
    return aggregate_ != nullptr;
}

crank_emit_result WindowCollector::stopLocked(StopReason reason) {
    if (!stop_reason_) {
        stop_reason_ = reason;
        stopping_.store(true);
        changed_.notify_all();
    }
    return CRANK_EMIT_CANCELLED;
}

crank_emit_result WindowCollector::emit(std::string_view item_json) noexcept {
    try {
        std::lock_guard lock(mutex_);
        if (stop_reason_ || completion_ || aggregate_ == nullptr) {
            refused_ = true;
            return CRANK_EMIT_CANCELLED;
        }
        // Limits on what is read from the upstream: the item that would pass max_bytes is not
        // taken; the item that reaches max_items is the last one taken.
        if (item_json.size() > limits_.max_bytes - bytes_) {
            refused_ = true;
            return stopLocked(StopReason::max_bytes);
        }
        ++received_;
        bytes_ += item_json.size();
        last_activity_ns_.store(steadyNs(), std::memory_order_relaxed);
        const SafetyDecision decision = safety_.process(item_json);
        if (!decision.accepted) {
            ++dropped_;
        } else if (aggregator_.accept(aggregate_, decision.text) == CRANK_OK) {
            ++item_count_;
        } else {
            aggregate_failed_ = true;
            refused_ = true;
            std::lock_guard errorLock(error_mutex_);
            if (!error_) {
                error_ = UpstreamError{"internal", "the aggregator refused an item"};
            }
            return stopLocked(StopReason::upstream_error);
        }
        if (received_ >= limits_.max_items) {
            stopLocked(StopReason::max_items);
        }
        return CRANK_EMIT_ACCEPTED;
    } catch (...) {
        return CRANK_EMIT_CANCELLED;
    }
}

void WindowCollector::setError(crank_error_code code, std::string_view message,
                               std::string_view details_json) noexcept {
    try {
        UpstreamError error{std::string(errorCodeName(code)), scrubber_.scrub(message),
                            clientErrorDetails(details_json, scrubber_)};
        std::lock_guard lock(error_mutex_);
        error_ = std::move(error);
    } catch (...) {
        // Out of memory: the stop reason still says upstream_error.
    }
}

void WindowCollector::complete(crank_status status) noexcept {
    std::lock_guard lock(mutex_);
    if (!completion_) {
        completion_ = status;
        changed_.notify_all();
    }
}

void WindowCollector::setCursor(std::string_view cursor) noexcept {
    try {
        std::lock_guard lock(mutex_);
        // A cursor set after the last item taken still counts (plugins set it after emit); one
        // set after a refused item would skip that item on resume.
        if (!refused_) {
            cursor_ = std::string(cursor);
        }
    } catch (...) {
        // A lost cursor only means the next window starts earlier.
    }
}

void WindowCollector::setPollCursor(std::string cursor) {
    std::lock_guard lock(mutex_);
    if (!refused_) {
        cursor_ = std::move(cursor);
    }
}

void WindowCollector::fail(UpstreamError error) {
    scrubber_.scrubInPlace(error.message);
    {
        std::lock_guard lock(error_mutex_);
        error_ = std::move(error);
    }
    stop(StopReason::upstream_error);
}

void WindowCollector::touch() {
    last_activity_ns_.store(steadyNs(), std::memory_order_relaxed);
}

void WindowCollector::stop(StopReason reason) {
    std::lock_guard lock(mutex_);
    stopLocked(reason);
}

std::optional<StopReason> WindowCollector::stopReason() const {
    std::lock_guard lock(mutex_);
    return stop_reason_;
}

void WindowCollector::waitUntil(std::chrono::steady_clock::time_point until) {
    std::unique_lock lock(mutex_);
    changed_.wait_until(lock, until, [this] { return stop_reason_ || completion_; });
}

bool WindowCollector::waitForComplete(std::chrono::steady_clock::time_point until) {
    std::unique_lock lock(mutex_);
    return changed_.wait_until(lock, until, [this] { return completion_.has_value(); });
}

bool WindowCollector::completed() const {
    std::lock_guard lock(mutex_);
    return completion_.has_value();
}

std::chrono::steady_clock::time_point WindowCollector::lastActivity() const {
    return std::chrono::steady_clock::time_point(
        std::chrono::nanoseconds(last_activity_ns_.load(std::memory_order_relaxed)));
}

std::uint64_t WindowCollector::received() const {
    std::lock_guard lock(mutex_);
    return received_;
}

void WindowCollector::settle() {
    std::lock_guard lock(mutex_);
    if (stop_reason_ || !completion_) {
        return;
    }
    switch (*completion_) {
        case CRANK_OK:
            stopLocked(StopReason::upstream_end);
            break;
        case CRANK_CANCELLED:
            stopLocked(StopReason::cancelled);
            break;
        case CRANK_ERROR:
        default: {
            std::lock_guard errorLock(error_mutex_);
            if (!error_) {
                error_ = UpstreamError{"internal",
                                       "the plugin ended the stream with an error "
                                       "but did not say which"};
            }
            stopLocked(StopReason::upstream_error);
            break;
        }
    }
}

Result<WindowResult> WindowCollector::finish(std::int64_t elapsed_ms, std::size_t writer_limit) {
    std::lock_guard lock(mutex_);
    stopping_.store(true);
    if (!stop_reason_) {
        stopLocked(StopReason::cancelled);
    }
    WindowResult r;
    r.item_count = item_count_;
    r.dropped_count = dropped_;
    r.bytes = bytes_;
    r.stop_reason = *stop_reason_;
    r.cursor = cursor_;
    if (r.cursor) {
        scrubber_.scrubInPlace(*r.cursor);
    }
    r.elapsed_ms = elapsed_ms;
    const std::optional<UpstreamError> error = this->error();
    if (*stop_reason_ == StopReason::upstream_error) {
        r.error = error;
    }
    if (aggregate_failed_ || aggregate_ == nullptr) {
        return Error{ErrorCode::internal,
                     "the aggregator \"" + aggregator_.name() +
                         "\" failed: " + (error ? error->message : std::string("no reason given"))};
    }
    plugins::PluginWriter writer(writer_limit);
    const crank_status status = aggregator_.snapshot(aggregate_, writer);
    aggregator_.destroy(aggregate_);
    aggregate_ = nullptr;
    const std::optional<UpstreamError> snapshotError = this->error();
    if (status != CRANK_OK || writer.overflowed()) {
        return Error{ErrorCode::internal,
                     writer.overflowed()
                         ? "the aggregator's result is larger than max_result_bytes allows"
                         : "the aggregator \"" + aggregator_.name() + "\" failed to write its " +
                               "result" +
                               (snapshotError ? ": " + snapshotError->message : std::string())};
    }
    // Scrubbed before the result is rendered, so that max_result_bytes still bounds it.
    r.aggregate_json = scrubber_.scrubJson(writer.text());
    return r;
}

std::optional<UpstreamError> WindowCollector::error() const {
    std::lock_guard lock(error_mutex_);
    return error_;
}

}  // namespace crank::runtime
