#pragma once

// The exact value of a JSON number, read from its text: two spellings of one number ("7",
// "7.0", "7e0", "70E-1") give the same canonical text, and no digit is lost to a double or a
// 64-bit integer (2^64 and 2^64+1 differ). Used wherever numbers must compare by value while
// their text is what arrived: routing headers against arguments, digests of arguments.
//
// THREADING: pure functions.

#include <optional>
#include <string>
#include <string_view>

namespace crank::json {

/// Longest number text read (bytes): a longer one is refused rather than canonicalized.
inline constexpr std::size_t kMaxNumberTextBytes = 1024;

/// The canonical text of the JSON number `text` (RFC 8259: `-?(0|[1-9][0-9]*)(\.[0-9]+)?
/// ([eE][+-]?[0-9]+)?`, nothing around it): `[-]D` or `[-]DeN`, where D is the significant
/// digits without leading or trailing zeros and N the power of ten they are multiplied by
/// (omitted when 0); zero of any spelling is "0". nullopt when `text` is not a JSON number, is
/// over kMaxNumberTextBytes, or its exponent is beyond ±10^15.
std::optional<std::string> canonicalNumber(std::string_view text);

}  // namespace crank::json
