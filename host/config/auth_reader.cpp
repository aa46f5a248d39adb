// The config loader: `auth` (workspaces, agents, their keys and limits) and `auth_profiles`.

#include <array>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/core.h>

#include "config/config_loader.h"
#include "config/json_reader.h"
#include "config/key_policy.h"
#include "config/loader.h"
#include "config/tool_policy.h"
#include "util/sha256.h"

namespace crank::config {
namespace detail {

namespace {

constexpr std::array<std::pair<std::string_view, AuthConfig::Mode>, 2> kAuthModes{{
    {"none", AuthConfig::Mode::none},
    {"api_key", AuthConfig::Mode::api_key},
}};
constexpr std::array<std::pair<std::string_view, AuthProfile::Type>, 4> kProfileTypes{{
    {"none", AuthProfile::Type::none},
    {"bearer", AuthProfile::Type::bearer},
    {"basic", AuthProfile::Type::basic},
    {"api_key", AuthProfile::Type::api_key},
}};
constexpr std::array<std::pair<std::string_view, AuthProfile::Placement>, 2> kPlacements{{
    {"header", AuthProfile::Placement::header},
    {"query", AuthProfile::Placement::query},
}};

}  // namespace

Limits Loader::readLimits(const Json* v, const std::string& path, Limits defaults, bool workspace) {
    ObjectReader r(v, path, errors_);
    Limits l = defaults;
    l.max_concurrent_calls =
        r.positiveInteger("max_concurrent_calls", l.max_concurrent_calls, 100'000);
    l.max_sessions = r.integer("max_sessions", l.max_sessions, 0, 1'000'000);
    l.max_jobs = r.integer("max_jobs", l.max_jobs, 0, 1'000'000);
    l.max_mcp_sessions = r.integer("max_mcp_sessions", l.max_mcp_sessions, 0, 1'000'000);
    l.max_streams = r.integer("max_streams", l.max_streams, 0, 1'000'000);
    if (workspace) {
        l.reserved_calls = r.integer("reserved_calls", l.reserved_calls, -1, 1024);
    }
    l.rate = readRateLimit(r, "rate");
    r.finish();
    return l;
}

std::optional<Secret> Loader::readSecret(const Json* v, const std::string& path, bool allowDigest) {
    if (v == nullptr) {
        return std::nullopt;
    }
    const std::string expected =
        allowDigest ? R"({"env": "VARIABLE"}, {"file": "/path"} or {"sha256": "HEX"})"
                    : R"({"env": "VARIABLE"} or {"file": "/path"})";
    if (v->IsString()) {
        // Never echo the literal: it is probably the secret itself.
        errors_.add(path, "secrets are not written in the config file; expected " + expected +
                              ", got a string");
        return std::nullopt;
    }
    if (!v->IsObject() || v->MemberCount() != 1 || !v->MemberBegin()->value.IsString()) {
        // A number may be the secret itself (a PIN, a numeric key): name only its type.
        errors_.add(path, "expected " + expected + ", got " +
                              (v->IsNumber() ? std::string("a number") : describe(*v)));
        return std::nullopt;
    }
    const std::string key(v->MemberBegin()->name.GetString(),
                          v->MemberBegin()->name.GetStringLength());
    const std::string name(v->MemberBegin()->value.GetString(),
                           v->MemberBegin()->value.GetStringLength());
    const std::string where = detail::memberPath(path, key);
    if (key == "env") {
        if (name.empty()) {
            errors_.add(where, "expected the name of an environment variable");
            return std::nullopt;
        }
        auto value = lookupEnv(name);
        if (!value || value->empty()) {
            errors_.add(where,
                        "environment variable " + name + (value ? " is empty" : " is not set"));
            return std::nullopt;
        }
        return Secret({SecretRef::Kind::env, name}, *value);
    }
    if (key == "file") {
        std::ifstream in(name, std::ios::binary);
        if (name.empty() || !in) {
            errors_.add(where, "cannot read secret file \"" + name + "\"");
            return std::nullopt;
        }
        std::string value(kMaxSecretFileBytes + 1, '\0');
        in.read(value.data(), static_cast<std::streamsize>(value.size()));
        if (in.bad()) {  // a directory, for one
            errors_.add(where, "cannot read secret file \"" + name + "\"");
            return std::nullopt;
        }
        value.resize(static_cast<std::size_t>(in.gcount()));
        if (value.size() > kMaxSecretFileBytes) {
            errors_.add(where, fmt::format("secret file \"{}\" is larger than {} bytes", name,
                                           kMaxSecretFileBytes));
            return std::nullopt;
        }
        while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) {
            value.pop_back();
        }
        if (value.empty()) {
            errors_.add(where, "secret file \"" + name + "\" is empty");
            return std::nullopt;
        }
        return Secret({SecretRef::Kind::file, name}, value);
    }
    if (key == "sha256" && allowDigest) {
        std::string hex = name;
        std::transform(hex.begin(), hex.end(), hex.begin(), [](char c) {
            return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        });
        const bool ok = hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](char c) {
                            return std::isxdigit(static_cast<unsigned char>(c)) != 0;
                        });
        if (!ok) {
            errors_.add(where, "expected 64 hexadecimal digits (a SHA-256 digest)");
            return std::nullopt;
        }
        return Secret({SecretRef::Kind::sha256, ""}, hex);
    }
    errors_.add(where, "unknown secret source; expected " + expected);
    return std::nullopt;
}

