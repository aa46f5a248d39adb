#include "stats_aggregate.h"

#include <cmath>
#include <limits>
#include <utility>

namespace crank::aggregators {

namespace {

/// Outputs are finite: a sum that overflowed is reported as the largest finite double.
double finite(double value) {
    if (std::isfinite(value)) {
        return value;
    }
    return std::signbit(value) ? -std::numeric_limits<double>::max()
                               : std::numeric_limits<double>::max();
}

}  // namespace

StatsConfig StatsConfig::read(ConfigReader& reader) {
    StatsConfig config;
    config.numeric_paths = reader.paths("numeric_paths", kMaxPaths);
    config.key_paths = reader.paths("key_paths", kMaxPaths);
    config.top_k = static_cast<std::size_t>(reader.integer("top_k", kDefaultTopK, 1, kMaxTopK));
    config.relative_accuracy = reader.number("relative_accuracy", kDefaultRelativeAccuracy,
                                             kMinRelativeAccuracy, kMaxRelativeAccuracy);
    config.max_buckets = static_cast<std::size_t>(
        reader.integer("max_buckets", kDefaultMaxBuckets, kMinMaxBuckets, kMaxMaxBuckets));
    return config;
}

StatsAggregate::StatsAggregate(StatsConfig config)
    : counts_(std::move(config.key_paths), config.top_k) {
    numeric_.reserve(config.numeric_paths.size());
    for (CompiledPath& path : config.numeric_paths) {
        numeric_.push_back(Numeric{std::move(path),
                                   QuantileSketch(config.relative_accuracy, config.max_buckets),
                                   NeumaierSum(), 0});
    }
}

void StatsAggregate::accept(std::string_view item_json) {
    const rapidjson::Value& item = parser_.parse(item_json);
    ++count_;
    for (Numeric& numeric : numeric_) {
        numeric.path.forEachMatch(item, [&numeric](const rapidjson::Value& value) {
            if (value.IsNumber()) {
                const double number = value.GetDouble();
                numeric.sketch.add(number);
                numeric.sum.add(number);
            } else {
                ++numeric.non_numeric;
            }
        });
    }
    counts_.accept(item);
}

void StatsAggregate::snapshot(JsonBuffer& out) const {
    JsonWriter writer(out);
    writer.StartObject();
    writeKey(writer, "stats");
    writer.StartObject();
    writeKey(writer, "count");
    writer.Uint64(count_);
    writeKey(writer, "numeric");
    writer.StartObject();
    for (const Numeric& numeric : numeric_) {
        const QuantileSketch& sketch = numeric.sketch;
        writeKey(writer, numeric.path.text());
        writer.StartObject();
        writeKey(writer, "count");
        writer.Uint64(sketch.count());
        writeKey(writer, "non_numeric");
        writer.Uint64(numeric.non_numeric);
        const double sum = finite(numeric.sum.value());
        writeKey(writer, "sum");
        writer.Double(sum);
        if (sketch.count() > 0) {
            writeKey(writer, "min");
            writer.Double(sketch.min());
            writeKey(writer, "max");
            writer.Double(sketch.max());
            writeKey(writer, "mean");
            writer.Double(finite(sum / static_cast<double>(sketch.count())));
            writeKey(writer, "p50");
            writer.Double(sketch.quantile(0.50));
            writeKey(writer, "p95");
            writer.Double(sketch.quantile(0.95));
            writeKey(writer, "p99");
            writer.Double(sketch.quantile(0.99));
        }
        writer.EndObject();
    }
    writer.EndObject();
    writeKey(writer, "counts");
    counts_.write(writer);
    writer.EndObject();
    if (counts_.truncated()) {
        writeKey(writer, "truncated");
        writer.Bool(true);
    }
    writer.EndObject();
}

std::size_t StatsAggregate::memoryEstimate() const {
    std::size_t bytes = sizeof(*this) + parser_.memoryEstimate() + counts_.memoryEstimate() +
                        numeric_.capacity() * sizeof(Numeric);
    for (const Numeric& numeric : numeric_) {
        bytes += numeric.sketch.memoryEstimate() - sizeof(QuantileSketch);
    }
    return bytes;
}

}  // namespace crank::aggregators
