#pragma once

// Internal to plugins/aggregators: the summary_only and summary_plus_samples modes.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "aggregate_logic.h"
#include "compiled_path.h"
#include "config_reader.h"
#include "item_parser.h"
#include "item_sampler.h"
#include "kept_item.h"
#include "key_counts.h"
#include "space_saving.h"

namespace crank::aggregators {

/// Config of summary_only, and of summary_plus_samples when `with_samples`.
struct SummaryConfig {
    static constexpr std::size_t kMaxKeyPaths = 16;
    static constexpr std::size_t kDefaultTopK = 10;
    static constexpr std::size_t kMaxTopK = 100;
    static constexpr std::size_t kDefaultMaxItemBytes = 2048;
    static constexpr std::size_t kMinMaxItemBytes = 16;
    static constexpr std::size_t kMaxMaxItemBytes = std::size_t{64} * 1024;
    static constexpr std::size_t kDefaultSampleSize = 5;
    static constexpr std::size_t kMaxSampleSize = 100;

    std::vector<CompiledPath> key_paths;
    std::size_t top_k = kDefaultTopK;
    bool include_first_last = true;
    std::size_t max_item_bytes = kDefaultMaxItemBytes;
    bool with_samples = false;
    std::size_t sample_size = kDefaultSampleSize;
    ItemSampler::Mode sampling = ItemSampler::Mode::reservoir;
    std::optional<std::uint64_t> seed;

    static SummaryConfig read(ConfigReader& reader, bool with_samples);
};

/// {"summary": {count, bytes, types, fields, counts, first?, last?}} and, with samples,
/// "items": [...]. "truncated": true when something was left out: a top-K list that had more
/// distinct values than it shows, or an item replaced by the too-long marker.
class SummaryAggregate final : public AggregateLogic {
public:
    explicit SummaryAggregate(SummaryConfig config);

    void accept(std::string_view item_json) override;
    void snapshot(JsonBuffer& out) const override;
    std::size_t memoryEstimate() const override;

private:
    /// object, array, string, number, boolean, null
    static constexpr std::size_t kTypeCount = 6;

    bool truncated() const;

    std::size_t top_k_;
    bool include_first_last_;
    std::size_t max_item_bytes_;
    ItemParser parser_;
    std::uint64_t count_ = 0;
    std::uint64_t bytes_ = 0;
    std::array<std::uint64_t, kTypeCount> types_{};
    SpaceSaving fields_;
    KeyCounts counts_;
    KeptItem first_;
    KeptItem last_;
    std::optional<ItemSampler> sampler_;
};

}  // namespace crank::aggregators
