#pragma once

// RapidJSON values as compact JSON text, and string members, for the mcp plugin's JSON-RPC
// plumbing.

#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace crank::mcpc {

inline std::string jsonText(const rapidjson::Value& v) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    v.Accept(writer);
    return {buffer.GetString(), buffer.GetSize()};
}

/// The string member `name` of `object`; "" when `object` is not an object, has no such member,
/// or it is not a string.
inline std::string stringMember(const rapidjson::Value& object, const char* name) {
    if (!object.IsObject()) {
        return {};
    }
    const auto it = object.FindMember(name);
    return it != object.MemberEnd() && it->value.IsString()
               ? std::string(it->value.GetString(), it->value.GetStringLength())
               : std::string();
}

}  // namespace crank::mcpc
