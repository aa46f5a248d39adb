#pragma once

// Internal to plugins/aggregators: how snapshots write JSON text.

#include <cstddef>
#include <string_view>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace crank::aggregators {

using JsonBuffer = rapidjson::StringBuffer;
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

inline void writeKey(JsonWriter& writer, std::string_view key) {
    writer.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
}

inline void writeString(JsonWriter& writer, std::string_view text) {
    writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

/// Inserts `json` (one valid JSON value) as it is.
inline void writeRaw(JsonWriter& writer, std::string_view json) {
    writer.RawValue(json.data(), json.size(), rapidjson::kObjectType);
}

/// The object that stands for an item left out because it is longer than allowed.
inline void writeItemMarker(JsonWriter& writer, std::size_t bytes) {
    writer.StartObject();
    writeKey(writer, "truncated_item");
    writer.Bool(true);
    writeKey(writer, "bytes");
    writer.Uint64(bytes);
    writer.EndObject();
}

}  // namespace crank::aggregators
