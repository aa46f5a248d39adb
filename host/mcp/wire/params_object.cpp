#include "mcp/wire/params_object.h"

namespace crank::mcp {

bool parseParamsObject(std::string_view json, rapidjson::Document& doc) {
    if (json.empty()) {
        doc.SetObject();
        return true;
    }
    doc.Parse(json.data(), json.size());
    return !doc.HasParseError() && doc.IsObject();
}

std::string memberString(const rapidjson::Value& object, const char* key) {
    const auto it = object.FindMember(key);
    if (it == object.MemberEnd() || !it->value.IsString()) {
        return {};
    }
    return {it->value.GetString(), it->value.GetStringLength()};
}

}  // namespace crank::mcp
