#include "any_json_check.h"

#include <array>
#include <string_view>

namespace crank::grpc_plugin {
namespace {

namespace pb = google::protobuf;

constexpr std::string_view any_type = "google.protobuf.Any";

/// The well-known types protobuf 3.21 writes through a renderer of their own inside an Any (its
/// ProtoStreamObjectWriter::AnyWriter), whose JSON there is {"@type", "value"}. Empty is not one.
bool hasOwnJsonForm(std::string_view full_name) {
    static constexpr std::array<std::string_view, 16> names = {
        "google.protobuf.Any",         "google.protobuf.Struct",      "google.protobuf.Value",
        "google.protobuf.ListValue",   "google.protobuf.Timestamp",   "google.protobuf.Duration",
        "google.protobuf.FieldMask",   "google.protobuf.DoubleValue", "google.protobuf.FloatValue",
        "google.protobuf.Int64Value",  "google.protobuf.UInt64Value", "google.protobuf.Int32Value",
        "google.protobuf.UInt32Value", "google.protobuf.BoolValue",   "google.protobuf.StringValue",
        "google.protobuf.BytesValue",
    };
    for (const std::string_view name : names) {
        if (name == full_name) {
            return true;
        }
    }
    return false;
}

/// Free JSON: nothing inside is read as a message, so no Any either.
bool isFreeJson(std::string_view full_name) {
    return full_name == "google.protobuf.Struct" || full_name == "google.protobuf.Value" ||
           full_name == "google.protobuf.ListValue";
}

std::string_view text(const rapidjson::Value& s) {
    return {s.GetString(), s.GetStringLength()};
}

/// The field a JSON member names: its proto name or its JSON (lowerCamel) name.
const pb::FieldDescriptor* fieldNamed(const pb::Descriptor& type, std::string_view key) {
    for (int i = 0; i < type.field_count(); ++i) {
        const pb::FieldDescriptor* field = type.field(i);
        if (field->name() == key || field->json_name() == key) {
            return field;
        }
    }
    return nullptr;
}

class Walk {
public:
    explicit Walk(const pb::DescriptorPool& pool) : pool_(pool) {}

    std::optional<std::string> message(const rapidjson::Value& json, const pb::Descriptor& type,
                                       const std::string& path) const {
        if (!json.IsObject() || isFreeJson(type.full_name())) {
            return std::nullopt;
        }
        if (type.full_name() == any_type) {
            return any(json, path);
        }
        return fields(json, type, path);
    }

private:
    /// The members of `json` as fields of `type` (members that name no field are protobuf's to
    /// refuse).
    std::optional<std::string> fields(const rapidjson::Value& json, const pb::Descriptor& type,
                                      const std::string& path) const {
        for (const auto& member : json.GetObject()) {
            const std::string_view key = text(member.name);
            const pb::FieldDescriptor* field = fieldNamed(type, key);
            if (field == nullptr || field->message_type() == nullptr) {
                continue;
            }
            const std::string here =
                path.empty() ? std::string(key) : path + "." + std::string(key);
            if (auto problem = fieldValue(member.value, *field, here)) {
                return problem;
            }
        }
        return std::nullopt;
    }

    std::optional<std::string> fieldValue(const rapidjson::Value& json,
                                          const pb::FieldDescriptor& field,
                                          const std::string& path) const {
        if (field.is_map()) {
            const pb::FieldDescriptor* value = field.message_type()->map_value();
            if (!json.IsObject() || value == nullptr || value->message_type() == nullptr) {
                return std::nullopt;
            }
            for (const auto& entry : json.GetObject()) {
                if (auto problem = message(entry.value, *value->message_type(),
                                           path + "[\"" + std::string(text(entry.name)) + "\"]")) {
                    return problem;
                }
            }
            return std::nullopt;
        }
        if (field.is_repeated() && json.IsArray()) {
            for (rapidjson::SizeType i = 0; i < json.Size(); ++i) {
                if (auto problem = message(json[i], *field.message_type(),
                                           path + "[" + std::to_string(i) + "]")) {
                    return problem;
                }
            }
            return std::nullopt;
        }
        return message(json, *field.message_type(), path);
    }

    std::optional<std::string> any(const rapidjson::Value& json, const std::string& path) const {
        const auto url = json.FindMember("@type");
        if (url == json.MemberEnd() || !url->value.IsString()) {
            return std::nullopt;
        }
        const pb::Descriptor* payload = anyPayloadType(pool_, text(url->value));
        const bool own_form = payload != nullptr && hasOwnJsonForm(payload->full_name());
        if (!own_form && typeCount(json) > 1) {
            // protobuf's Any writer goes by each "@type" it meets: with a second one it may take
            // a type the first did not name (an unknown one first, a well-known one next) and
            // fail the same CHECK. The loop below says this for a well-known first type.
            return where(path) + "a google.protobuf.Any has \"@type\" twice (an Any names its " +
                   "type once)";
        }
        if (payload == nullptr) {
            return std::nullopt;
        }
        if (!own_form) {
            return fields(json, *payload, path);  // the payload's fields beside "@type"
        }
        int types = 0;
        int values = 0;
        const rapidjson::Value* value = nullptr;
        for (const auto& member : json.GetObject()) {
            const std::string_view key = text(member.name);
            if (key == "@type") {
                ++types;
            } else if (key == "value") {
                ++values;
                value = &member.value;
            } else {
                return where(path) + "a google.protobuf.Any of " + payload->full_name() +
                       " has the member \"" + std::string(key) + "\"" + takes;
            }
            if (types > 1 || values > 1) {
                return where(path) + "a google.protobuf.Any of " + payload->full_name() +
                       " has \"" + std::string(key) + "\" twice" + takes;
            }
        }
        if (value == nullptr) {
            return std::nullopt;
        }
        return message(*value, *payload, path.empty() ? "value" : path + ".value");
    }

    static int typeCount(const rapidjson::Value& json) {
        int types = 0;
        for (const auto& member : json.GetObject()) {
            types += text(member.name) == "@type" ? 1 : 0;
        }
        return types;
    }

    static std::string where(const std::string& path) {
        return path.empty() ? std::string() : path + ": ";
    }

    static constexpr const char* takes =
        " (it takes \"@type\" and \"value\" once each, and nothing else)";

    const pb::DescriptorPool& pool_;
};

}  // namespace

const google::protobuf::Descriptor* anyPayloadType(const google::protobuf::DescriptorPool& pool,
                                                   std::string_view type_url) {
    const auto slash = type_url.rfind('/');
    return pool.FindMessageTypeByName(
        std::string(slash == std::string_view::npos ? type_url : type_url.substr(slash + 1)));
}

std::optional<std::string> anyInputProblem(const rapidjson::Value& json,
                                           const google::protobuf::Descriptor& type,
                                           const google::protobuf::DescriptorPool& pool) {
    return Walk(pool).message(json, type, "");
}

}  // namespace crank::grpc_plugin
