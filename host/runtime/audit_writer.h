#pragma once

// Write-behind for the audit trail. A tool call, a poll or a job action hands its event to an
// AuditWriter and goes on; one thread writes the queued events in batches, one transaction per
// batch (Store::appendAuditBatch), so that the store's write lock is taken once for many calls
// instead of once per call. The queue is bounded (`audit.queue_max`): when it is full a caller
// waits for room, so the trail slows calls down before it loses an event. What is queued when
// the process is killed outright is lost: at most the events of the last few milliseconds (one
// batch in flight and what arrived during it). A clean stop writes everything queued.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "store/audit_event.h"
#include "store/store.h"

namespace crank::metrics {
class Registry;
}  // namespace crank::metrics

namespace crank::runtime {

class AuditWriter {
public:
    struct Options {
        /// Most events waiting to be written; submit() waits beyond (`audit.queue_max`).
        std::size_t queue_max = 16'384;
        /// Most events per transaction (`audit.write_batch`, at most store::kMaxAuditBatch).
        std::size_t batch_max = 500;
        /// How long the writer, woken by a first event, gathers more before it writes them
        /// (`audit.write_delay_ms`): a busy node then wakes it at most about a hundred times a
        /// second, not once per call. 0: it writes at once.
        std::chrono::milliseconds gather{10};
        /// Where written and failed events are counted; nullptr: nowhere. Must outlive the
        /// writer. (The queue depth is a gauge of app/metrics_endpoint, read from stats().)
        metrics::Registry* metrics = nullptr;
    };

    /// Counts since start, for tests and the metrics.
    struct Stats {
        std::int64_t written = 0;  ///< events the store accepted
        std::int64_t failed = 0;   ///< events lost to a store error (each logged)
        std::size_t queued = 0;    ///< events waiting now
        std::int64_t batches = 0;  ///< store transactions the writer thread made
    };

    /// `store` is required and must outlive the writer. The thread starts here.
    AuditWriter(std::shared_ptr<store::Store> store, Options options);
    /// Writes what is queued, then ends the thread (see stop()).
    ~AuditWriter();
    AuditWriter(const AuditWriter&) = delete;
    AuditWriter& operator=(const AuditWriter&) = delete;
    AuditWriter(AuditWriter&&) = delete;
    AuditWriter& operator=(AuditWriter&&) = delete;

    /// Queues `event` (its ts set now when it is 0, so a batch keeps the time each event
    /// happened). Waits while the queue is full. After stop(), writes it at once on the caller's
    /// thread.
    void submit(store::AuditEvent event);

    /// Returns once every event submitted before the call has been written or has failed: what
    /// an operator reading the trail through this node sees includes their own last calls.
    void flush();

    /// Writes what is queued and ends the thread. Idempotent.
    void stop();

    Stats stats() const;

private:
    void run();
    /// A batch worth writing at once: the largest, or a full queue.
    std::size_t fullBatch() const { return std::min(options_.batch_max, options_.queue_max); }
    /// Writes `batch` (logged and counted when the store refuses it).
    void write(std::vector<store::AuditEvent>& batch);

    std::shared_ptr<store::Store> store_;
    Options options_;
    mutable std::mutex mutex_;
    std::condition_variable work_;  ///< the writer waits for events or stop
    std::condition_variable room_;  ///< submitters wait for room, flushers for progress
    std::deque<store::AuditEvent> queue_;
    std::uint64_t submitted_ = 0;  ///< events ever queued
    std::uint64_t done_ = 0;       ///< of them, written or failed
    bool writer_idle_ = false;     ///< the writer waits for a first event: submit() wakes it
    int flushing_ = 0;             ///< flush() calls waiting: the writer gathers no longer
    bool stopping_ = false;
    Stats stats_;
    std::thread thread_;
};

}  // namespace crank::runtime
