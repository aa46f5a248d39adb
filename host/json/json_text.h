#pragma once

#include <string>
#include <string_view>

#include "json/json_value.h"

namespace crank::json {

/// Compact JSON text of `value` (RapidJSON's writer: no whitespace, members in document order).
std::string toJsonText(const Value& value);
/// Appends the compact JSON text of `value` to `out`.
void appendJsonText(std::string& out, const Value& value);

/// A short human description of a value for messages ("got ..."): `null`, `true`, `12`, `1.5`,
/// `"abc"` (strings quoted, control characters escaped, cut at 40 bytes on a UTF-8 boundary with
/// "..." appended), `an object`, `an array`. Hostile text never reaches a message raw or whole.
std::string describeValue(const Value& value);
/// Only the kind of a value ("a string", "a number", "an object", "true", "null", ...), never
/// its content: for messages about upstream data, which may hold values that must be redacted.
std::string_view describeType(const Value& value);
/// The same description for a string.
std::string describeText(std::string_view text);

/// The text a value stands for inside a longer string: a string as it is (no quotes), a number
/// or boolean as its JSON text, null as "", an object or array as compact JSON text.
void appendPlainText(std::string& out, const Value& value);

}  // namespace crank::json
