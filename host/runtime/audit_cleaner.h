#pragma once

// Retention of the audit log (`audit` in the config): a housekeeping thread that, at start and
// then every `interval_ms`, deletes the events older than `max_age_ms` and then the oldest events
// beyond the newest `max_events`, in batches of store::kMaxCleanupBatch. Deleting the oldest rows
// is the only change it makes, so the log stays append-only; it is the audit log's counterpart of
// the job and session cleaners.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "store/store.h"

namespace crank::runtime {

/// Milliseconds in a day (`audit.max_age_days` is in days).
inline constexpr std::int64_t kMsPerDay = 86'400'000;

class AuditCleaner {
public:
    struct Options {
        /// Events older than this go; 0: no age bound. Default: 30 days.
        std::int64_t max_age_ms = 30 * kMsPerDay;
        /// Beyond this many events the oldest go; 0: no size bound.
        std::int64_t max_events = 2'000'000;
        std::int64_t interval_ms = 60'000;  ///< between two passes
    };

    /// `store` is required and must outlive the cleaner.
    AuditCleaner(std::shared_ptr<store::Store> store, Options options);
    /// Stops the thread (see stop()).
    ~AuditCleaner();
    AuditCleaner(const AuditCleaner&) = delete;
    AuditCleaner& operator=(const AuditCleaner&) = delete;
    AuditCleaner(AuditCleaner&&) = delete;
    AuditCleaner& operator=(AuditCleaner&&) = delete;

    /// Starts the thread: one pass at once, then one every interval_ms. Does nothing when both
    /// bounds are off or it runs already.
    void start();
    /// Ends the thread; a pass in progress stops after its current batch. Idempotent.
    void stop();

    /// One pass at wall time `now_ms` (Unix ms): age first, then size. Returns how many events
    /// went. A store error ends the pass (logged); the next pass tries again.
    std::int64_t cleanOnce(std::int64_t now_ms);

private:
    void run();
    bool stopping() const;

    std::shared_ptr<store::Store> store_;
    Options options_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace crank::runtime
