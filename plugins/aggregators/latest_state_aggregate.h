#pragma once

// Internal to plugins/aggregators: the latest_state mode.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "aggregate_logic.h"
#include "compiled_path.h"
#include "config_reader.h"
#include "item_parser.h"
#include "kept_item.h"

namespace crank::aggregators {

/// Config of latest_state.
struct LatestStateConfig {
    static constexpr std::size_t kDefaultMaxKeys = 100;
    static constexpr std::size_t kMaxMaxKeys = 10000;
    static constexpr std::size_t kDefaultMaxItemBytes = std::size_t{16} * 1024;
    static constexpr std::size_t kMinMaxItemBytes = 16;
    static constexpr std::size_t kMaxMaxItemBytes = std::size_t{1024} * 1024;
    static constexpr std::size_t kDefaultMaxBytes = std::size_t{4} * 1024 * 1024;
    static constexpr std::size_t kMinMaxBytes = 1024;
    static constexpr std::size_t kMaxMaxBytes = std::size_t{64} * 1024 * 1024;

    std::optional<CompiledPath> key_path;
    std::size_t max_keys = kDefaultMaxKeys;
    std::size_t max_item_bytes = kDefaultMaxItemBytes;
    std::size_t max_bytes = kDefaultMaxBytes;

    static LatestStateConfig read(ConfigReader& reader);
};

/// {"state": {"<key>": newest item, ...}}, keys from the least to the most recently updated.
/// Without key_path the state is the newest item under "_". An item whose key_path matches
/// nothing, or matches an object or an array, is skipped (with a wildcard the first match is the
/// key). Beyond max_keys keys, or max_bytes of keys and kept items, the least recently updated key
/// is evicted and "truncated": true is set.
class LatestStateAggregate final : public AggregateLogic {
public:
    explicit LatestStateAggregate(LatestStateConfig config);

    void accept(std::string_view item_json) override;
    void snapshot(JsonBuffer& out) const override;
    std::size_t memoryEstimate() const override;

    std::size_t keys() const { return index_.size(); }
    std::size_t keptBytes() const { return bytes_; }
    /// Items skipped because their key was missing or not a scalar.
    std::uint64_t skipped() const { return skipped_; }

private:
    static constexpr std::uint32_t kNone = 0xFFFFFFFFU;

    struct Entry {
        std::string key;
        KeptItem item;
        std::uint32_t older = kNone;
        std::uint32_t newer = kNone;
    };
    struct KeyHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view key) const {
            return std::hash<std::string_view>{}(key);
        }
    };

    static std::size_t keptSize(const Entry& entry) {
        return entry.key.size() + (entry.item.cut() ? 0 : entry.item.bytes());
    }
    void unlink(std::uint32_t slot);
    void linkNewest(std::uint32_t slot);
    void evictOldest();

    LatestStateConfig config_;
    ItemParser parser_;
    std::vector<Entry> entries_;
    std::vector<std::uint32_t> free_;
    std::unordered_map<std::string, std::uint32_t, KeyHash, std::equal_to<>> index_;
    std::uint32_t oldest_ = kNone;
    std::uint32_t newest_ = kNone;
    std::size_t bytes_ = 0;
    std::uint64_t skipped_ = 0;
    bool truncated_ = false;
};

}  // namespace crank::aggregators
