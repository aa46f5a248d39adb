#pragma once

// RapidJSON values as compact JSON text, and string members, for the mcp plugin's JSON-RPC
// plumbing.

#include <cstddef>
#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <crank/sdk/json.hpp>

namespace crank::mcpc {

/// Nesting a server's message may have: deeper, it is refused as not JSON before anything
/// recurses over it (RapidJSON's reader, its writer and the host's readers all do), so that a
/// server sending a million '[' cannot overflow a thread's stack.
inline constexpr std::size_t kMaxMessageDepth = 256;

/// Parses one message of a server (`text`, as it came) into `doc`, iteratively and at most
/// kMaxMessageDepth deep. "" when it is JSON; else why not ("nested deeper than 256 levels",
/// "Missing a comma or ']' after an array element. at offset 12"), and `doc` holds null.
inline std::string parseServerMessage(std::string_view text, rapidjson::Document& doc) {
    if (sdk::jsonNestingDepth(text) > kMaxMessageDepth) {
        doc.SetNull();
        return "nested deeper than " + std::to_string(kMaxMessageDepth) + " levels";
    }
    doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
    if (!doc.HasParseError()) {
        return {};
    }
    std::string why = std::string(rapidjson::GetParseError_En(doc.GetParseError())) +
                      " at offset " + std::to_string(doc.GetErrorOffset());
    doc.SetNull();
    return why;
}

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
