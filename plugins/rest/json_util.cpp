#include "json_util.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace crank::rest {

std::string jsonStr(const rapidjson::Value& v) {
    return {v.GetString(), v.GetStringLength()};
}

std::string compactJson(const rapidjson::Value& v) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    v.Accept(writer);
    return {buffer.GetString(), buffer.GetSize()};
}

std::optional<std::string> scalarText(const rapidjson::Value& v) {
    if (v.IsString()) {
        return jsonStr(v);
    }
    if (v.IsBool()) {
        return std::string(v.GetBool() ? "true" : "false");
    }
    if (v.IsNumber()) {
        return compactJson(v);
    }
    return std::nullopt;
}

}  // namespace crank::rest
