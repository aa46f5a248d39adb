#include <algorithm>

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <crank/sdk/http/text.hpp>

namespace crank::sdk::http {
namespace {

/// Length of the valid UTF-8 sequence at the start of `s`, 0 when it is not one.
std::size_t sequenceLength(std::string_view s) {
    const auto b0 = static_cast<unsigned char>(s[0]);
    if (b0 < 0x80) {
        return 1;
    }
    std::size_t n = 0;
    unsigned min = 0;
    unsigned cp = 0;
    if ((b0 & 0xE0U) == 0xC0U) {
        n = 2;
        min = 0x80;
        cp = b0 & 0x1FU;
    } else if ((b0 & 0xF0U) == 0xE0U) {
        n = 3;
        min = 0x800;
        cp = b0 & 0x0FU;
    } else if ((b0 & 0xF8U) == 0xF0U) {
        n = 4;
        min = 0x10000;
        cp = b0 & 0x07U;
    } else {
        return 0;
    }
    if (s.size() < n) {
        return 0;
    }
    for (std::size_t i = 1; i < n; ++i) {
        const auto b = static_cast<unsigned char>(s[i]);
        if ((b & 0xC0U) != 0x80U) {
            return 0;
        }
        cp = (cp << 6U) | (b & 0x3FU);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;
    }
    return n;
}

}  // namespace

bool hasControlCharacter(std::string_view text) {
    return std::any_of(text.begin(), text.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return (u < 0x20 && c != '\t') || u == 0x7f;
    });
}

std::string validUtf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    while (!text.empty()) {
        const std::size_t n = sequenceLength(text);
        if (n == 0) {
            out.append("\xEF\xBF\xBD");
            text.remove_prefix(1);
        } else {
            out.append(text.substr(0, n));
            text.remove_prefix(n);
        }
    }
    return out;
}

std::string excerpt(std::string_view text, std::size_t max_bytes) {
    std::string valid = validUtf8(text.substr(0, max_bytes + 4));
    if (valid.size() <= max_bytes && text.size() <= max_bytes) {
        return valid;
    }
    std::size_t cut = std::min(max_bytes, valid.size());
    while (cut > 0 && (static_cast<unsigned char>(valid[cut]) & 0xC0U) == 0x80U) {
        --cut;
    }
    valid.resize(cut);
    valid.append("...");
    return valid;
}

std::string jsonError(std::string_view text) {
    rapidjson::MemoryStream stream(text.data(), text.size());
    rapidjson::BaseReaderHandler<> handler;
    rapidjson::Reader reader;
    const rapidjson::ParseResult result =
        reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag>(
            stream, handler);
    if (!result.IsError()) {
        return {};
    }
    return std::string(rapidjson::GetParseError_En(result.Code())) + " at byte " +
           std::to_string(result.Offset());
}

bool isValidJson(std::string_view text) {
    return jsonError(text).empty();
}

}  // namespace crank::sdk::http
