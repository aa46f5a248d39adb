#include "runtime/flow_metrics.h"

#include <string>

#include "metrics/metrics.h"
#include "runtime/operation.h"

namespace crank::runtime {

namespace {

metrics::Labels flowLabels(const Operation& op) {
    return {{"protocol", op.config.protocol},
            {"mode", std::string(config::toString(op.config.execution.mode))}};
}

}  // namespace

void FlowMetrics::collected(const Operation& op, std::uint64_t items, std::uint64_t bytes) const {
    if (registry_ == nullptr || (items == 0 && bytes == 0)) {
        return;
    }
    const metrics::Labels labels = flowLabels(op);
    registry_
        ->counter("crank_items_collected_total", "items read from upstreams, by protocol and mode",
                  labels)
        .inc(static_cast<double>(items));
    registry_
        ->counter("crank_bytes_collected_total",
                  "bytes of item text read from upstreams, by protocol and mode", labels)
        .inc(static_cast<double>(bytes));
}

void FlowMetrics::dropped(const Operation& op, std::string_view reason, std::uint64_t items) const {
    if (registry_ == nullptr || items == 0) {
        return;
    }
    metrics::Labels labels = flowLabels(op);
    labels.emplace_back("reason", std::string(reason));
    registry_
        ->counter("crank_items_dropped_total",
                  "items read from upstreams but not handed on, by protocol, mode and reason",
                  labels)
        .inc(static_cast<double>(items));
}

void FlowMetrics::upstreamError(const Operation& op, std::string_view code) const {
    if (registry_ == nullptr) {
        return;
    }
    metrics::Labels labels = flowLabels(op);
    labels.emplace_back("code", std::string(code));
    registry_
        ->counter("crank_upstream_errors_total",
                  "calls, windows, sessions and jobs ended by an upstream error, by protocol, mode "
                  "and code",
                  labels)
        .inc();
}

}  // namespace crank::runtime
