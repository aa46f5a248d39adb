#include "runtime/stream_reaper.h"

#include <chrono>

#include "log/log.h"
#include "plugins/adapter_handle.h"
#include "runtime/window_collector.h"

namespace crank::runtime {
namespace {

constexpr auto kCheckInterval = std::chrono::milliseconds(100);
constexpr auto kShutdownGrace = std::chrono::seconds(2);

}  // namespace

StreamReaper::StreamReaper(std::size_t capacity)
    : capacity_(capacity), thread_([this] { run(); }) {}

StreamReaper::~StreamReaper() {
    shutdown(kShutdownGrace);
}

std::size_t StreamReaper::shutdown(std::chrono::milliseconds grace) {
    {
        std::lock_guard lock(mutex_);
        if (shut_down_) {
            return abandoned_;
        }
        shut_down_ = true;
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
    const auto deadline = std::chrono::steady_clock::now() + grace;
    std::lock_guard lock(mutex_);
    for (Entry& e : entries_) {
        e.adapter->streamCancel(e.stream);
        if (e.call->waitForComplete(deadline)) {
            e.adapter->streamDestroy(e.stream);
        } else {
            log::error(
                "a stream of operation \"{}\" (plugin \"{}\") never completed after its "
                "cancel; it is abandoned at shutdown",
                e.call->logContext(), e.adapter->pluginName());
            // The plugin's thread may still call into the call: it must never be freed.
            new std::shared_ptr<WindowCollector>(std::move(e.call));  // NOLINT: deliberate leak
            ++abandoned_;
        }
    }
    entries_.clear();
    return abandoned_;
}

void StreamReaper::adopt(std::shared_ptr<WindowCollector> call,
                         const plugins::AdapterHandle& adapter, crank_stream* stream) {
    std::lock_guard lock(mutex_);
    if (shut_down_ || entries_.size() >= capacity_) {
        log::error(
            "a stream of operation \"{}\" did not complete after its cancel and {} others "
            "are waiting already; it is leaked (the plugin \"{}\" ignores cancels)",
            call->logContext(), entries_.size(), adapter.pluginName());
        // Keep the call alive forever: the plugin may still call into it.
        new std::shared_ptr<WindowCollector>(std::move(call));  // NOLINT: deliberate leak
        ++abandoned_;
        return;
    }
    log::warn(
        "a stream of operation \"{}\" did not complete within its cancel grace; it will be "
        "destroyed when the plugin \"{}\" completes it",
        call->logContext(), adapter.pluginName());
    entries_.push_back(Entry{std::move(call), &adapter, stream});
    wake_.notify_all();
}

std::size_t StreamReaper::pending() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

void StreamReaper::reapCompleted(std::vector<Entry>& entries) {
    for (auto it = entries.begin(); it != entries.end();) {
        if (it->call->completed()) {
            it->adapter->streamDestroy(it->stream);
            it = entries.erase(it);
        } else {
            ++it;
        }
    }
}

void StreamReaper::run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        wake_.wait_for(lock, kCheckInterval);
        std::vector<Entry> entries = std::move(entries_);
        entries_.clear();
        lock.unlock();
        reapCompleted(entries);
        lock.lock();
        for (Entry& e : entries) {
            entries_.push_back(std::move(e));
        }
    }
}

}  // namespace crank::runtime
