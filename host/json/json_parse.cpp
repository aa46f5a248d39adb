#include "json/json_parse.h"

#include <cstdint>
#include <cstring>

#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "json/depth_limited_handler.h"

namespace crank::json {
namespace {

std::string prefixed(std::string_view where, const std::string& message) {
    return where.empty() ? message : fmt::format("{}: {}", where, message);
}

std::string lowerFirst(std::string message) {
    if (!message.empty() && message[0] >= 'A' && message[0] <= 'Z') {
        message[0] = static_cast<char>(message[0] - 'A' + 'a');
    }
    if (!message.empty() && message.back() == '.') {
        message.pop_back();
    }
    return message;
}

}  // namespace

bool isValidUtf8(std::string_view text) {
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const unsigned char* const end = p + text.size();
    while (p < end) {
        if (end - p >= 8) {
            std::uint64_t word = 0;
            std::memcpy(&word, p, sizeof word);
            if ((word & 0x8080808080808080ULL) == 0) {
                p += 8;
                continue;
            }
        }
        const unsigned char c = *p;
        if (c < 0x80U) {
            ++p;
            continue;
        }
        std::size_t n = 0;
        unsigned char lo = 0x80U;
        unsigned char hi = 0xBFU;
        if (c >= 0xC2U && c <= 0xDFU) {
            n = 1;
        } else if (c >= 0xE0U && c <= 0xEFU) {
            n = 2;
            lo = c == 0xE0U ? 0xA0U : 0x80U;  // no overlong forms
            hi = c == 0xEDU ? 0x9FU : 0xBFU;  // no surrogates
        } else if (c >= 0xF0U && c <= 0xF4U) {
            n = 3;
            lo = c == 0xF0U ? 0x90U : 0x80U;
            hi = c == 0xF4U ? 0x8FU : 0xBFU;  // nothing above U+10FFFF
        } else {
            return false;
        }
        if (static_cast<std::size_t>(end - p) <= n || p[1] < lo || p[1] > hi) {
            return false;
        }
        for (std::size_t i = 2; i <= n; ++i) {
            if ((p[i] & 0xC0U) != 0x80U) {
                return false;
            }
        }
        p += n + 1;
    }
    return true;
}

Result<void> parseJson(std::string_view text, Document& doc, std::string_view where,
                       const ParseLimits& limits) {
    doc.SetNull();
    if (text.size() > limits.max_bytes) {
        return Error{ErrorCode::invalid_argument,
                     prefixed(where, fmt::format("larger than {} bytes", limits.max_bytes))};
    }
    rapidjson::MemoryStream stream(text.data(), text.size());
    rapidjson::Reader reader;
    rapidjson::ParseResult result;
    bool too_deep = false;
    bool too_big = false;
    auto generate = [&](Document& target) {
        DepthLimitedHandler handler(target, limits.max_depth);
        result = limits.validate_utf8
                     ? reader.Parse<rapidjson::kParseValidateEncodingFlag>(stream, handler)
                     : reader.Parse<rapidjson::kParseDefaultFlags>(stream, handler);
        too_deep = handler.tooDeep();
        too_big = handler.tooBig();
        return !result.IsError() && stream.Tell() == text.size();
    };
    doc.Populate(generate);
    if (too_deep) {
        doc.SetNull();
        return Error{ErrorCode::invalid_argument,
                     prefixed(where, fmt::format("nested deeper than {} levels at byte {}",
                                                 limits.max_depth, result.Offset() - 1))};
    }
    if (too_big) {
        doc.SetNull();
        return Error{ErrorCode::invalid_argument,
                     prefixed(where, fmt::format("malformed JSON at byte {}: number too big to be "
                                                 "stored in double",
                                                 result.Offset()))};
    }
    if (result.IsError() && result.Code() == rapidjson::kParseErrorStringEscapeInvalid &&
        result.Offset() < text.size() &&
        static_cast<unsigned char>(text[result.Offset()]) < 0x20U) {
        // RapidJSON calls a raw control character an invalid escape.
        doc.SetNull();
        return Error{ErrorCode::invalid_argument,
                     prefixed(where, fmt::format("malformed JSON at byte {}: control character "
                                                 "0x{:02X} in a string (it must be escaped)",
                                                 result.Offset(),
                                                 static_cast<unsigned>(text[result.Offset()])))};
    }
    if (result.IsError()) {
        doc.SetNull();
        return Error{
            ErrorCode::invalid_argument,
            prefixed(where, fmt::format("malformed JSON at byte {}: {}", result.Offset(),
                                        lowerFirst(rapidjson::GetParseError_En(result.Code()))))};
    }
    if (stream.Tell() != text.size()) {
        // MemoryStream reads a NUL byte as the end of the text: what follows it is garbage.
        doc.SetNull();
        return Error{ErrorCode::invalid_argument,
                     prefixed(where, fmt::format("malformed JSON at byte {}: unexpected NUL byte",
                                                 stream.Tell()))};
    }
    return {};
}

}  // namespace crank::json
