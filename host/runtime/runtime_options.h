#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/audit_writer.h"
#include "runtime/safety_stage.h"

namespace crank::metrics {
class Registry;
}  // namespace crank::metrics

namespace crank::runtime {

/// Host-wide bounds of the runtime (not per operation). Defaults are documented in
/// docs/configuration.md ("Runtime bounds").
struct RuntimeOptions {
    /// How long a window waits for a plugin to acknowledge a cancel with complete() before it
    /// returns its result anyway and leaves the stream to the reaper.
    std::int64_t cancel_grace_ms = 2'000;
    /// Largest rendered upstream request (the protocol config after templates).
    std::size_t max_request_bytes = std::size_t{1024} * 1024;
    /// How often a window sends notifications/progress (when the client asked for progress).
    std::int64_t progress_interval_ms = 250;
    /// Bounds of the safety stage (largest item, deepest nesting, dedup memory).
    SafetyLimits safety;
    /// Where items, bytes, drops and upstream errors are counted (FlowMetrics); nullptr: nowhere.
    /// Must outlive the runner.
    metrics::Registry* metrics = nullptr;
    /// 1 in this many successful session polls and job status reads of an agent is audited
    /// (`audit.sample_reads`, AuditLog); 1: every one.
    std::int64_t audit_sample_reads = 1;
    /// The write-behind queue that tool calls, sessions and jobs hand their audit events to
    /// (crankd's one); nullptr: each event is written by the thread that makes it.
    std::shared_ptr<AuditWriter> audit_writer;
};

}  // namespace crank::runtime
