#pragma once

// An upstream's `tools` policy: which of its tools are published (allow and deny lists of glob
// patterns) and under which names (rename). The matching is UpstreamConfig::toolFiltered().

#include <cstddef>
#include <string_view>

#include "config/config.h"

namespace crank::config {

/// Bounds of a policy: patterns per list, renames, and a pattern's length.
inline constexpr std::size_t kMaxToolPatterns = 256;
inline constexpr std::size_t kMaxToolRenames = 1024;
inline constexpr std::size_t kMaxToolPatternLength = 256;

namespace detail {
class ObjectReader;
}  // namespace detail

/// True when glob `pattern` matches `name`: `*` any run of bytes, `?` any one byte, every other
/// byte itself; at most |pattern| x |name| steps whatever the input.
bool globMatches(std::string_view pattern, std::string_view name);

/// `key` of the upstream object `parent` reads as a ToolPolicy (empty when absent); its errors go
/// to the reader's ConfigErrors, each with its path.
UpstreamConfig::ToolPolicy readToolPolicy(detail::ObjectReader& parent, std::string_view key);

}  // namespace crank::config
