#include "latest_state_aggregate.h"

#include <utility>

#include "key_text.h"

namespace crank::aggregators {

LatestStateConfig LatestStateConfig::read(ConfigReader& reader) {
    LatestStateConfig config;
    config.key_path = reader.optionalPath("key_path");
    config.max_keys =
        static_cast<std::size_t>(reader.integer("max_keys", kDefaultMaxKeys, 1, kMaxMaxKeys));
    config.max_item_bytes = static_cast<std::size_t>(
        reader.integer("max_item_bytes", kDefaultMaxItemBytes, kMinMaxItemBytes, kMaxMaxItemBytes));
    config.max_bytes = static_cast<std::size_t>(
        reader.integer("max_bytes", kDefaultMaxBytes, kMinMaxBytes, kMaxMaxBytes));
    if (config.max_item_bytes > config.max_bytes) {
        reader.problem("max_item_bytes",
                       "must not exceed max_bytes (" + std::to_string(config.max_bytes) + ")");
    }
    return config;
}

LatestStateAggregate::LatestStateAggregate(LatestStateConfig config) : config_(std::move(config)) {}

void LatestStateAggregate::unlink(std::uint32_t slot) {
    Entry& entry = entries_[slot];
    if (entry.older != kNone) {
        entries_[entry.older].newer = entry.newer;
    } else {
        oldest_ = entry.newer;
    }
    if (entry.newer != kNone) {
        entries_[entry.newer].older = entry.older;
    } else {
        newest_ = entry.older;
    }
    entry.older = kNone;
    entry.newer = kNone;
}

void LatestStateAggregate::linkNewest(std::uint32_t slot) {
    Entry& entry = entries_[slot];
    entry.older = newest_;
    entry.newer = kNone;
    if (newest_ != kNone) {
        entries_[newest_].newer = slot;
    } else {
        oldest_ = slot;
    }
    newest_ = slot;
}

void LatestStateAggregate::evictOldest() {
    const std::uint32_t slot = oldest_;
    unlink(slot);
    Entry& entry = entries_[slot];
    bytes_ -= keptSize(entry);
    index_.erase(index_.find(std::string_view(entry.key)));
    entry.key.clear();
    entry.key.shrink_to_fit();
    entry.item.assign({}, 0);
    free_.push_back(slot);
    truncated_ = true;
}

void LatestStateAggregate::accept(std::string_view item_json) {
    const rapidjson::Value& item = parser_.parse(item_json);
    char buffer[kKeyBufferSize];
    std::string_view key = "_";
    if (config_.key_path) {
        const rapidjson::Value* value = config_.key_path->findFirst(item);
        std::optional<std::string_view> text;
        if (value != nullptr) {
            text = keyText(*value, buffer);
        }
        if (!text) {
            ++skipped_;
            return;
        }
        key = *text;
    }
    auto found = index_.find(key);
    std::uint32_t slot = 0;
    if (found != index_.end()) {
        slot = found->second;
        bytes_ -= keptSize(entries_[slot]);
        unlink(slot);
    } else {
        while (index_.size() >= config_.max_keys) {
            evictOldest();
        }
        if (!free_.empty()) {
            slot = free_.back();
            free_.pop_back();
        } else {
            slot = static_cast<std::uint32_t>(entries_.size());
            entries_.emplace_back();
        }
        entries_[slot].key.assign(key);
        index_.emplace(entries_[slot].key, slot);
    }
    entries_[slot].item.assign(item_json, config_.max_item_bytes);
    bytes_ += keptSize(entries_[slot]);
    linkNewest(slot);
    while (bytes_ > config_.max_bytes && oldest_ != newest_) {
        evictOldest();
    }
}

void LatestStateAggregate::snapshot(JsonBuffer& out) const {
    JsonWriter writer(out);
    writer.StartObject();
    writeKey(writer, "state");
    writer.StartObject();
    for (std::uint32_t slot = oldest_; slot != kNone; slot = entries_[slot].newer) {
        writeKey(writer, entries_[slot].key);
        entries_[slot].item.write(writer);
    }
    writer.EndObject();
    const bool any_cut = [this] {
        for (std::uint32_t slot = oldest_; slot != kNone; slot = entries_[slot].newer) {
            if (entries_[slot].item.cut()) {
                return true;
            }
        }
        return false;
    }();
    if (truncated_ || any_cut) {
        writeKey(writer, "truncated");
        writer.Bool(true);
    }
    writer.EndObject();
}

std::size_t LatestStateAggregate::memoryEstimate() const {
    std::size_t bytes =
        sizeof(*this) + parser_.memoryEstimate() + entries_.capacity() * sizeof(Entry) +
        free_.capacity() * sizeof(std::uint32_t) + index_.bucket_count() * sizeof(void*);
    for (const Entry& entry : entries_) {
        bytes += entry.key.capacity() + entry.item.memoryEstimate() - sizeof(KeptItem);
        bytes += entry.key.size() + 48;  // the map's node and its copy of the key
    }
    return bytes;
}

}  // namespace crank::aggregators
