#include "json/json_members.h"

#include <cstddef>
#include <limits>

#include <rapidjson/document.h>

#include "json/json_parse.h"
#include "json/json_text.h"

namespace crank::json {

bool parseObject(std::string_view text, Document& doc) {
    if (text.empty()) {
        doc.SetObject();
        return true;
    }
    return parseValue(text, doc) && doc.IsObject();
}

bool parseOwnObject(std::string_view text, Document& doc) {
    doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
    return !doc.HasParseError() && doc.IsObject();
}

Result<void> parseLenient(std::string_view text, Document& doc) {
    ParseLimits limits;
    limits.max_bytes = std::numeric_limits<std::size_t>::max();
    limits.max_depth = kMaxObjectDepth;
    limits.validate_utf8 = false;
    return parseJson(text, doc, {}, limits);
}

bool parseValue(std::string_view text, Document& doc) {
    return static_cast<bool>(parseLenient(text, doc));
}

std::string stringMember(const Value& object, const char* name) {
    if (!object.IsObject()) {
        return {};
    }
    const auto it = object.FindMember(name);
    return it != object.MemberEnd() && it->value.IsString()
               ? std::string(it->value.GetString(), it->value.GetStringLength())
               : std::string();
}

std::string withStringMember(const Value& object, const char* name, std::string_view value) {
    Document copy;
    copy.CopyFrom(object, copy.GetAllocator());
    Value v(value.data(), static_cast<rapidjson::SizeType>(value.size()), copy.GetAllocator());
    if (copy.HasMember(name)) {
        copy[name] = v;
    } else {
        copy.AddMember(Value(name, copy.GetAllocator()), v, copy.GetAllocator());
    }
    return toJsonText(copy);
}

}  // namespace crank::json
