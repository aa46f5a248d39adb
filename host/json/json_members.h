#pragma once

// The small readings of a parsed object that the host's handlers make again and again: an object
// parsed from text that may be empty, a string member, a copy with one string member set. One
// implementation for host/mcp, host/federation and host/admin.
//
// THREADING: pure functions.

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

#include "json/json_value.h"
#include "util/error.h"

namespace crank::json {

/// Nesting parseObject() accepts: deeper text is refused before anything recurses over it.
constexpr std::size_t kMaxObjectDepth = 128;

/// Parses `text` into `doc` (replacing its content) as parseJson() does, nested at most
/// kMaxObjectDepth deep; true when it is a JSON object. Empty text is the empty object (params
/// left out of a request). UTF-8 is not checked: a client's text was (the body's scan), and an
/// upstream's or a plugin's is passed on as it came, one bad byte costing no more than before.
/// No message: for text whose size crankd or an upstream's adapter already bounded, where only
/// "is it an object" matters; parseLenient() says why.
bool parseObject(std::string_view text, Document& doc);

/// parseJson() with parseObject()'s bounds (no byte limit, kMaxObjectDepth, UTF-8 unchecked):
/// for text from an upstream or a plugin whose failure is reported.
Result<void> parseLenient(std::string_view text, Document& doc);

/// For an object crankd wrote itself and has authenticated since (a sealed state's plaintext):
/// parsed iteratively (no recursion, whatever its depth) and without checking UTF-8, so that
/// whatever bytes were sealed open as they were. Never for text from outside.
bool parseOwnObject(std::string_view text, Document& doc);

/// parseObject() for any JSON value: false when `text` is not one (empty text included).
bool parseValue(std::string_view text, Document& doc);

/// The string member `name` of `object`; "" when `object` is not an object, or the member is
/// absent or not a string.
std::string stringMember(const Value& object, const char* name);

/// Compact JSON text of `object` with its member `name` set to the string `value` (added at the
/// end when missing).
std::string withStringMember(const Value& object, const char* name, std::string_view value);

}  // namespace crank::json
