#pragma once

#include <string>
#include <string_view>

namespace crank {

/// Appends `text` to `out` as a JSON string literal, quotes included. Control characters are
/// escaped; bytes >= 0x80 are copied as they are (the caller guarantees UTF-8).
void appendJsonString(std::string& out, std::string_view text);

/// `text` as a JSON string literal, quotes included.
inline std::string jsonString(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 2);
    appendJsonString(out, text);
    return out;
}

}  // namespace crank
