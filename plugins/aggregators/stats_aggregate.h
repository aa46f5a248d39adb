#pragma once

// Internal to plugins/aggregators: the stats mode.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "aggregate_logic.h"
#include "compiled_path.h"
#include "config_reader.h"
#include "item_parser.h"
#include "key_counts.h"
#include "neumaier_sum.h"
#include "quantile_sketch.h"

namespace crank::aggregators {

/// Config of stats.
struct StatsConfig {
    static constexpr std::size_t kMaxPaths = 16;
    static constexpr std::size_t kDefaultTopK = 10;
    static constexpr std::size_t kMaxTopK = 100;
    static constexpr double kDefaultRelativeAccuracy = 0.01;
    static constexpr double kMinRelativeAccuracy = 0.0001;
    static constexpr double kMaxRelativeAccuracy = 0.1;
    static constexpr std::size_t kDefaultMaxBuckets = 2048;
    static constexpr std::size_t kMinMaxBuckets = 64;
    static constexpr std::size_t kMaxMaxBuckets = 65536;

    std::vector<CompiledPath> numeric_paths;
    std::vector<CompiledPath> key_paths;
    std::size_t top_k = kDefaultTopK;
    double relative_accuracy = kDefaultRelativeAccuracy;
    std::size_t max_buckets = kDefaultMaxBuckets;

    static StatsConfig read(ConfigReader& reader);
};

/// {"stats": {"count": n, "numeric": {"<path>": {...}}, "counts": {"<path>": {...}}}}: for each
/// numeric path, count / non_numeric / sum always, and min / max / mean / p50 / p95 / p99 once a
/// number was seen (sum and mean with Neumaier summation, quantiles from a QuantileSketch).
/// "truncated": true when a top-K list had more distinct values than it shows.
class StatsAggregate final : public AggregateLogic {
public:
    explicit StatsAggregate(StatsConfig config);

    void accept(std::string_view item_json) override;
    void snapshot(JsonBuffer& out) const override;
    std::size_t memoryEstimate() const override;

private:
    struct Numeric {
        CompiledPath path;
        QuantileSketch sketch;
        NeumaierSum sum;
        std::uint64_t non_numeric = 0;
    };

    ItemParser parser_;
    std::uint64_t count_ = 0;
    std::vector<Numeric> numeric_;
    KeyCounts counts_;
};

}  // namespace crank::aggregators
