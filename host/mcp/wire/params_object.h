#pragma once

// Reading a request's params as a RapidJSON object, for the handlers that need more of it than
// extractMember() gives. Only for .cpp files of host/mcp (RapidJSON stays out of their headers).

#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace crank::mcp {

/// Parses `json` (an object, or empty text for {}) into `doc`; false when it is not an object.
bool parseParamsObject(std::string_view json, rapidjson::Document& doc);

/// The string member `key` of `object`; "" when absent or not a string.
std::string memberString(const rapidjson::Value& object, const char* key);

}  // namespace crank::mcp
