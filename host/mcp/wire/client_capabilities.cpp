#include "mcp/wire/client_capabilities.h"

#include <optional>
#include <utility>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "json/json_scanner.h"

namespace crank::mcp {

namespace {

/// The members of the object `json`; nullopt when it is not one.
std::optional<std::vector<json::scan::RawMember>> membersOf(std::string_view json) {
    json.remove_prefix(std::min(json.size(), json.find_first_not_of(" \t\r\n")));
    if (json.empty() || json.front() != '{') {
        return std::nullopt;
    }
    if (json == "{}") {
        return std::vector<json::scan::RawMember>{};  // declares none: nothing to read
    }
    Result<json::scan::RawEntry> object = json::scan::readObject(json);
    if (!object) {
        return std::nullopt;
    }
    return std::move(object->members);
}

/// True when `extensions_json` (an object) has the member `id` whose value is an object.
bool hasExtension(std::string_view extensions_json, std::string_view id) {
    const auto members = membersOf(extensions_json);
    if (!members) {
        return false;
    }
    const json::scan::RawValue* extension = json::scan::findMember(*members, id);
    return extension != nullptr && extension->type == json::scan::ValueType::object;
}

}  // namespace

ClientCapabilities::ClientCapabilities(std::string json) : json_(std::move(json)) {
    const auto members = membersOf(json_);
    if (!members) {
        return;
    }
    for (const json::scan::RawMember& member : *members) {
        known_ |= bitOf(member.name);
        if (member.name == "extensions" && member.value.type == json::scan::ValueType::object &&
            hasExtension(std::string_view(json_).substr(member.value.start,
                                                        member.value.end - member.value.start),
                         kTasksExtension)) {
            known_ |= kTasks;
        }
    }
}

unsigned ClientCapabilities::bitOf(std::string_view capability) {
    if (capability == "roots") {
        return kRoots;
    }
    if (capability == "sampling") {
        return kSampling;
    }
    if (capability == "elicitation") {
        return kElicitation;
    }
    return 0;
}

bool ClientCapabilities::declares(std::string_view capability) const {
    if (const unsigned bit = bitOf(capability); bit != 0) {
        return (known_ & bit) != 0;
    }
    // Not one crankd reads itself: asked of the text (a rare question, never on a call's path).
    const auto members = membersOf(json_);
    return members && json::scan::findMember(*members, capability) != nullptr;
}

bool ClientCapabilities::declaresExtension(std::string_view id) const {
    if (id == kTasksExtension) {
        return (known_ & kTasks) != 0;
    }
    const auto members = membersOf(json_);
    if (!members) {
        return false;
    }
    const json::scan::RawValue* extensions = json::scan::findMember(*members, "extensions");
    return extensions != nullptr && extensions->type == json::scan::ValueType::object &&
           hasExtension(std::string_view(json_).substr(extensions->start,
                                                       extensions->end - extensions->start),
                        id);
}

const SharedClientCapabilities& noClientCapabilities() {
    static const SharedClientCapabilities none = std::make_shared<const ClientCapabilities>();
    return none;
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
