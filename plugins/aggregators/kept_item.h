#pragma once

// Internal to plugins/aggregators: an item kept verbatim, or a marker when it is too long.

#include <cstddef>
#include <string>
#include <string_view>

#include "json_writer.h"

namespace crank::aggregators {

/// The text of one item when it fits in `max_bytes`; otherwise only its size, and it is written
/// as {"truncated_item": true, "bytes": n}. Reuses its buffer from one item to the next.
class KeptItem {
public:
    void assign(std::string_view item_json, std::size_t max_bytes) {
        bytes_ = item_json.size();
        cut_ = item_json.size() > max_bytes;
        if (cut_) {
            text_.clear();
        } else {
            text_.assign(item_json);
        }
        // A buffer grown by a long item is given back once items are short again.
        if (text_.capacity() > 4096 && text_.capacity() > 4 * text_.size()) {
            text_.shrink_to_fit();
        }
    }

    void write(JsonWriter& writer) const {
        if (cut_) {
            writeItemMarker(writer, bytes_);
        } else {
            writeRaw(writer, text_);
        }
    }

    /// True when the item was replaced by the marker.
    bool cut() const { return cut_; }
    /// The item's size.
    std::size_t bytes() const { return bytes_; }
    std::size_t memoryEstimate() const { return sizeof(*this) + text_.capacity(); }

private:
    std::string text_;
    std::size_t bytes_ = 0;
    bool cut_ = false;
};

}  // namespace crank::aggregators
