#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace crank::metrics {

/// Label names and values of one series, in the family's label order.
using Labels = std::vector<std::pair<std::string, std::string>>;

/// A monotonically growing count. Thread-safe, lock-free.
class Counter {
public:
    void inc(double by = 1.0) { value_.fetch_add(by, std::memory_order_relaxed); }
    double value() const { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<double> value_{0.0};
};

/// Observations counted into fixed buckets (upper bounds, ascending), with their sum. Thread-safe,
/// lock-free.
class Histogram {
public:
    explicit Histogram(std::vector<double> bounds);
    void observe(double value);
    /// Cumulative counts per bound, then +Inf (the total count).
    std::vector<std::uint64_t> cumulative() const;
    double sum() const { return sum_.load(std::memory_order_relaxed); }
    const std::vector<double>& bounds() const { return bounds_; }

private:
    std::vector<double> bounds_;
    std::vector<std::atomic<std::uint64_t>> counts_;  // per bucket, the last one +Inf
    std::atomic<double> sum_{0.0};
};

/// Latency buckets in seconds, from 1 ms to 5 min.
std::vector<double> latencyBuckets();

/// The metrics of one crankd, rendered in the Prometheus text exposition format (0.0.4) for
/// `/metrics`. Counters and histograms are updated where things happen; gauges are read at
/// scrape time from the component that knows (a callback), so they cannot drift.
///
/// Each family holds at most kMaxSeriesPerFamily series: label sets beyond it are counted in one
/// series whose label values are all "_other", so a flood of names cannot grow memory.
/// THREADING: every method is thread-safe. Returned references stay valid as long as the
/// registry.
class Registry {
public:
    static constexpr std::size_t kMaxSeriesPerFamily = 2000;

    /// The counter of `name` with `labels` (created at 0 on first use). `help` is taken from the
    /// first call of a family.
    Counter& counter(std::string_view name, std::string_view help, const Labels& labels = {});
    Histogram& histogram(std::string_view name, std::string_view help,
                         const std::vector<double>& bounds, const Labels& labels = {});
    /// A gauge family whose series `collect` returns at every scrape (replacing an earlier one
    /// of that name). `collect` runs on the scraping thread and must not call back into the
    /// registry.
    using Collect = std::function<std::vector<std::pair<Labels, double>>()>;
    void gauge(std::string_view name, std::string_view help, Collect collect);

    /// Every family, sorted by name, in the text exposition format.
    std::string render() const;

private:
    struct Family {
        std::string help;
        std::string type;  // counter, histogram, gauge
        std::map<Labels, std::unique_ptr<Counter>> counters;
        std::map<Labels, std::unique_ptr<Histogram>> histograms;
        Collect collect;
    };
    Family& family(std::string_view name, std::string_view help, std::string_view type);
    /// `labels`, or the "_other" series when the family is full and `labels` is new.
    template <typename Series>
    static Labels capped(const std::map<Labels, Series>& series, const Labels& labels) {
        if (series.size() < kMaxSeriesPerFamily || series.count(labels) != 0) {
            return labels;
        }
        Labels other = labels;
        for (auto& [name, value] : other) {
            value = "_other";
        }
        return other;
    }

    mutable std::mutex mutex_;
    std::map<std::string, Family, std::less<>> families_;
};

/// A label value or HELP text escaped as the text format wants (backslash, quote, newline).
std::string escapeLabelValue(std::string_view value);

}  // namespace crank::metrics
