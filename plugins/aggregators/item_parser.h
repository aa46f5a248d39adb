#pragma once

// Internal to plugins/aggregators: parses items one at a time into a reused RapidJSON document.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace crank::aggregators {

/// Parses one item after another without allocating for items that fit its fixed buffers: the
/// text is copied into a reused buffer and parsed in situ, the values and the parse stack come
/// from memory pools over fixed buffers that are cleared before each item. A larger item borrows
/// extra chunks that are released with the next item, so memory stays bounded by the largest item.
/// RapidJSON's parser recurses per nesting level: it relies on the host's safety stage, which
/// drops items nested deeper than its max_depth (64 by default) before aggregation.
class ItemParser {
public:
    ItemParser();
    ItemParser(const ItemParser&) = delete;
    ItemParser& operator=(const ItemParser&) = delete;
    ~ItemParser();

    /// Parses `item_json`. The value stays valid until the next parse(). Throws AggregateError
    /// (invalid_item) when the text is not one JSON value.
    const rapidjson::Value& parse(std::string_view item_json);

    /// Bytes held between items.
    std::size_t memoryEstimate() const;

private:
    using Pool = rapidjson::MemoryPoolAllocator<>;
    using Document = rapidjson::GenericDocument<rapidjson::UTF8<>, Pool, Pool>;

    static constexpr std::size_t kValueBufferBytes = std::size_t{32} * 1024;
    static constexpr std::size_t kStackBufferBytes = std::size_t{8} * 1024;
    /// A text buffer grown beyond this by a large item is given back after it.
    static constexpr std::size_t kMaxKeptTextBytes = std::size_t{256} * 1024;

    std::unique_ptr<char[]> value_buffer_;
    std::unique_ptr<char[]> stack_buffer_;
    Pool value_pool_;
    Pool stack_pool_;
    std::unique_ptr<Document> document_;
    std::string text_;
};

}  // namespace crank::aggregators
