#pragma once

#include <cstdint>
#include <string_view>

#include "json/json_value.h"

namespace crank::json {

/// A streaming 64-bit hash of a JSON value's token sequence, fed either from a parsed value
/// (hashValue) or from SAX events (a RapidJSON handler calls the methods as tokens arrive), with
/// the same result for the same value. Whitespace and string escapes do not matter (the tokens
/// do); member order does (`{"a":1,"b":2}` and `{"b":2,"a":1}` differ); numbers hash by value
/// class: every integer that fits int64 as that integer, other integers as uint64, the rest as
/// the bits of their double (so `1` and `1.0` differ). Not cryptographic: for dedup only.
class JsonHasher {
public:
    void null() { mixWord(tag_null); }
    void boolean(bool b) { mixWord(b ? tag_true : tag_false); }
    void integer(std::int64_t i);
    void unsignedInteger(std::uint64_t u);
    void floating(double d);
    void string(std::string_view text) { mixBytes(tag_string, text); }
    void key(std::string_view text) { mixBytes(tag_key, text); }
    void startObject() { mixWord(tag_start_object); }
    void endObject() { mixWord(tag_end_object); }
    void startArray() { mixWord(tag_start_array); }
    void endArray() { mixWord(tag_end_array); }

    std::uint64_t digest() const;
    void reset() { state_ = seed; }

private:
    static constexpr std::uint64_t seed = 0x243f6a8885a308d3ULL;
    static constexpr std::uint64_t tag_null = 1, tag_false = 2, tag_true = 3, tag_int = 4,
                                   tag_uint = 5, tag_double = 6, tag_string = 7, tag_key = 8,
                                   tag_start_object = 9, tag_end_object = 10, tag_start_array = 11,
                                   tag_end_array = 12;
    void mixWord(std::uint64_t word);
    void mixBytes(std::uint64_t tag, std::string_view bytes);
    std::uint64_t state_ = seed;
};

/// The JsonHasher digest of `value`. Recursion is bounded by the value's depth (parse with a depth
/// limit first).
std::uint64_t hashValue(const Value& value);

}  // namespace crank::json
