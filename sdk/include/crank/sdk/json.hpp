// Crank SDK, C++ layer: the little JSON text helpers a plugin needs without a JSON library.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace crank::sdk {

/// Appends `text` to `out` as a JSON string literal (with the quotes). Control characters,
/// quotes and backslashes are escaped; other bytes (UTF-8) are copied as they are.
inline void appendJsonString(std::string& out, std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    out.reserve(out.size() + text.size() + 2);
    out.push_back('"');
    for (char c : text) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    out += "\\u00";
                    out.push_back(kHex[(static_cast<unsigned char>(c) >> 4) & 0xf]);
                    out.push_back(kHex[static_cast<unsigned char>(c) & 0xf]);
                } else {
                    out.push_back(c);
                }
        }
    }
    out.push_back('"');
}

/// `text` as a JSON string literal (with the quotes).
inline std::string jsonQuote(std::string_view text) {
    std::string out;
    appendJsonString(out, text);
    return out;
}

/// The deepest nesting of arrays and objects in `json` (strings skipped), without parsing it:
/// check it before handing outside JSON to a parser or writer that recurses (RapidJSON's DOM
/// destructor, Accept and Writer do).
inline std::size_t jsonNestingDepth(std::string_view json) {
    std::size_t depth = 0;
    std::size_t deepest = 0;
    bool inString = false;
    for (std::size_t i = 0; i < json.size(); ++i) {
        const char c = json[i];
        if (inString) {
            if (c == '\\') {
                ++i;
            } else if (c == '"') {
                inString = false;
            }
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            deepest = ++depth > deepest ? depth : deepest;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

}  // namespace crank::sdk
