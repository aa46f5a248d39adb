#pragma once

// The one way the runtime writes its audit trail: sessions, jobs and unary and window tool calls
// all append through an AuditLog, which applies the sampling of high-rate reads (`audit.
// sample_reads`) before the event reaches the store, directly or through an AuditWriter's
// write-behind queue.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "runtime/audit_writer.h"
#include "store/audit_event.h"
#include "store/store.h"
#include "util/error.h"

namespace crank::runtime {

/// Appends audit events to the store, sampling the successful reads.
///
/// Sampling: of the successful (`outcome` "ok") `session.poll` and `job.status` events of one
/// (workspace, agent, action), the 1st, the (N+1)th, the (2N+1)th... are recorded, N being
/// `sample_reads`; each recorded one says so in its detail (`"sample_every": N`). Failed reads
/// and every other action (starts, stops, cancels, results, tool calls) are always recorded.
/// The counters are one per agent and action, so a busy agent never hides a quiet one's reads.
///
/// THREADING: append() may be called from any thread.
class AuditLog {
public:
    /// `store` may be null: append() then records nothing. `sample_reads` >= 1 (1 records all).
    /// With a `writer`, events are queued to it rather than written by the caller.
    explicit AuditLog(std::shared_ptr<store::Store> store, std::int64_t sample_reads = 1,
                      std::shared_ptr<AuditWriter> writer = nullptr);

    /// True for the actions that sampling applies to (`session.poll`, `job.status`).
    static bool isSampledRead(std::string_view action);

    /// Appends `event` unless sampling leaves it out (then, as without a store, nothing happens
    /// and the result is ok). Written directly, the store's refusal comes back as its Error;
    /// queued to the writer, the result is ok and the writer logs a refusal.
    Result<void> append(store::AuditEvent event);

    /// Returns once what was appended before is in the store (AuditWriter::flush(); at once
    /// without a writer).
    void flush();

private:
    /// Counts the read and says whether it is one to record.
    bool keep(const store::AuditEvent& event);

    std::shared_ptr<store::Store> store_;
    std::int64_t sample_reads_;
    std::shared_ptr<AuditWriter> writer_;
    std::mutex mutex_;
    /// Reads seen per "workspace\nagent\naction"; bounded by the configured agents (and the
    /// anonymous one) times the two sampled actions.
    std::map<std::string, std::int64_t, std::less<>> seen_;
};

}  // namespace crank::runtime