void Loader::readAuth(const Json* v) {
    ObjectReader r(v, "auth", errors_);
    AuthConfig& auth = config_.auth;
    auth.mode =
        r.enumeration("mode", AuthConfig::Mode::none,
                      std::span<const std::pair<std::string_view, AuthConfig::Mode>>(kAuthModes));

    const Json* workspaces = r.get("workspaces");
    const std::string wsPath = r.pathOf("workspaces");
    std::set<std::string> workspaceIds;
    if (workspaces != nullptr && !workspaces->IsArray()) {
        errors_.add(wsPath, "expected an array of workspaces, got " + describe(*workspaces));
    } else if (workspaces != nullptr) {
        for (rapidjson::SizeType i = 0; i < workspaces->Size(); ++i) {
            const std::string path = indexPath(wsPath, i);
            ObjectReader w(&(*workspaces)[i], path, errors_);
            if (!w.present()) {
                continue;
            }
            Workspace ws;
            ws.id = w.requiredString("id", 64);
            ws.description = w.optionalString("description").value_or("");
            ws.limits = readLimits(w.get("limits"), w.pathOf("limits"), Limits{}, true);
            w.finish();
            if (!ws.id.empty() && !isName(ws.id)) {
                errors_.add(w.pathOf("id"), "expected letters, digits, '_', '-' or '.', got " +
                                                describeString(ws.id));
            } else if (!ws.id.empty() && !workspaceIds.insert(ws.id).second) {
                errors_.add(w.pathOf("id"), "workspace \"" + ws.id + "\" is defined twice");
            }
            auth.workspaces.push_back(std::move(ws));
        }
    }
    if (workspaceIds.insert("default").second) {
        auth.workspaces.insert(auth.workspaces.begin(), Workspace{"default", "", Limits{}});
    }

    const Json* agents = r.get("agents");
    const std::string agentsPath = r.pathOf("agents");
    std::set<std::string> agentIds;
    std::map<std::string, std::string> keyOwners;  // sha256 of key -> path of its first agent
    if (agents != nullptr && !agents->IsArray()) {
        errors_.add(agentsPath, "expected an array of agents, got " + describe(*agents));
    } else if (agents != nullptr) {
        for (rapidjson::SizeType i = 0; i < agents->Size(); ++i) {
            const std::string path = indexPath(agentsPath, i);
            ObjectReader a(&(*agents)[i], path, errors_);
            if (!a.present()) {
                continue;
            }
            Agent agent;
            agent.id = a.requiredString("id", 64);
            agent.workspace = a.optionalString("workspace", 64).value_or("default");
            agent.api_key = readSecret(a.get("api_key"), a.pathOf("api_key"), true);
            agent.limits = readLimits(a.get("limits"), a.pathOf("limits"), Agent{}.limits, false);
            a.finish();
            if (!agent.id.empty() && !isName(agent.id)) {
                errors_.add(a.pathOf("id"), "expected letters, digits, '_', '-' or '.', got " +
                                                describeString(agent.id));
            } else if (!agent.id.empty() && !agentIds.insert(agent.id).second) {
                errors_.add(a.pathOf("id"), "agent \"" + agent.id + "\" is defined twice");
            }
            if (workspaceIds.count(agent.workspace) == 0) {
                errors_.add(a.pathOf("workspace"), "no workspace \"" + agent.workspace +
                                                       "\" is defined in auth.workspaces");
            }
            if (agent.api_key) {
                // Keep only a digest of clear keys: the process never needs the key itself.
                if (agent.api_key->ref().kind != SecretRef::Kind::sha256) {
                    if (auto weak = weakKeyReason(agent.api_key->reveal())) {
                        errors_.add(a.pathOf("api_key"), "the key " + *weak);
                    }
                    agent.api_key =
                        Secret(agent.api_key->ref(), sha256Hex(agent.api_key->reveal()));
                }
                auto [it, inserted] = keyOwners.emplace(agent.api_key->reveal(), path);
                if (!inserted) {
                    errors_.add(a.pathOf("api_key"), "the same key as " + it->second + ".api_key");
                }
                if (config_.admin.token &&
                    config_.admin.token->reveal() == agent.api_key->reveal()) {
                    errors_.add(a.pathOf("api_key"),
                                "the same key as admin.token: the admin token must differ from "
                                "every agent's key");
                }
            } else if (auth.mode == AuthConfig::Mode::api_key && a.get("api_key") == nullptr) {
                errors_.add(a.pathOf("api_key"), "is required when auth.mode is \"api_key\"");
            }
            auth.agents.push_back(std::move(agent));
        }
    }
    r.finish();
    if (auth.mode == AuthConfig::Mode::api_key && auth.agents.empty()) {
        errors_.add(r.pathOf("agents"),
                    "auth.mode \"api_key\" needs at least one agent with an api_key");
    }
}

