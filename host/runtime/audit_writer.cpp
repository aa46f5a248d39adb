#include "runtime/audit_writer.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "log/log.h"
#include "log/throttle.h"
#include "metrics/metrics.h"
#include "store/store_limits.h"
#include "util/clock.h"
#include <pthread.h>

namespace crank::runtime {
namespace {

/// Store errors are logged at most this often: a full disk refuses every batch.
log::Throttle& failureLog() {
    static log::Throttle throttle(5, std::chrono::seconds(10));
    return throttle;
}

}  // namespace

AuditWriter::AuditWriter(std::shared_ptr<store::Store> store, Options options)
    : store_(std::move(store)), options_(options) {
    options_.queue_max = std::max<std::size_t>(options_.queue_max, 1);
    options_.batch_max = std::clamp<std::size_t>(options_.batch_max, 1, store::kMaxAuditBatch);
    thread_ = std::thread([this] { run(); });
}

AuditWriter::~AuditWriter() {
    stop();
}

void AuditWriter::submit(store::AuditEvent event) {
    if (event.ts == 0) {
        event.ts = nowUnixMs();
    }
    std::unique_lock lock(mutex_);
    room_.wait(lock, [this] { return stopping_ || queue_.size() < options_.queue_max; });
    if (stopping_) {
        lock.unlock();
        std::vector<store::AuditEvent> one;
        one.push_back(std::move(event));
        write(one);
        return;
    }
    queue_.push_back(std::move(event));
    ++submitted_;
    // Woken for its first event, and again when a batch is full; in between it gathers.
    const bool wake = writer_idle_ || queue_.size() == fullBatch();
    lock.unlock();
    if (wake) {
        work_.notify_one();
    }
}

void AuditWriter::flush() {
    std::unique_lock lock(mutex_);
    const std::uint64_t target = submitted_;
    if (done_ >= target) {
        return;
    }
    ++flushing_;
    work_.notify_one();  // no more gathering: write now
    // The thread writes everything queued before it ends, so done_ gets there after stop() too.
    room_.wait(lock, [&] { return done_ >= target; });
    --flushing_;
}

void AuditWriter::stop() {
    {
        const std::lock_guard lock(mutex_);
        if (stopping_) {
            return;
        }
        stopping_ = true;
    }
    work_.notify_all();
    room_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
    room_.notify_all();
}

AuditWriter::Stats AuditWriter::stats() const {
    const std::lock_guard lock(mutex_);
    Stats s = stats_;
    s.queued = queue_.size();
    return s;
}

void AuditWriter::run() {
    pthread_setname_np(pthread_self(), "crank-audit");  // in top -H, perf and /proc/PID/task
    std::vector<store::AuditEvent> batch;
    batch.reserve(options_.batch_max);
    std::unique_lock lock(mutex_);
    for (;;) {
        writer_idle_ = true;
        work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        writer_idle_ = false;
        if (queue_.empty()) {
            return;  // stopping, and everything queued is written
        }
        if (options_.gather.count() > 0) {
            work_.wait_for(lock, options_.gather, [this] {
                return stopping_ || flushing_ > 0 || queue_.size() >= fullBatch();
            });
        }
        // Whatever arrived while the last batch was written goes in this one.
        const std::size_t n = std::min(queue_.size(), options_.batch_max);
        for (std::size_t i = 0; i < n; ++i) {
            batch.push_back(std::move(queue_.front()));
            queue_.pop_front();
        }
        lock.unlock();
        room_.notify_all();  // room for submitters that wait
        write(batch);
        lock.lock();
        ++stats_.batches;
        done_ += n;
        batch.clear();
        room_.notify_all();  // progress for flushers
    }
}

void AuditWriter::write(std::vector<store::AuditEvent>& batch) {
    auto written = store_->appendAuditBatch(batch);
    std::int64_t ok = written ? static_cast<std::int64_t>(batch.size()) : 0;
    std::int64_t failed = 0;
    if (!written && batch.size() > 1) {
        // One refused event (too long a field, say) must not take the others with it: write
        // them one by one, so that only the refused ones are lost.
        for (store::AuditEvent& event : batch) {
            if (auto one = store_->appendAudit(event); one) {
                ++ok;
            } else {
                ++failed;
                written = one.error();
            }
        }
    } else if (!written) {
        failed = 1;
    }
    if (failed > 0) {
        std::uint64_t dropped = 0;
        if (failureLog().admit(dropped)) {
            log::error("audit: {} event(s) could not be written: {}{}", failed,
                       written.error().message,
                       dropped > 0 ? " (" + std::to_string(dropped) + " such reports left out)"
                                   : std::string());
        }
    }
    {
        const std::lock_guard lock(mutex_);
        stats_.written += ok;
        stats_.failed += failed;
    }
    if (options_.metrics != nullptr) {
        if (ok > 0) {
            options_.metrics
                ->counter("crank_audit_events_written_total", "Audit events written to the store")
                .inc(static_cast<double>(ok));
        }
        if (failed > 0) {
            options_.metrics
                ->counter("crank_audit_events_failed_total",
                          "Audit events lost because the store refused them (each is logged)")
                .inc(static_cast<double>(failed));
        }
    }
}

}  // namespace crank::runtime
