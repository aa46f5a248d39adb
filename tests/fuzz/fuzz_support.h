#pragma once

// Helpers shared by the fuzz targets of tests/fuzz (docs/testing.md, "Fuzzing"): splitting one
// input into parts, and the checks a target makes on what a parser produced. Header-only, so that
// each target links only the library it fuzzes. The JSON and UTF-8 checks are written here, not
// taken from RapidJSON, so that the checks do not share the mistakes of the code they check.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace crank::fuzz {

/// The input as text.
inline std::string_view asText(const std::uint8_t* data, std::size_t size) {
    return size == 0 ? std::string_view()
                     : std::string_view(reinterpret_cast<const char*>(data), size);
}

/// What separates the parts of a multi-part input: a line holding only "%%".
inline constexpr std::string_view kSeparator = "\n%%\n";

/// The input cut at each separator, at most `max_parts` parts (the last one keeps any further
/// separators); always at least one part. Missing parts are empty.
inline std::vector<std::string_view> splitParts(std::string_view input, std::size_t max_parts) {
    std::vector<std::string_view> parts;
    while (parts.size() + 1 < max_parts) {
        const std::size_t at = input.find(kSeparator);
        if (at == std::string_view::npos) {
            break;
        }
        parts.push_back(input.substr(0, at));
        input.remove_prefix(at + kSeparator.size());
    }
    parts.push_back(input);
    while (parts.size() < max_parts) {
        parts.emplace_back();
    }
    return parts;
}

/// Stops the run with a message: a finding of the target's own checks (libFuzzer saves the input
/// as a crash).
[[noreturn]] inline void fail(std::string_view what, std::string_view detail = {}) {
    std::fprintf(stderr, "fuzz check failed: %.*s\n", static_cast<int>(what.size()), what.data());
    if (!detail.empty()) {
        constexpr std::size_t kShown = 2000;
        const std::size_t n = detail.size() < kShown ? detail.size() : kShown;
        std::fprintf(stderr, "  %.*s%s\n", static_cast<int>(n), detail.data(),
                     n < detail.size() ? "..." : "");
    }
    std::abort();
}

/// Checks `condition`; fail() with `what` and `detail` when it does not hold.
inline void check(bool condition, std::string_view what, std::string_view detail = {}) {
    if (!condition) {
        fail(what, detail);
    }
}

/// The length of the UTF-8 sequence at `at` (RFC 3629: no overlong forms, no surrogates, nothing
/// above U+10FFFF), or 0 when there is none: one sequence at a time, a plain reference for the
/// fast checks of the code under test.
inline std::size_t utf8Length(std::string_view text, std::size_t at) {
    const auto c = static_cast<unsigned char>(text[at]);
    if (c < 0x80U) {
        return 1;
    }
    std::size_t n = 0;
    std::uint32_t code = 0;
    if (c >= 0xC0U && c < 0xE0U) {
        n = 1;
        code = c & 0x1FU;
    } else if (c >= 0xE0U && c < 0xF0U) {
        n = 2;
        code = c & 0x0FU;
    } else if (c >= 0xF0U && c < 0xF8U) {
        n = 3;
        code = c & 0x07U;
    } else {
        return 0;
    }
    if (at + n >= text.size()) {
        return 0;  // cut short
    }
    for (std::size_t k = 1; k <= n; ++k) {
        const auto d = static_cast<unsigned char>(text[at + k]);
        if ((d & 0xC0U) != 0x80U) {
            return 0;
        }
        code = (code << 6U) | (d & 0x3FU);
    }
    constexpr std::uint32_t kSmallest[] = {0, 0x80, 0x800, 0x10000};
    if (code < kSmallest[n] || code > 0x10FFFFU || (code >= 0xD800U && code <= 0xDFFFU)) {
        return 0;  // overlong, too large, or a surrogate
    }
    return n + 1;
}

/// True when `text` is UTF-8 (see utf8Length).
inline bool isUtf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = utf8Length(text, i);
        if (n == 0) {
            return false;
        }
        i += n;
    }
    return true;
}

/// A reader of strict JSON (RFC 8259) written for the checks alone, so that they do not share
/// RapidJSON's mistakes with the code under test. No recursion: any depth is checked.
class StrictJsonReader {
public:
    explicit StrictJsonReader(std::string_view text) : s_(text) {}

