#pragma once

// The config loader's own class, shared by the files that read its sections: config_loader.cpp
// (the file, server, store, mcp, plugins, jobs, admin and the cross-checks), auth_reader.cpp
// (auth, auth_profiles), operation_reader.cpp (operations) and upstream_reader.cpp (upstreams).
// Not for use outside host/config: see config_loader.h.

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "config/config.h"
#include "config/config_error.h"
#include "config/config_loader.h"
#include "config/json_reader.h"

namespace crank::config::detail {

/// Plugin, profile, workspace and agent names: letters, digits, '_', '-', '.', at most 64.
inline bool isName(std::string_view name) {
    return !name.empty() && name.size() <= 64 && isToolName(name);
}

/// Names that plugins register (adapters, aggregators, libraries): [a-z0-9_]{1,64}, as the ABI
/// says.
inline bool isPluginName(std::string_view name) {
    return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

inline bool isHttpToken(std::string_view name) {
    static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
               kExtra.find(c) != std::string_view::npos;
    });
}

class Loader {
public:
    Loader(const LoadOptions& options, std::string source)
        : options_(options), source_(std::move(source)) {}

    LoadResult load(std::string_view text);
    OperationLoadResult loadOperation(const Json& value, const Config& base);
    UpstreamLoadResult loadUpstream(const Json& value, const Config& base);
    LimitsLoadResult loadAgentLimits(const Json& value);

private:
    void readServer(const Json* v);
    void readStore(const Json* v);
    void readPlugins(const Json* v);
    void readJobs(const Json* v);
    void readAdmin(const Json* v);
    void readLog(const Json* v);
    void readMcp(const Json* v);
    void readAuth(const Json* v);
    void readAuthProfiles(const Json* v);
    void readOperations(const Json* v);
    void readUpstreams(const Json* v);
    UpstreamConfig readUpstream(const Json& v, const std::string& path);
    OperationConfig readOperation(const Json& v, const std::string& path);
    void readExecution(const Json* v, const std::string& path, OperationConfig& op);
    /// `workspace`: the limits of a workspace, which may also reserve call slots.
    Limits readLimits(const Json* v, const std::string& path, Limits defaults, bool workspace);
    /// `{"env": NAME}` or `{"file": PATH}` (or `{"sha256": HEX}` when allowed), resolved.
    std::optional<Secret> readSecret(const Json* v, const std::string& path, bool allowDigest);
    void crossCheck();

    std::optional<std::string> lookupEnv(const std::string& name) const {
        if (options_.env) {
            return options_.env(name);
        }
        const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe)
        return value == nullptr ? std::nullopt : std::optional<std::string>(value);
    }

    const LoadOptions& options_;
    std::string source_;
    ConfigErrors errors_;
    Config config_;
};

}  // namespace crank::config::detail
