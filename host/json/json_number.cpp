#include "json/json_number.h"

#include <cstdint>

namespace crank::json {
namespace {

constexpr std::int64_t kMaxExponent = 1'000'000'000'000'000;  // 10^15

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

}  // namespace

std::optional<std::string> canonicalNumber(std::string_view text) {
    if (text.empty() || text.size() > kMaxNumberTextBytes) {
        return std::nullopt;
    }
    std::size_t i = 0;
    const bool negative = text[i] == '-';
    if (negative) {
        ++i;
    }
    // The integer part: 0, or a digit 1-9 and more digits.
    const std::size_t int_start = i;
    if (i == text.size() || !isDigit(text[i])) {
        return std::nullopt;
    }
    if (text[i] == '0') {
        ++i;
    } else {
        while (i < text.size() && isDigit(text[i])) {
            ++i;
        }
    }
    const std::string_view int_part = text.substr(int_start, i - int_start);
    std::string_view frac_part;
    if (i < text.size() && text[i] == '.') {
        const std::size_t frac_start = ++i;
        while (i < text.size() && isDigit(text[i])) {
            ++i;
        }
        if (i == frac_start) {
            return std::nullopt;  // a point needs a digit after it
        }
        frac_part = text.substr(frac_start, i - frac_start);
    }
    std::int64_t exponent = 0;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        bool exp_negative = false;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
            exp_negative = text[i] == '-';
            ++i;
        }
        const std::size_t exp_start = i;
        while (i < text.size() && isDigit(text[i])) {
            if (exponent > kMaxExponent) {
                return std::nullopt;
            }
            exponent = exponent * 10 + (text[i] - '0');
            ++i;
        }
        if (i == exp_start || exponent > kMaxExponent) {
            return std::nullopt;
        }
        if (exp_negative) {
            exponent = -exponent;
        }
    }
    if (i != text.size()) {
        return std::nullopt;
    }
    // value = digits(int_part frac_part) * 10^(exponent - frac digits); strip the zeros.
    std::string digits;
    digits.reserve(int_part.size() + frac_part.size());
    digits.append(int_part).append(frac_part);
    exponent -= static_cast<std::int64_t>(frac_part.size());
    const std::size_t first = digits.find_first_not_of('0');
    if (first == std::string::npos) {
        return std::string("0");
    }
    digits.erase(0, first);
    const std::size_t last = digits.find_last_not_of('0');
    exponent += static_cast<std::int64_t>(digits.size() - 1 - last);
    digits.erase(last + 1);
    std::string out;
    out.reserve(digits.size() + 24);
    if (negative) {
        out += '-';
    }
    out += digits;
    if (exponent != 0) {
        out += 'e';
        out += std::to_string(exponent);
    }
    return out;
}

}  // namespace crank::json
