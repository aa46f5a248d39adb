// Crank SDK test kit: a tiny JSON checker, so that the fake host needs no JSON library.
// Header-only, C++17, standard library only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crank::testing {

namespace detail {

/// A strict RFC 8259 reader over a view: enough to check a document and pick top-level string
/// members. Nesting is bounded (deeper documents are refused rather than overflowing the stack).
class JsonReader {
public:
    explicit JsonReader(std::string_view text) noexcept : text_(text) {}

    /// Checks that the whole text is exactly one JSON value (whitespace around allowed).
    bool document() {
        skipSpace();
        if (!value(0)) {
            return false;
        }
        skipSpace();
        return pos_ == text_.size();
    }

    /// When the text is an object, the decoded value of its top-level string member `key`.
    std::optional<std::string> stringMember(std::string_view key) {
        skipSpace();
        if (!eat('{')) {
            return std::nullopt;
        }
        skipSpace();
        if (eat('}')) {
            return std::nullopt;
        }
        for (;;) {
            skipSpace();
            std::string name;
            if (!string(&name)) {
                return std::nullopt;
            }
            skipSpace();
            if (!eat(':')) {
                return std::nullopt;
            }
            skipSpace();
            if (name == key && peek() == '"') {
                std::string out;
                if (!string(&out)) {
                    return std::nullopt;
                }
                return out;
            }
            if (!value(1)) {
                return std::nullopt;
            }
            skipSpace();
            if (eat(',')) {
                continue;
            }
            return std::nullopt;
        }
    }

    /// The first non-space character of the text ('\0' when none).
    char firstChar() {
        skipSpace();
        return peek();
    }

private:
    static constexpr int kMaxDepth = 256;

    char peek() const noexcept { return pos_ < text_.size() ? text_[pos_] : '\0'; }
    bool eat(char c) noexcept {
        if (peek() == c && pos_ < text_.size()) {
            ++pos_;
            return true;
        }
        return false;
    }
    void skipSpace() noexcept {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                       text_[pos_] == '\n' || text_[pos_] == '\r')) {
            ++pos_;
        }
    }
    bool literal(std::string_view word) noexcept {
        if (text_.substr(pos_, word.size()) == word) {
            pos_ += word.size();
            return true;
        }
        return false;
    }

    bool value(int depth) {
        if (depth > kMaxDepth) {
            return false;
        }
        switch (peek()) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string(nullptr);
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

    bool object(int depth) {
        eat('{');
        skipSpace();
        if (eat('}')) {
            return true;
        }
        for (;;) {
            skipSpace();
            if (!string(nullptr)) {
                return false;
            }
            skipSpace();
            if (!eat(':')) {
                return false;
            }
            skipSpace();
            if (!value(depth + 1)) {
                return false;
            }
            skipSpace();
            if (eat('}')) {
                return true;
            }
            if (!eat(',')) {
                return false;
            }
        }
    }

    bool array(int depth) {
        eat('[');
        skipSpace();
        if (eat(']')) {
            return true;
        }
        for (;;) {
            skipSpace();
            if (!value(depth + 1)) {
                return false;
            }
            skipSpace();
            if (eat(']')) {
                return true;
            }
            if (!eat(',')) {
                return false;
            }
        }
    }

    static bool isDigit(char c) noexcept { return c >= '0' && c <= '9'; }

    bool number() noexcept {
        const std::size_t start = pos_;
        eat('-');
        if (eat('0')) {
            // no leading zeros
        } else if (isDigit(peek())) {
            while (isDigit(peek())) {
                ++pos_;
            }
        } else {
            return false;
        }
        if (eat('.')) {
            if (!isDigit(peek())) {
                return false;
            }
            while (isDigit(peek())) {
                ++pos_;
            }
        }
        if (peek() == 'e' || peek() == 'E') {
            ++pos_;
            if (peek() == '+' || peek() == '-') {
                ++pos_;
            }
            if (!isDigit(peek())) {
                return false;
            }
            while (isDigit(peek())) {
                ++pos_;
            }
        }
        return pos_ > start;
    }

    bool hex4(std::uint32_t& out) noexcept {
        out = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = peek();
            std::uint32_t digit = 0;
            if (c >= '0' && c <= '9') {
                digit = static_cast<std::uint32_t>(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                digit = static_cast<std::uint32_t>(c - 'a' + 10);
            } else if (c >= 'A' && c <= 'F') {
                digit = static_cast<std::uint32_t>(c - 'A' + 10);
            } else {
                return false;
            }
            out = out * 16 + digit;
            ++pos_;
        }
        return true;
    }

    static void appendUtf8(std::string& out, std::uint32_t cp) {
        if (cp < 0x80) {
            out.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
            out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
            out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
    }

    /// A string; decoded into `*out` when given. Raw control characters are refused.
    bool string(std::string* out) {
        if (!eat('"')) {
            return false;
        }
        for (;;) {
            if (pos_ >= text_.size()) {
                return false;
            }
            const char c = text_[pos_++];
            if (c == '"') {
                return true;
            }
            if (static_cast<unsigned char>(c) < 0x20) {
                return false;
            }
            if (c != '\\') {
                if (out != nullptr) {
                    out->push_back(c);
                }
                continue;
            }
            const char e = peek();
            ++pos_;
            char decoded = 0;
            switch (e) {
                case '"':
                case '\\':
                case '/':
                    decoded = e;
                    break;
                case 'b':
                    decoded = '\b';
                    break;
                case 'f':
                    decoded = '\f';
                    break;
                case 'n':
                    decoded = '\n';
                    break;
                case 'r':
                    decoded = '\r';
                    break;
                case 't':
                    decoded = '\t';
                    break;
                case 'u': {
                    std::uint32_t cp = 0;
                    if (!hex4(cp)) {
                        return false;
                    }
                    if (cp >= 0xD800 && cp < 0xDC00 && text_.substr(pos_, 2) == "\\u") {
                        pos_ += 2;
                        std::uint32_t low = 0;
                        if (!hex4(low) || low < 0xDC00 || low >= 0xE000) {
                            return false;
                        }
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    }
                    if (out != nullptr) {
                        appendUtf8(*out, cp);
                    }
                    continue;
                }
                default:
                    return false;
            }
            if (out != nullptr) {
                out->push_back(decoded);
            }
        }
    }

    std::string_view text_;
    std::size_t pos_ = 0;
};

}  // namespace detail

/// True when `text` is exactly one valid JSON value.
inline bool isValidJson(std::string_view text) {
    return detail::JsonReader(text).document();
}

/// True when `text` is a valid JSON object.
inline bool isJsonObject(std::string_view text) {
    return isValidJson(text) && detail::JsonReader(text).firstChar() == '{';
}

/// The decoded value of the top-level string member `key` of the JSON object `text`, or nullopt.
inline std::optional<std::string> jsonStringMember(std::string_view text, std::string_view key) {
    if (!isJsonObject(text)) {
        return std::nullopt;
    }
    return detail::JsonReader(text).stringMember(key);
}

}  // namespace crank::testing
