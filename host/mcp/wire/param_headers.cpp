#include "mcp/wire/param_headers.h"

#include <rapidjson/document.h>

#include "json/json_members.h"

namespace crank::mcp {

std::vector<ParamHeader> compileParamHeaders(std::string_view input_schema_json) {
    std::vector<ParamHeader> out;
    if (input_schema_json.find("x-mcp-header") == std::string_view::npos) {
        return out;  // nothing declared: the common case, without parsing the schema
    }
    json::Document schema;
    if (!json::parseObject(input_schema_json, schema) || !schema.HasMember("properties") ||
        !schema["properties"].IsObject()) {
        return out;
    }
    const rapidjson::Value& properties = schema["properties"];
    for (auto property = properties.MemberBegin(); property != properties.MemberEnd(); ++property) {
        if (!property->value.IsObject()) {
            continue;
        }
        const auto declared = property->value.FindMember("x-mcp-header");
        if (declared == property->value.MemberEnd() || !declared->value.IsString() ||
            declared->value.GetStringLength() == 0) {
            continue;
        }
        out.push_back(ParamHeader{
            std::string(property->name.GetString(), property->name.GetStringLength()),
            "Mcp-Param-" +
                std::string(declared->value.GetString(), declared->value.GetStringLength())});
    }
    return out;
}

}  // namespace crank::mcp
