#pragma once

// Internal to plugins/aggregators: the raw_items mode.

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>

#include "aggregate_logic.h"
#include "config_reader.h"
#include "item_parser.h"

namespace crank::aggregators {

/// Config of raw_items.
struct RawItemsConfig {
    static constexpr std::size_t kDefaultMaxItems = 100;
    static constexpr std::size_t kMaxMaxItems = 10000;
    static constexpr std::size_t kDefaultMaxBytes = std::size_t{256} * 1024;
    static constexpr std::size_t kMaxMaxBytes = std::size_t{16} * 1024 * 1024;

    std::size_t max_items = kDefaultMaxItems;
    bool keep_last = false;  ///< keep: "last" (else "first")
    std::size_t max_bytes = kDefaultMaxBytes;

    static RawItemsConfig read(ConfigReader& reader);
};

/// raw_items: keeps items verbatim, {"items": [...]} plus "truncated": true when some were left
/// out. "first" keeps the longest prefix of the stream within max_items and max_bytes (it stops
/// at the first item that does not fit); "last" keeps the newest items within both caps (an item
/// longer than max_bytes alone is left out).
class RawItemsAggregate final : public AggregateLogic {
public:
    explicit RawItemsAggregate(const RawItemsConfig& config);

    void accept(std::string_view item_json) override;
    void snapshot(JsonBuffer& out) const override;
    std::size_t memoryEstimate() const override;

    std::size_t keptItems() const { return items_.size(); }
    std::size_t keptBytes() const { return bytes_; }

private:
    RawItemsConfig config_;
    ItemParser parser_;
    std::deque<std::string> items_;
    std::size_t bytes_ = 0;
    bool full_ = false;  ///< "first": an item did not fit, so none after it is kept
    bool truncated_ = false;
};

}  // namespace crank::aggregators
