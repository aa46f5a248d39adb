#pragma once

// RapidJSON values as compact JSON text, for the mcp plugin's JSON-RPC plumbing.

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

}  // namespace crank::mcpc
