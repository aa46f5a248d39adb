#include "raw_items_aggregate.h"

namespace crank::aggregators {

RawItemsConfig RawItemsConfig::read(ConfigReader& reader) {
    RawItemsConfig config;
    config.max_items =
        static_cast<std::size_t>(reader.integer("max_items", kDefaultMaxItems, 1, kMaxMaxItems));
    config.keep_last = reader.enumeration("keep", "first", {"first", "last"}) == "last";
    config.max_bytes =
        static_cast<std::size_t>(reader.integer("max_bytes", kDefaultMaxBytes, 1, kMaxMaxBytes));
    return config;
}

RawItemsAggregate::RawItemsAggregate(const RawItemsConfig& config) : config_(config) {}

void RawItemsAggregate::accept(std::string_view item_json) {
    parser_.parse(item_json);  // validates; the kept text is the original
    if (!config_.keep_last) {
        if (full_ || items_.size() >= config_.max_items ||
            bytes_ + item_json.size() > config_.max_bytes) {
            full_ = true;
            truncated_ = true;
            return;
        }
        items_.emplace_back(item_json);
        bytes_ += item_json.size();
        return;
    }
    if (item_json.size() > config_.max_bytes) {
        truncated_ = true;
        return;
    }
    while (!items_.empty() &&
           (items_.size() >= config_.max_items || bytes_ + item_json.size() > config_.max_bytes)) {
        bytes_ -= items_.front().size();
        items_.pop_front();
        truncated_ = true;
    }
    items_.emplace_back(item_json);
    bytes_ += item_json.size();
}

void RawItemsAggregate::snapshot(JsonBuffer& out) const {
    JsonWriter writer(out);
    writer.StartObject();
    writeKey(writer, "items");
    writer.StartArray();
    for (const std::string& item : items_) {
        writeRaw(writer, item);
    }
    writer.EndArray();
    if (truncated_) {
        writeKey(writer, "truncated");
        writer.Bool(true);
    }
    writer.EndObject();
}

std::size_t RawItemsAggregate::memoryEstimate() const {
    std::size_t bytes = sizeof(*this) + parser_.memoryEstimate();
    for (const std::string& item : items_) {
        bytes += sizeof(std::string) + item.capacity();
    }
    return bytes;
}

}  // namespace crank::aggregators
