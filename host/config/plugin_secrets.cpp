#include "config/plugin_secrets.h"

#include <cstdlib>

#include <rapidjson/document.h>

#include "json/json_members.h"

namespace crank::config {
namespace {

constexpr int kMaxDepth = 64;  // the config file's own nesting limit

void collect(const rapidjson::Value& v, const EnvLookup& lookup, std::vector<Secret>& out,
             int depth) {
    if (depth > kMaxDepth) {
        return;
    }
    if (v.IsArray()) {
        for (const rapidjson::Value& e : v.GetArray()) {
            collect(e, lookup, out, depth + 1);
        }
        return;
    }
    if (!v.IsObject()) {
        return;
    }
    if (v.MemberCount() == 1 && std::string_view(v.MemberBegin()->name.GetString()) == "env" &&
        v.MemberBegin()->value.IsString()) {
        const std::string name(v.MemberBegin()->value.GetString(),
                               v.MemberBegin()->value.GetStringLength());
        if (std::optional<std::string> value = name.empty() ? std::nullopt : lookup(name);
            value && !value->empty()) {
            out.emplace_back(SecretRef{SecretRef::Kind::env, name}, std::move(*value));
        }
        return;
    }
    for (const auto& m : v.GetObject()) {
        collect(m.value, lookup, out, depth + 1);
    }
}

}  // namespace

std::optional<std::string> processEnv(const std::string& name) {
    const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): no setenv
    return value == nullptr ? std::nullopt : std::optional<std::string>(value);
}

std::vector<Secret> pluginConfigSecrets(std::string_view config_json, const EnvLookup& lookup) {
    std::vector<Secret> out;
    json::Document doc;
    if (json::parseValue(config_json, doc)) {
        collect(doc, lookup, out, 0);
    }
    return out;
}

std::vector<std::string> pluginConfigSecretValues(std::string_view config_json,
                                                  const EnvLookup& lookup) {
    std::vector<std::string> out;
    for (const Secret& secret : pluginConfigSecrets(config_json, lookup)) {
        out.push_back(secret.reveal());
    }
    return out;
}

}  // namespace crank::config