    /// Exactly one JSON value, whitespace around it allowed; strings UTF-8, without control
    /// characters, and without \u escapes of unpaired UTF-16 surrogates.
    bool valid() {
        enum class Want { value, value_or_close, key, key_or_close };
        Want want = Want::value;
        while (true) {
            skipSpace();
            if (i_ >= s_.size()) {
                return false;
            }
            const char c = s_[i_];
            if (want == Want::key || want == Want::key_or_close) {
                if (want == Want::key_or_close && c == '}') {
                    ++i_;
                    stack_.pop_back();
                } else {
                    if (c != '"' || !string()) {
                        return false;
                    }
                    skipSpace();
                    if (i_ >= s_.size() || s_[i_] != ':') {
                        return false;
                    }
                    ++i_;
                    want = Want::value;
                    continue;
                }
            } else if (want == Want::value_or_close && c == ']') {
                ++i_;
                stack_.pop_back();
            } else if (c == '{' || c == '[') {
                stack_.push_back(c);
                ++i_;
                want = c == '{' ? Want::key_or_close : Want::value_or_close;
                continue;
            } else if (!scalar()) {
                return false;
            }
            // A value ended: close what ends with it, then expect what follows a ','.
            while (true) {
                skipSpace();
                if (stack_.empty()) {
                    return i_ == s_.size();
                }
                if (i_ >= s_.size()) {
                    return false;
                }
                const bool object = stack_.back() == '{';
                if (s_[i_] == ',') {
                    ++i_;
                    want = object ? Want::key : Want::value;
                    break;
                }
                if (s_[i_] != (object ? '}' : ']')) {
                    return false;
                }
                ++i_;
                stack_.pop_back();
            }
        }
    }

private:
    void skipSpace() {
        while (i_ < s_.size() &&
               (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
            ++i_;
        }
    }

    bool literal(std::string_view word) {
        if (s_.substr(i_, word.size()) != word) {
            return false;
        }
        i_ += word.size();
        return true;
    }

    bool digits() {
        const std::size_t start = i_;
        while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
            ++i_;
        }
        return i_ > start;
    }

    bool number() {
        if (s_[i_] == '-') {
            ++i_;
        }
        if (i_ < s_.size() && s_[i_] == '0') {
            ++i_;
        } else if (!digits()) {
            return false;
        }
        if (i_ < s_.size() && s_[i_] == '.') {
            ++i_;
            if (!digits()) {
                return false;
            }
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            ++i_;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) {
                ++i_;
            }
            if (!digits()) {
                return false;
            }
        }
        return true;
    }

    /// Four hex digits after "\u", as a UTF-16 code unit; -1 when they are not.
    long hex4() {
        if (i_ + 4 > s_.size()) {
            return -1;
        }
        long unit = 0;
        for (std::size_t k = 0; k < 4; ++k) {
            const char h = s_[i_ + k];
            const int digit = h >= '0' && h <= '9'   ? h - '0'
                              : h >= 'a' && h <= 'f' ? h - 'a' + 10
                              : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                     : -1;
            if (digit < 0) {
                return -1;
            }
            unit = unit * 16 + digit;
        }
        i_ += 4;
        return unit;
    }

    bool string() {
        ++i_;  // the opening quote
        while (i_ < s_.size()) {
            const auto c = static_cast<unsigned char>(s_[i_]);
            if (c == '"') {
                ++i_;
                return true;
            }
            if (c < 0x20U) {
                return false;  // a control character must be escaped
            }
            if (c != '\\') {
                const std::size_t n = utf8Length(s_, i_);
                if (n == 0) {
                    return false;
                }
                i_ += n;
                continue;
            }
            if (++i_ >= s_.size()) {
                return false;
            }
            const char e = s_[i_++];
            if (e == 'u') {
                const long unit = hex4();
                if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) {
                    return false;  // not hex, or a low surrogate alone
                }
                if (unit >= 0xD800 && unit <= 0xDBFF) {  // a high surrogate: a low one follows
                    if (!literal("\\u")) {
                        return false;
                    }
                    const long low = hex4();
                    if (low < 0xDC00 || low > 0xDFFF) {
                        return false;
                    }
                }
            } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
                return false;
            }
        }
        return false;  // not closed
    }

    bool scalar() {
        switch (s_[i_]) {
            case '"':
                return string();
            case 't':
                return literal("true");
            case 'f':
                return literal("false");
            case 'n':
                return literal("null");
            default:
                return number();
        }
    }

    std::string_view s_;
    std::size_t i_ = 0;
    std::vector<char> stack_;  // the open containers, '{' or '['
};

/// True when `text` is exactly one strict JSON value (StrictJsonReader).
inline bool isStrictJson(std::string_view text) {
    return StrictJsonReader(text).valid();
}

/// isStrictJson() and a JSON object.
inline bool isJsonObject(std::string_view text) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && text[first] == '{' && isStrictJson(text);
}

}  // namespace crank::fuzz
