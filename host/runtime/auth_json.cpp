#include "runtime/auth_json.h"

#include <cstdint>
#include <optional>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace crank::runtime {
namespace {

using config::AuthProfile;

const std::string& revealed(const std::optional<config::Secret>& secret) {
    static const std::string kNone;
    return secret ? secret->reveal() : kNone;
}

template <typename Writer>
void writeString(Writer& writer, std::string_view text) {
    writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

}  // namespace

std::string authJson(const AuthProfile& profile) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    writer.StartObject();
    writer.Key("type");
    switch (profile.type) {
        case AuthProfile::Type::none:
            writer.String("none");
            break;
        case AuthProfile::Type::bearer:
            writer.String("bearer");
            writer.Key("token");
            writeString(writer, revealed(profile.token));
            break;
        case AuthProfile::Type::basic:
            writer.String("basic");
            writer.Key("username");
            writeString(writer, profile.username);
            writer.Key("password");
            writeString(writer, revealed(profile.password));
            break;
        case AuthProfile::Type::api_key:
            writer.String("api_key");
            writer.Key("in");
            writer.String(profile.placement == AuthProfile::Placement::query ? "query" : "header");
            writer.Key("name");
            writeString(writer, profile.key_name);
            writer.Key("key");
            writeString(writer, revealed(profile.key));
            break;
    }
    writer.Key("headers");
    writer.StartObject();
    for (const auto& [name, value] : profile.headers) {
        writer.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
        writeString(writer, value);
    }
    writer.EndObject();
    writer.EndObject();
    return {buffer.GetString(), buffer.GetSize()};
}

std::vector<std::string> authSecrets(const AuthProfile& profile) {
    std::vector<std::string> secrets;
    const auto add = [&secrets](const std::string& value) {
        if (!value.empty()) {
            secrets.push_back(value);
        }
    };
    switch (profile.type) {
        case AuthProfile::Type::none:
            break;
        case AuthProfile::Type::bearer:
            add(revealed(profile.token));
            break;
        case AuthProfile::Type::basic:
            add(revealed(profile.password));
            if (profile.password) {
                add(base64(profile.username + ":" + profile.password->reveal()));
            }
            break;
        case AuthProfile::Type::api_key:
            add(revealed(profile.key));
            break;
    }
    return secrets;
}

std::string base64(std::string_view bytes) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const auto n =
            (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16U) |
            (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8U) |
            static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
        out.push_back(kAlphabet[(n >> 18U) & 0x3fU]);
        out.push_back(kAlphabet[(n >> 12U) & 0x3fU]);
        out.push_back(kAlphabet[(n >> 6U) & 0x3fU]);
        out.push_back(kAlphabet[n & 0x3fU]);
    }
    const std::size_t rest = bytes.size() - i;
    if (rest > 0) {
        std::uint32_t n = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16U;
        if (rest == 2) {
            n |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8U;
        }
        out.push_back(kAlphabet[(n >> 18U) & 0x3fU]);
        out.push_back(kAlphabet[(n >> 12U) & 0x3fU]);
        out.push_back(rest == 2 ? kAlphabet[(n >> 6U) & 0x3fU] : '=');
        out.push_back('=');
    }
    return out;
}

}  // namespace crank::runtime
