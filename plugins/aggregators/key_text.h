#pragma once

// Internal to plugins/aggregators: the text under which a JSON value is counted or keyed.

#include <cstddef>
#include <optional>
#include <string_view>

#include <rapidjson/document.h>

namespace crank::aggregators {

/// Longest key kept, in bytes: longer strings are cut (on a UTF-8 boundary) and counted under the
/// cut text, so that no counter or state key is bigger than this.
inline constexpr std::size_t kMaxKeyBytes = 256;

/// Room that keyText() needs for a number's text.
inline constexpr std::size_t kKeyBufferSize = 40;

/// The key for `value`: a string as is (cut to kMaxKeyBytes), a number as its shortest JSON text
/// (3.0 and 3 are both "3"), true/false/null as "true"/"false"/"null". Objects and arrays have no
/// key (nullopt). The view points into `value` or into `buffer`.
std::optional<std::string_view> keyText(const rapidjson::Value& value,
                                        char (&buffer)[kKeyBufferSize]);

/// `text` cut to at most `max_bytes`, never in the middle of a UTF-8 sequence.
std::string_view cutUtf8(std::string_view text, std::size_t max_bytes);

}  // namespace crank::aggregators
