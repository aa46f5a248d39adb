#include "key_text.h"

#include <charconv>
#include <cmath>

namespace crank::aggregators {

std::string_view cutUtf8(std::string_view text, std::size_t max_bytes) {
    if (text.size() <= max_bytes) {
        return text;
    }
    std::size_t end = max_bytes;
    // Back off continuation bytes (10xxxxxx) so that the cut lands on a character boundary.
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) {
        --end;
    }
    return text.substr(0, end);
}

std::optional<std::string_view> keyText(const rapidjson::Value& value,
                                        char (&buffer)[kKeyBufferSize]) {
    switch (value.GetType()) {
        case rapidjson::kStringType:
            return cutUtf8(std::string_view(value.GetString(), value.GetStringLength()),
                           kMaxKeyBytes);
        case rapidjson::kNullType:
            return std::string_view("null");
        case rapidjson::kTrueType:
            return std::string_view("true");
        case rapidjson::kFalseType:
            return std::string_view("false");
        case rapidjson::kNumberType: {
            std::to_chars_result result{};
            if (value.IsInt64()) {
                result = std::to_chars(buffer, buffer + kKeyBufferSize, value.GetInt64());
            } else if (value.IsUint64()) {
                result = std::to_chars(buffer, buffer + kKeyBufferSize, value.GetUint64());
            } else {
                const double number = value.GetDouble();
                // An integral double within int64 is written as that integer (3.0 -> "3").
                if (std::trunc(number) == number && std::fabs(number) < 9.0e18) {
                    result = std::to_chars(buffer, buffer + kKeyBufferSize,
                                           static_cast<long long>(number));
                } else {
                    result = std::to_chars(buffer, buffer + kKeyBufferSize, number);
                }
            }
            return std::string_view(buffer, static_cast<std::size_t>(result.ptr - buffer));
        }
        default:
            return std::nullopt;
    }
}

}  // namespace crank::aggregators
