#pragma once

// Poco 1.11 decodes RFC 2047 encoded words ("=?charset?B?...?=") in every header value it reads,
// and mangles any value holding "=?" that is not one (it drops the "=?"). HTTP has no such
// encoding (RFC 9110 §5.5: a field value is its octets), and MCP 2026-07-28 sends routing header
// values as "=?base64?...?=", which Poco would change before the endpoint sees them. crankd
// therefore puts back, after Poco has parsed a head, the value each field had on the wire.
//
// THREADING: pure functions.

#include <optional>
#include <string>
#include <string_view>

namespace Poco::Net {
class MessageHeader;
}  // namespace Poco::Net

namespace crank::http {

/// The head at the start of `bytes` (a request's bytes not yet read by Poco), through its blank
/// line, when it is complete and holds "=?" (a value Poco may change); nullopt otherwise. Cheap:
/// the common head has none, and is left alone.
std::optional<std::string> headToRestore(std::string_view bytes);

/// Replaces every field of `parsed` (the MessageHeader Poco read from `head`) whose name has a
/// value holding "=?" in `head` with the values of that name as the head has them (leading
/// whitespace dropped, as Poco does), in their order. Lines without a colon are skipped, as Poco
/// skips them.
void restoreRawValues(std::string_view head, Poco::Net::MessageHeader& parsed);

}  // namespace crank::http
