#include "runtime/upstream_key.h"

#include <cctype>
#include <cstddef>
#include <optional>
#include <string_view>

#include <rapidjson/document.h>

#include "json/json_members.h"

namespace crank::runtime {
namespace {

/// Longest key made from a config, bytes: a longer authority is someone's mistake or attack.
constexpr std::size_t kMaxKeyBytes = 256;

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

std::optional<std::string_view> stringMember(const json::Document& doc, const char* name) {
    const auto it = doc.FindMember(name);
    if (it == doc.MemberEnd() || !it->value.IsString() || it->value.GetStringLength() == 0) {
        return std::nullopt;
    }
    return std::string_view(it->value.GetString(), it->value.GetStringLength());
}

/// "scheme://host:port" of an absolute URL; nullopt when it has no scheme or a templated or
/// empty authority.
std::optional<std::string> originOf(std::string_view url) {
    const std::size_t sep = url.find("://");
    if (sep == std::string_view::npos || sep == 0) {
        return std::nullopt;
    }
    const std::string scheme = lower(url.substr(0, sep));
    std::string_view authority = url.substr(sep + 3);
    authority = authority.substr(0, authority.find_first_of("/?#"));
    if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
        authority.remove_prefix(at + 1);  // userinfo: never in a key
    }
    if (authority.empty() || authority.find("{{") != std::string_view::npos) {
        return std::nullopt;
    }
    std::string host = lower(authority);
    const std::size_t bracket = host.rfind(']');
    const std::size_t colon = host.rfind(':');
    const bool hasPort =
        colon != std::string::npos && (bracket == std::string::npos || colon > bracket);
    if (!hasPort) {
        if (scheme == "http" || scheme == "ws") {
            host += ":80";
        } else if (scheme == "https" || scheme == "wss") {
            host += ":443";
        }
    }
    return scheme + "://" + host;
}

std::string bounded(std::string key, const config::OperationConfig& operation) {
    if (key.size() > kMaxKeyBytes) {
        return "operation:" + operation.name;
    }
    return key;
}

}  // namespace

std::string upstreamKey(const config::OperationConfig& operation) {
    if (!operation.upstream.empty()) {
        return operation.upstream;
    }
    json::Document doc;
    if (json::parseValue(operation.config_json, doc) && doc.IsObject()) {
        for (const char* name : {"url", "endpoint", "base_url"}) {
            if (const auto url = stringMember(doc, name)) {
                if (auto origin = originOf(*url)) {
                    return bounded(std::move(*origin), operation);
                }
                break;  // a templated or relative URL: bounded on its own
            }
        }
        if (const auto target = stringMember(doc, "target");
            target && target->find("{{") == std::string_view::npos) {
            return bounded("grpc://" + lower(*target), operation);
        }
        if (const auto command = stringMember(doc, "command")) {
            return bounded("stdio:" + std::string(*command), operation);
        }
    }
    return "operation:" + operation.name;
}

}  // namespace crank::runtime
