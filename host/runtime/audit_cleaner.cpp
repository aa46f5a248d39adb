#include "runtime/audit_cleaner.h"

#include <exception>
#include <utility>

#include "log/log.h"
#include "util/clock.h"

namespace crank::runtime {

AuditCleaner::AuditCleaner(std::shared_ptr<store::Store> store, Options options)
    : store_(std::move(store)), options_(options) {}

AuditCleaner::~AuditCleaner() {
    stop();
}

void AuditCleaner::start() {
    const std::lock_guard lock(mutex_);
    if (thread_.joinable() || stopping_ || !store_ ||
        (options_.max_age_ms <= 0 && options_.max_events <= 0)) {
        return;
    }
    thread_ = std::thread([this] { run(); });
}

void AuditCleaner::stop() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

bool AuditCleaner::stopping() const {
    const std::lock_guard lock(mutex_);
    return stopping_;
}

std::int64_t AuditCleaner::cleanOnce(std::int64_t now_ms) {
    std::int64_t total = 0;
    // Each call deletes one batch in its own short transaction, so appends interleave; a batch
    // that is not full means nothing is left beyond the bound.
    const auto drain = [&](const char* bound, auto&& deleteBatch) {
        while (!stopping()) {
            auto deleted = deleteBatch();
            if (!deleted) {
                log::warn("audit: the cleanup by {} failed: {}", bound, deleted.error().message);
                return;
            }
            total += *deleted;
            if (*deleted < store::kMaxCleanupBatch) {
                return;
            }
        }
    };
    if (options_.max_age_ms > 0) {
        drain("age", [&] {
            return store_->deleteAuditBefore(now_ms - options_.max_age_ms, store::kMaxCleanupBatch);
        });
    }
    if (options_.max_events > 0) {
        drain("size", [&] {
            return store_->deleteAuditBeyond(options_.max_events, store::kMaxCleanupBatch);
        });
    }
    if (total > 0) {
        log::info("audit: {} old events deleted (retention: {} days, {} events)", total,
                  options_.max_age_ms / kMsPerDay, options_.max_events);
    }
    return total;
}

void AuditCleaner::run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        lock.unlock();
        try {
            cleanOnce(nowUnixMs());
        } catch (const std::exception& e) {
            log::error("audit: cleanup failed: {}", e.what());
        }
        lock.lock();
        wake_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms),
                       [&] { return stopping_; });
    }
}

}  // namespace crank::runtime
