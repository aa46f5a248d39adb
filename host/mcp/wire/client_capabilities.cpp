#include "mcp/wire/client_capabilities.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "mcp/wire/json_rpc.h"

namespace crank::mcp {

bool declaresCapability(std::string_view capabilities_json, std::string_view capability) {
    const Result<std::string> declared =
        extractMember(capabilities_json.empty() ? "{}" : capabilities_json, capability);
    return declared && !declared->empty();
}

bool declaresClientInput(std::string_view capabilities_json) {
    for (const char* capability : {"sampling", "elicitation", "roots"}) {
        if (declaresCapability(capabilities_json, capability)) {
            return true;
        }
    }
    return false;
}

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
