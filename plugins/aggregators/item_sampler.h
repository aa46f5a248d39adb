#pragma once

// Internal to plugins/aggregators: the sample items of summary_plus_samples.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "json_writer.h"
#include "kept_item.h"

namespace crank::aggregators {

/// Keeps `size` items: the first ones, the last ones, or a uniform random sample (reservoir
/// sampling, Vitter's algorithm R). With a seed the reservoir is the same for the same items on
/// every platform (the generator is SplitMix64). Items are written in arrival order.
class ItemSampler {
public:
    enum class Mode { reservoir, first, last };

    ItemSampler(Mode mode, std::size_t size, std::optional<std::uint64_t> seed,
                std::size_t max_item_bytes);

    /// Offers the next item.
    void offer(std::string_view item_json);
    /// Writes the samples as a JSON array.
    void write(JsonWriter& writer) const;
    /// Samples kept now.
    std::size_t size() const { return samples_.size(); }
    /// True when a kept sample was replaced by the too-long marker.
    bool anyCut() const;
    std::size_t memoryEstimate() const;

private:
    struct Sample {
        std::uint64_t arrival = 0;
        KeptItem item;
    };

    std::uint64_t next();
    void keep(std::size_t slot, std::string_view item_json);

    Mode mode_;
    std::size_t capacity_;
    std::size_t max_item_bytes_;
    std::uint64_t state_;
    std::uint64_t seen_ = 0;
    std::vector<Sample> samples_;
};

}  // namespace crank::aggregators