void Loader::readAuthProfiles(const Json* v) {
    if (v == nullptr) {
        return;
    }
    if (!v->IsObject()) {
        errors_.add("auth_profiles", "expected an object of named profiles, got " + describe(*v));
        return;
    }
    ObjectReader all(v, "auth_profiles", errors_);  // reports duplicate names
    for (const auto& member : v->GetObject()) {
        const std::string name(member.name.GetString(), member.name.GetStringLength());
        all.allow({std::string_view(member.name.GetString(), member.name.GetStringLength())});
        const std::string path = detail::memberPath("auth_profiles", name);
        if (!isName(name)) {
            errors_.add(path, "a profile name uses letters, digits, '_', '-' or '.' (at most 64)");
            continue;
        }
        ObjectReader r(&member.value, path, errors_);
        if (!r.present()) {
            continue;
        }
        AuthProfile p;
        p.name = name;
        const std::size_t errorsBefore = errors_.size();
        if (r.get("type") == nullptr) {
            errors_.add(r.pathOf("type"), R"(is required: "none", "bearer", "basic" or "api_key")");
        }
        p.type = r.enumeration(
            "type", AuthProfile::Type::none,
            std::span<const std::pair<std::string_view, AuthProfile::Type>>(kProfileTypes));
        // Without a valid type, the checks that depend on it would only add noise.
        const bool typeKnown = errors_.size() == errorsBefore;
        // Fields that belong to one type only; using them with another is a mistake worth naming.
        const auto only = [&](std::string_view key, AuthProfile::Type type,
                              std::string_view typeName) {
            const Json* field = r.get(key);
            if (!typeKnown) {
                return static_cast<const Json*>(nullptr);
            }
            if (field != nullptr && p.type != type) {
                errors_.add(r.pathOf(key),
                            "is only used with type \"" + std::string(typeName) + "\"");
                return static_cast<const Json*>(nullptr);
            }
            if (field == nullptr && p.type == type) {
                errors_.add(r.pathOf(key),
                            "is required with type \"" + std::string(typeName) + "\"");
            }
            return field;
        };
        if (const Json* token = only("token", AuthProfile::Type::bearer, "bearer")) {
            p.token = readSecret(token, r.pathOf("token"), false);
        }
        if (const Json* user = only("username", AuthProfile::Type::basic, "basic")) {
            if (user->IsString() && user->GetStringLength() > 0) {
                p.username.assign(user->GetString(), user->GetStringLength());
            } else {
                errors_.add(r.pathOf("username"),
                            "expected a non-empty string, got " + describe(*user));
            }
        }
        if (const Json* password = only("password", AuthProfile::Type::basic, "basic")) {
            p.password = readSecret(password, r.pathOf("password"), false);
        }
        if (const Json* key = only("key", AuthProfile::Type::api_key, "api_key")) {
            p.key = readSecret(key, r.pathOf("key"), false);
        }
        if (const Json* keyName = only("name", AuthProfile::Type::api_key, "api_key")) {
            if (keyName->IsString() &&
                isHttpToken({keyName->GetString(), keyName->GetStringLength()})) {
                p.key_name.assign(keyName->GetString(), keyName->GetStringLength());
            } else {
                errors_.add(r.pathOf("name"),
                            "expected a header or query parameter name, got " + describe(*keyName));
            }
        }
        if (typeKnown && r.get("in") != nullptr && p.type != AuthProfile::Type::api_key) {
            errors_.add(r.pathOf("in"), "is only used with type \"api_key\"");
        } else {
            p.placement = r.enumeration(
                "in", AuthProfile::Placement::header,
                std::span<const std::pair<std::string_view, AuthProfile::Placement>>(kPlacements));
        }
        if (const Json* headers = r.get("headers")) {
            if (!headers->IsObject()) {
                errors_.add(
                    r.pathOf("headers"),
                    "expected an object of header names to values, got " + describe(*headers));
            } else {
                std::set<std::string> lowerNames;  // header names are case-insensitive
                for (const auto& h : headers->GetObject()) {
                    const std::string hname(h.name.GetString(), h.name.GetStringLength());
                    const std::string hpath = detail::memberPath(r.pathOf("headers"), hname);
                    std::string lower = hname;
                    std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) {
                        return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                    });
                    if (!isHttpToken(hname)) {
                        errors_.add(hpath, "not a valid HTTP header name");
                    } else if (!lowerNames.insert(lower).second) {
                        errors_.add(hpath, "is given twice (header names are case-insensitive)");
                    } else if (!h.value.IsString()) {
                        errors_.add(hpath, "expected a string, got " + describe(h.value));
                    } else {
                        std::string value(h.value.GetString(), h.value.GetStringLength());
                        // CR/LF would inject headers; NUL and other controls break HTTP too.
                        const bool control = std::any_of(value.begin(), value.end(), [](char c) {
                            const auto u = static_cast<unsigned char>(c);
                            return (u < 0x20 && c != '\t') || u == 0x7f;
                        });
                        if (control) {
                            errors_.add(hpath,
                                        "a header value must not contain line breaks or "
                                        "other control characters");
                        } else {
                            p.headers[hname] = std::move(value);
                        }
                    }
                }
            }
        }
        r.finish();
        config_.auth_profiles[name] = std::move(p);
    }
}

LimitsLoadResult Loader::loadAgentLimits(const Json& value) {
    Limits limits = readLimits(&value, "", Agent{}.limits, false);
    if (!errors_.empty()) {
        return {std::nullopt, errors_.take()};
    }
    return {limits, {}};
}

}  // namespace detail

LimitsLoadResult loadAgentLimits(const rapidjson::Value& value) {
    const LoadOptions options;
    return detail::Loader(options, "limits").loadAgentLimits(value);
}

}  // namespace crank::config
