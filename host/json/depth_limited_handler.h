#pragma once

// A SAX handler that builds a RapidJSON Document and refuses nesting deeper than a limit, before
// the document (or anything after it) recurses over it. For .cpp files that parse outside bytes
// (it includes RapidJSON's document.h).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace crank::json {

/// True when a string as RapidJSON decoded it holds a lone UTF-16 surrogate. RapidJSON refuses a
/// lone high surrogate escape ("\ud800") but decodes a lone low one ("\udc00") into the bytes
/// ED B0..BF xx, which are not UTF-8 (input bytes are validated, so only an escape makes them).
inline bool hasLoneSurrogate(std::string_view text) {
    for (auto at = text.find('\xED'); at != std::string_view::npos;
         at = text.find('\xED', at + 1)) {
        if (at + 1 < text.size() && static_cast<unsigned char>(text[at + 1]) >= 0xA0U) {
            return true;
        }
    }
    return false;
}

/// `text` with each lone surrogate (three bytes, see hasLoneSurrogate) replaced by U+FFFD (three
/// bytes too), as a UTF-16 decoder replaces an unpaired surrogate.
inline std::string replaceLoneSurrogates(std::string_view text) {
    std::string out(text);
    for (std::size_t i = 0; i + 2 < out.size(); ++i) {
        if (out[i] == '\xED' && static_cast<unsigned char>(out[i + 1]) >= 0xA0U) {
            out.replace(i, 3, "\xEF\xBF\xBD");
            i += 2;
        }
    }
    return out;
}

// RapidJSON handler and stream concepts name these methods.
// NOLINTBEGIN(readability-identifier-naming)
/// Forwards SAX events to a Document and refuses nesting deeper than the limit, before the
/// document (or anything after it) recurses over it. Strings and keys with a lone surrogate escape
/// get U+FFFD in its place, and a number past the range of a double stops the parse (tooBig()):
/// the document then holds only what writes as valid JSON again.
class DepthLimitedHandler {
public:
    DepthLimitedHandler(rapidjson::Document& doc, std::size_t max_depth)
        : doc_(doc), max_depth_(max_depth) {}

    bool Null() { return doc_.Null(); }
    bool Bool(bool b) { return doc_.Bool(b); }
    bool Int(int i) { return doc_.Int(i); }
    bool Uint(unsigned u) { return doc_.Uint(u); }
    bool Int64(std::int64_t i) { return doc_.Int64(i); }
    bool Uint64(std::uint64_t u) { return doc_.Uint64(u); }
    bool Double(double d) {
        // RapidJSON 1.1.0 refuses 1e400 but reads 7e308 (past DBL_MAX) as infinity, which no
        // writer can write back: such a number is too big, as 1e400 is.
        if (!std::isfinite(d)) {
            too_big_ = true;
            return false;
        }
        return doc_.Double(d);
    }
    bool RawNumber(const char* str, rapidjson::SizeType length, bool copy) {
        return doc_.RawNumber(str, length, copy);
    }
    bool String(const char* str, rapidjson::SizeType length, bool copy) {
        if (hasLoneSurrogate({str, length})) {
            const std::string fixed = replaceLoneSurrogates({str, length});
            return doc_.String(fixed.data(), length, true);
        }
        return doc_.String(str, length, copy);
    }
    bool Key(const char* str, rapidjson::SizeType length, bool copy) {
        if (hasLoneSurrogate({str, length})) {
            const std::string fixed = replaceLoneSurrogates({str, length});
            return doc_.Key(fixed.data(), length, true);
        }
        return doc_.Key(str, length, copy);
    }
    bool StartObject() { return enter() && doc_.StartObject(); }
    bool EndObject(rapidjson::SizeType count) {
        --depth_;
        return doc_.EndObject(count);
    }
    bool StartArray() { return enter() && doc_.StartArray(); }
    bool EndArray(rapidjson::SizeType count) {
        --depth_;
        return doc_.EndArray(count);
    }

    bool tooDeep() const { return too_deep_; }
    /// A number was too big for a double (parsing stopped right after it).
    bool tooBig() const { return too_big_; }

private:
    bool enter() {
        if (++depth_ > max_depth_) {
            too_deep_ = true;
            return false;
        }
        return true;
    }

    rapidjson::Document& doc_;
    std::size_t max_depth_;
    std::size_t depth_ = 0;
    bool too_deep_ = false;
    bool too_big_ = false;
};
// NOLINTEND(readability-identifier-naming)

}  // namespace crank::json
