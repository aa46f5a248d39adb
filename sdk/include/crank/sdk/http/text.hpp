#pragma once

// Text helpers of crank's HTTP client and the plugins on it: UTF-8 repair, bounded excerpts, JSON
// checks without recursion.

#include <cstddef>
#include <string>
#include <string_view>

#include <crank/sdk/json.hpp>

namespace crank::sdk::http {

/// `text` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string validUtf8(std::string_view text);

/// At most `max_bytes` of `text` (valid UTF-8, cut on a character boundary), with "..." appended
/// when something was cut.
std::string excerpt(std::string_view text, std::size_t max_bytes);

/// True when `text` has a control character other than a tab (CR, LF, NUL, DEL...): what a
/// header name or value must not hold (it would end the header line: header injection).
bool hasControlCharacter(std::string_view text);

/// True when `text` is one complete JSON value (RFC 8259, UTF-8), parsed without recursion.
bool isValidJson(std::string_view text);

/// Why `text` is not one complete JSON value ("Missing a comma or ']' after an array element at
/// byte 7"), or "" when it is one.
std::string jsonError(std::string_view text);

/// crank/sdk/json.hpp's, here too.
using sdk::jsonNestingDepth;

}  // namespace crank::sdk::http
