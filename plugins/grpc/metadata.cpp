#include "metadata.h"

#include <array>

#include <rapidjson/document.h>

#include <crank/sdk/base64.hpp>
#include <crank/sdk/error.hpp>

namespace crank::grpc_plugin {
namespace {

constexpr std::size_t kMaxValueBytes = std::size_t{8} * 1024;

bool endsWith(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string member(const rapidjson::Value& object, const char* name) {
    const auto it = object.FindMember(name);
    if (it == object.MemberEnd() || !it->value.IsString()) {
        return {};
    }
    return {it->value.GetString(), it->value.GetStringLength()};
}

}  // namespace

std::string normalizeKey(std::string_view key) {
    std::string out(key);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    return out;
}

std::optional<std::string> badKey(std::string_view key) {
    if (key.empty()) {
        return "a metadata key must not be empty";
    }
    if (key.size() > 256) {
        return "a metadata key must be at most 256 characters";
    }
    for (const char c : key) {
        const bool ok =
            (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
        if (!ok) {
            return "\"" + std::string(key) +
                   "\" is not a metadata key: use lower-case letters, digits, '_', '.' and '-'";
        }
    }
    if (key.rfind("grpc-", 0) == 0) {
        return "\"" + std::string(key) + "\" is reserved for gRPC itself (keys starting grpc-)";
    }
    static constexpr std::array<std::string_view, 7> kForbidden = {
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade",
        "te",         "host"};
    for (const std::string_view f : kForbidden) {
        if (key == f) {
            return "\"" + std::string(key) + "\" is a connection header HTTP/2 does not carry";
        }
    }
    if (key == "content-type" || key == "user-agent") {
        return "\"" + std::string(key) + "\" is set by gRPC itself";
    }
    return std::nullopt;
}

std::optional<std::string> badValue(std::string_view key, std::string_view value) {
    if (value.size() > kMaxValueBytes) {
        return "the value of \"" + std::string(key) + "\" is longer than 8 KiB";
    }
    if (endsWith(key, "-bin")) {
        return std::nullopt;
    }
    for (const char c : value) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u > 0x7e) {
            return "the value of \"" + std::string(key) +
                   "\" holds a character metadata cannot carry (only printable ASCII; binary "
                   "values need a key ending in -bin)";
        }
    }
    return std::nullopt;
}

void checkMetadata(const Metadata& metadata, std::string_view where) {
    for (const auto& [key, value] : metadata) {
        if (auto why = badKey(key)) {
            throw sdk::Error(sdk::ErrorCode::invalid_argument, std::string(where) + ": " + *why);
        }
        if (auto why = badValue(key, value)) {
            throw sdk::Error(sdk::ErrorCode::invalid_argument, std::string(where) + ": " + *why);
        }
    }
}

Metadata authMetadata(std::string_view auth_json) {
    Metadata out;
    if (auth_json.empty()) {
        return out;
    }
    rapidjson::Document doc;
    doc.Parse(auth_json.data(), auth_json.size());
    if (doc.HasParseError() || !doc.IsObject()) {
        throw sdk::Error(sdk::ErrorCode::internal, "the auth profile from the host is not JSON");
    }
    const rapidjson::Value& root = doc;
    const std::string type = member(root, "type");
    if (type == "bearer") {
        out.emplace_back("authorization", "Bearer " + member(root, "token"));
    } else if (type == "basic") {
        out.emplace_back("authorization", "Basic " + sdk::base64(member(root, "username") + ":" +
                                                                 member(root, "password")));
    } else if (type == "api_key") {
        if (member(root, "in") == "query") {
            throw sdk::Error(sdk::ErrorCode::invalid_argument,
                             "the auth profile puts its key in the query, which gRPC does not "
                             "have: use \"in\": \"header\"");
        }
        out.emplace_back(normalizeKey(member(root, "name")), member(root, "key"));
    }
    const auto headers = root.FindMember("headers");
    if (headers != root.MemberEnd() && headers->value.IsObject()) {
        const rapidjson::Value& h = headers->value;
        for (auto it = h.MemberBegin(); it != h.MemberEnd(); ++it) {
            if (it->value.IsString()) {
                out.emplace_back(normalizeKey({it->name.GetString(), it->name.GetStringLength()}),
                                 std::string(it->value.GetString(), it->value.GetStringLength()));
            }
        }
    }
    checkMetadata(out, "the auth profile");
    return out;
}

}  // namespace crank::grpc_plugin
