// Crank SDK, C++ layer: standard base64 (RFC 4648, with padding), which plugins need for Basic
// credentials and for bytes carried in JSON.
#pragma once

#include <string>
#include <string_view>

namespace crank::sdk {

inline std::string base64(std::string_view bytes) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const unsigned v = (static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16U) |
                           (static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8U) |
                           static_cast<unsigned char>(bytes[i + 2]);
        out.push_back(kAlphabet[(v >> 18U) & 63U]);
        out.push_back(kAlphabet[(v >> 12U) & 63U]);
        out.push_back(kAlphabet[(v >> 6U) & 63U]);
        out.push_back(kAlphabet[v & 63U]);
    }
    if (i < bytes.size()) {
        unsigned v = static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16U;
        if (i + 1 < bytes.size()) {
            v |= static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8U;
        }
        out.push_back(kAlphabet[(v >> 18U) & 63U]);
        out.push_back(kAlphabet[(v >> 12U) & 63U]);
        out.push_back(i + 1 < bytes.size() ? kAlphabet[(v >> 6U) & 63U] : '=');
        out.push_back('=');
    }
    return out;
}

}  // namespace crank::sdk
