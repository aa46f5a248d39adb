#include "config/audit_config_reader.h"

namespace crank::config::detail {
namespace {

constexpr std::int64_t kMaxAgeDays = 36'500;  // a century: beyond it, say 0 (no age bound)
constexpr std::int64_t kMaxEvents = 1'000'000'000'000;
constexpr std::int64_t kMinCleanIntervalMs = 100;
constexpr std::int64_t kMaxCleanIntervalMs = 86'400'000;
constexpr std::int64_t kMaxSampleReads = 1'000'000;
constexpr std::int64_t kMaxQueue = 1'000'000;
constexpr std::int64_t kMaxWriteBatch = 1'000;  // store::kMaxAuditBatch
constexpr std::int64_t kMaxWriteDelayMs = 1'000;

}  // namespace

AuditConfig readAuditConfig(const Json* value, ConfigErrors& errors) {
    ObjectReader r(value, "audit", errors);
    AuditConfig a;
    a.max_age_days = r.integer("max_age_days", a.max_age_days, 0, kMaxAgeDays);
    a.max_events = r.integer("max_events", a.max_events, 0, kMaxEvents);
    a.clean_interval_ms = r.integer("clean_interval_ms", a.clean_interval_ms, kMinCleanIntervalMs,
                                    kMaxCleanIntervalMs);
    a.sample_reads = r.positiveInteger("sample_reads", a.sample_reads, kMaxSampleReads);
    a.queue_max = r.positiveInteger("queue_max", a.queue_max, kMaxQueue);
    a.write_batch = r.positiveInteger("write_batch", a.write_batch, kMaxWriteBatch);
    a.write_delay_ms = r.integer("write_delay_ms", a.write_delay_ms, 0, kMaxWriteDelayMs);
    r.finish();
    return a;
}

}  // namespace crank::config::detail
