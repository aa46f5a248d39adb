#include "plugins/plugin_struct_reader.h"

#include <cstddef>
#include <limits>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/json_members.h"
#include "json/json_parse.h"

namespace crank::plugins {
namespace {

Error invalid(std::string message) {
    return Error{ErrorCode::invalid_argument, std::move(message)};
}

template <typename T>
Result<T> readStruct(const T* source, std::size_t prefix, std::string_view what) {
    if (source == nullptr) {
        return invalid(fmt::format("the {} pointer is NULL", what));
    }
    if (source->struct_size < prefix) {
        return invalid(fmt::format(
            "the {} is too small: struct_size is {} bytes, less than the {} bytes of its fixed "
            "part in ABI {}.x",
            what, source->struct_size, prefix, CRANK_ABI_MAJOR));
    }
    return copyPluginStruct(*source);
}

}  // namespace

Result<crank_plugin_descriptor> readDescriptor(const crank_plugin_descriptor* descriptor) {
    if (descriptor == nullptr) {
        return invalid("crank_plugin_entry returned NULL instead of a descriptor");
    }
    if (descriptor->struct_size < kDescriptorVersionPrefix) {
        return invalid(fmt::format(
            "the plugin descriptor is too small: struct_size is {} bytes, too few to hold even "
            "the ABI version ({} bytes)",
            descriptor->struct_size, kDescriptorVersionPrefix));
    }
    if (descriptor->abi_major != CRANK_ABI_MAJOR) {
        return invalid(fmt::format("built for ABI {}.x; this crankd speaks {}.x",
                                   descriptor->abi_major, CRANK_ABI_MAJOR));
    }
    return readStruct(descriptor, kDescriptorPrefix, "plugin descriptor");
}

Result<crank_adapter> readAdapter(const crank_adapter* adapter) {
    return readStruct(adapter, kAdapterPrefix, "crank_adapter");
}

Result<crank_aggregator> readAggregator(const crank_aggregator* aggregator) {
    return readStruct(aggregator, kAggregatorPrefix, "crank_aggregator");
}

bool isValidPluginName(std::string_view name) {
    if (name.empty() || name.size() > 64) {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

Result<std::string> readName(crank_str text, std::string_view what) {
    auto copied = readText(text, what);
    if (!copied) {
        return copied;
    }
    if (!isValidPluginName(*copied)) {
        std::string shown = copied->size() > 80 ? copied->substr(0, 80) + "..." : *copied;
        return invalid(fmt::format(
            "invalid {} \"{}\": it must be 1 to 64 characters among a-z, 0-9 and _", what, shown));
    }
    return copied;
}

Result<std::string> readText(crank_str text, std::string_view what) {
    if (text.ptr == nullptr && text.len > 0) {
        return invalid(
            fmt::format("the {} is an invalid view (NULL pointer, length {})", what, text.len));
    }
    if (text.len > kMaxPluginTextBytes) {
        return invalid(fmt::format("the {} is implausibly long ({} bytes, at most {})", what,
                                   text.len, kMaxPluginTextBytes));
    }
    return std::string(toView(text));
}

Result<std::string> readSchema(crank_str text, std::string_view what) {
    auto copied = readText(text, what);
    if (!copied) {
        return copied;
    }
    if (copied->empty()) {
        return invalid(fmt::format("the {} is empty; it must be a JSON Schema object", what));
    }
    json::Document document;
    json::ParseLimits limits;
    limits.max_bytes = std::numeric_limits<std::size_t>::max();
    limits.max_depth = json::kMaxObjectDepth;
    limits.validate_utf8 = false;  // as before: a plugin's bytes are its own
    if (auto parsed = json::parseJson(*copied, document, {}, limits); !parsed) {
        return invalid(fmt::format("the {} is not valid JSON ({})", what, parsed.error().message));
    }
    if (!document.IsObject()) {
        return invalid(fmt::format("the {} is not a JSON object", what));
    }
    return copied;
}

}  // namespace crank::plugins
