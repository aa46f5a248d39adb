#pragma once

#include <cstdint>
#include <string_view>

namespace crank::metrics {
class Registry;
}  // namespace crank::metrics

namespace crank::runtime {

struct Operation;

/// What the runtime counts for `/metrics` (docs/operations.md, "Metrics"), each by the
/// operation's protocol (the plugin that ran it) and execution mode:
///   crank_items_collected_total, crank_bytes_collected_total  items (and their text's bytes)
///       read from upstreams: a unary response's parts, a window's items, a session's items
///       once buffered;
///   crank_items_dropped_total{reason}  items read but not handed on: `safety` (the safety
///       stage: malformed, too deep, duplicates, sampling), `max_bytes` (the item that would pass
///       a window's byte limit), `overflow` (a full session buffer with drop_oldest, or an item
///       larger than the buffer), `max_items` (a unary response's items past max_items);
///   crank_upstream_errors_total{code}  calls, windows, sessions and jobs that ended with an
///       upstream error, by its code (crank_error_code names, and `timeout` when the upstream
///       did not answer in upstream_timeout_ms).
/// Without a registry every method does nothing. Thread-safe; called once per call, window,
/// poll or session end, never per item.
class FlowMetrics {
public:
    explicit FlowMetrics(metrics::Registry* registry = nullptr) : registry_(registry) {}

    void collected(const Operation& op, std::uint64_t items, std::uint64_t bytes) const;
    void dropped(const Operation& op, std::string_view reason, std::uint64_t items) const;
    void upstreamError(const Operation& op, std::string_view code) const;

private:
    metrics::Registry* registry_;
};

}  // namespace crank::runtime
