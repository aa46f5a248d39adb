// plugins/grpc: standard base64 (RFC 4648, with padding), for Basic credentials and for status
// details of types nobody knows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace crank::grpc_plugin {

inline std::string base64(std::string_view bytes) {
    static constexpr std::string_view kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::uint32_t buffer = 0;
    int bits = 0;
    for (const char c : bytes) {
        buffer = (buffer << 8) | static_cast<unsigned char>(c);
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out.push_back(kAlphabet[(buffer >> bits) & 63]);
        }
    }
    if (bits > 0) {
        out.push_back(kAlphabet[(buffer << (6 - bits)) & 63]);
    }
    while (out.size() % 4 != 0) {
        out.push_back('=');
    }
    return out;
}

}  // namespace crank::grpc_plugin
