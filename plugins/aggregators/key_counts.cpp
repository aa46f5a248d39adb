#include "key_counts.h"

#include <algorithm>
#include <utility>

#include "key_text.h"

namespace crank::aggregators {

std::size_t KeyCounts::countersFor(std::size_t top_k) {
    return std::max(kMinCounters, top_k * kCountersPerTopEntry);
}

KeyCounts::KeyCounts(std::vector<CompiledPath> paths, std::size_t top_k) : top_k_(top_k) {
    entries_.reserve(paths.size());
    for (CompiledPath& path : paths) {
        entries_.push_back(Entry{std::move(path), SpaceSaving(countersFor(top_k)), 0});
    }
}

void KeyCounts::accept(const rapidjson::Value& item) {
    char buffer[kKeyBufferSize];
    for (Entry& entry : entries_) {
        entry.path.forEachMatch(item, [&](const rapidjson::Value& value) {
            if (auto key = keyText(value, buffer)) {
                entry.sketch.add(*key);
            } else {
                ++entry.unkeyed;
            }
        });
    }
}

void KeyCounts::writeTop(JsonWriter& writer, const SpaceSaving& sketch, std::size_t top_k,
                         std::uint64_t extra) {
    std::uint64_t listed = 0;
    writer.StartObject();
    writeKey(writer, "values");
    writer.StartArray();
    for (const SpaceSaving::Counter& counter : sketch.top(top_k)) {
        writer.StartObject();
        writeKey(writer, "value");
        writeString(writer, counter.value);
        writeKey(writer, "count");
        writer.Uint64(counter.count);
        writer.EndObject();
        listed += counter.count;
    }
    writer.EndArray();
    writeKey(writer, "other");
    writer.Uint64(sketch.total() - listed + extra);
    writer.EndObject();
}

void KeyCounts::write(JsonWriter& writer) const {
    writer.StartObject();
    for (const Entry& entry : entries_) {
        writeKey(writer, entry.path.text());
        writeTop(writer, entry.sketch, top_k_, entry.unkeyed);
    }
    writer.EndObject();
}

bool KeyCounts::truncated() const {
    return std::any_of(entries_.begin(), entries_.end(), [this](const Entry& entry) {
        return entry.sketch.evicted() || entry.sketch.size() > top_k_;
    });
}

std::size_t KeyCounts::memoryEstimate() const {
    std::size_t bytes = entries_.capacity() * sizeof(Entry);
    for (const Entry& entry : entries_) {
        bytes += entry.sketch.memoryEstimate();
    }
    return bytes;
}

}  // namespace crank::aggregators
