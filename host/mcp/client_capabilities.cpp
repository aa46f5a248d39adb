#include "mcp/client_capabilities.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace crank::mcp {

std::string keptClientCapabilities(const rapidjson::Value& capabilities) {
    if (!capabilities.IsObject()) {
        return "{}";
    }
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    writer.StartObject();
    for (const char* name : kKeptClientCapabilities) {
        const auto it = capabilities.FindMember(name);
        if (it == capabilities.MemberEnd() || !it->value.IsObject()) {
            continue;
        }
        rapidjson::StringBuffer member;
        rapidjson::Writer<rapidjson::StringBuffer> memberWriter(member);
        it->value.Accept(memberWriter);
        writer.Key(name);
        if (member.GetSize() <= kMaxClientCapabilityBytes) {
            writer.RawValue(member.GetString(), member.GetSize(), rapidjson::kObjectType);
        } else {
            writer.StartObject();
            writer.EndObject();
        }
    }
    writer.EndObject();
    return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace crank::mcp
