#pragma once

// Internal to plugins/aggregators: the `counts` member shared by summaries and stats.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <rapidjson/document.h>

#include "compiled_path.h"
#include "json_writer.h"
#include "space_saving.h"

namespace crank::aggregators {

/// For each configured path, the most frequent values found there (a SpaceSaving sketch each).
/// Every match of a path is counted: scalars under their keyText(); objects and arrays only in
/// `other`. Written as {"<path>": {"values": [{"value", "count"}...], "other": n}}, where `other`
/// is the number of matches not in `values`, so that the counts of `values` plus `other` add up
/// to the number of matches.
class KeyCounts {
public:
    /// The sketch keeps this many counters per top-K entry (at least kMinCounters).
    static constexpr std::size_t kCountersPerTopEntry = 8;
    static constexpr std::size_t kMinCounters = 64;

    KeyCounts(std::vector<CompiledPath> paths, std::size_t top_k);

    void accept(const rapidjson::Value& item);
    /// Writes the object described above.
    void write(JsonWriter& writer) const;
    /// True when some path saw more distinct values than it reports.
    bool truncated() const;
    std::size_t memoryEstimate() const;

    /// Writes {"values": [...], "other": n} for `sketch`, with `extra` more matches in `other`.
    static void writeTop(JsonWriter& writer, const SpaceSaving& sketch, std::size_t top_k,
                         std::uint64_t extra);
    /// Counters a sketch gets for `top_k` values.
    static std::size_t countersFor(std::size_t top_k);

private:
    struct Entry {
        CompiledPath path;
        SpaceSaving sketch;
        std::uint64_t unkeyed = 0;  ///< objects and arrays found at the path
    };

    std::vector<Entry> entries_;
    std::size_t top_k_;
};

}  // namespace crank::aggregators
