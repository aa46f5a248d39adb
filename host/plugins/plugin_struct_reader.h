#pragma once

// Reading the structs a plugin hands over, defensively. A plugin's struct may be shorter than the
// host's (built against an older minor: the missing members read as zero) or longer (a newer
// minor: the extra members are ignored). Views and names are checked before they are copied.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include "util/error.h"
#include <crank/plugin.h>

namespace crank::plugins {

/// The fixed part of each struct: struct_size and every member up to and including the first
/// function pointer. A struct_size below it cannot come from any ABI 1 build.
inline constexpr std::size_t kDescriptorVersionPrefix =
    offsetof(crank_plugin_descriptor, abi_minor) + sizeof(std::uint32_t);
inline constexpr std::size_t kDescriptorPrefix =
    offsetof(crank_plugin_descriptor, init) + sizeof(crank_plugin_descriptor::init);
inline constexpr std::size_t kAdapterPrefix =
    offsetof(crank_adapter, validate) + sizeof(crank_adapter::validate);
inline constexpr std::size_t kAggregatorPrefix =
    offsetof(crank_aggregator, validate) + sizeof(crank_aggregator::validate);

/// Texts above this size are refused as implausible (a garbage length would otherwise make the
/// host read far past the plugin's memory).
inline constexpr std::size_t kMaxPluginTextBytes = std::size_t{16} * 1024 * 1024;

/// A copy of `source` that holds only the first min(source.struct_size, sizeof(T)) bytes, the
/// rest zero; its struct_size is sizeof(T). The caller checked source.struct_size >= the prefix.
template <typename T>
T copyPluginStruct(const T& source) noexcept {
    T copy{};
    const std::size_t size = std::min(source.struct_size, sizeof(T));
    std::memcpy(&copy, &source, size);
    copy.struct_size = sizeof(T);
    return copy;
}

/// Reads a descriptor: NULL, too small or another major are refused with the reason.
/// (abi_minor is judged by the loader, which can then name the plugin.)
Result<crank_plugin_descriptor> readDescriptor(const crank_plugin_descriptor* descriptor);
Result<crank_adapter> readAdapter(const crank_adapter* adapter);
Result<crank_aggregator> readAggregator(const crank_aggregator* aggregator);

/// True for [a-z0-9_]{1,64}.
bool isValidPluginName(std::string_view name);
/// The name in `text` if valid; otherwise why not (`what`: "plugin name", "adapter name"...).
Result<std::string> readName(crank_str text, std::string_view what);
/// A copy of a view: refused when ptr is NULL with len > 0, or len is implausible.
Result<std::string> readText(crank_str text, std::string_view what);
/// A copy of a JSON Schema text, which must parse as a JSON object.
Result<std::string> readSchema(crank_str text, std::string_view what);

/// The view as a string_view ({NULL, n} reads as empty).
inline std::string_view toView(crank_str text) noexcept {
    return text.ptr == nullptr ? std::string_view() : std::string_view(text.ptr, text.len);
}

}  // namespace crank::plugins
