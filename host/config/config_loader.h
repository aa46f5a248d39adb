#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/fwd.h>

#include "config/config.h"
#include "config/config_error.h"
#include "config/listen_address.h"

namespace crank::config {

/// Largest configuration file crankd reads.
inline constexpr std::size_t kMaxConfigBytes = std::size_t{16} * 1024 * 1024;
/// Deepest nesting of objects and arrays accepted anywhere in the file (schemas included).
inline constexpr std::size_t kMaxConfigDepth = 64;
/// Largest secret file.
inline constexpr std::size_t kMaxSecretFileBytes = std::size_t{64} * 1024;

struct LoadOptions {
    /// Looks up environment variables for `{"env": NAME}` secrets. Defaults to the process
    /// environment; tests pass their own.
    std::function<std::optional<std::string>(const std::string&)> env;
    /// `--listen` from the command line: replaces server.listen before validation.
    std::optional<ListenAddress> listen_override;
};

/// The outcome of a load: a config when there were no errors, and every error otherwise.
struct LoadResult {
    std::optional<Config> config;
    std::vector<ConfigError> errors;
};

/// The outcome of loadOperation(): an operation when there were no errors.
struct OperationLoadResult {
    std::optional<OperationConfig> operation;
    std::vector<ConfigError> errors;
};

/// Reads one operation object (an entry of `operations`, as the admin API receives it) by the
/// config file's rules, and checks what it names against `base`: its workspace and auth
/// profile exist, its tool names are not too long nor repeated. Error paths start at the
/// operation ("execution.max_items", "name"). Its plugin is not consulted: see
/// runtime::compileOperation().
OperationLoadResult loadOperation(const rapidjson::Value& value, const Config& base);

/// The outcome of loadUpstream(): an upstream when there were no errors.
struct UpstreamLoadResult {
    std::optional<UpstreamConfig> upstream;
    std::vector<ConfigError> errors;
};

/// Reads one upstream object (an entry of `upstreams`, as the admin API receives it) by the
/// config file's rules, and checks that its workspace exists in `base`. Error paths start at
/// the upstream ("tools.allow[0]", "name"). Its adapter is not consulted (it validates
/// `config` itself).
UpstreamLoadResult loadUpstream(const rapidjson::Value& value, const Config& base);

/// The outcome of loadAgentLimits().
struct LimitsLoadResult {
    std::optional<Limits> limits;
    std::vector<ConfigError> errors;
};

/// Reads an agent's `limits` object (as in `auth.agents[].limits`) over an agent's defaults.
/// Error paths start at the object ("rate.burst").
LimitsLoadResult loadAgentLimits(const rapidjson::Value& value);

/// Parses and validates configuration text (JSON with comments and trailing commas).
/// `source` names it in messages (normally the file path).
LoadResult loadConfigText(std::string_view text, const std::string& source,
                          const LoadOptions& options = {});

/// The text of the file `path` (at most kMaxConfigBytes + 1 bytes: loadConfigText refuses a
/// longer one); nullopt, with an error naming the file, when it cannot be read.
std::optional<std::string> readConfigFile(const std::string& path,
                                          std::vector<ConfigError>& errors);

/// Reads `path` (at most kMaxConfigBytes) and loads it like loadConfigText.
LoadResult loadConfigFile(const std::string& path, const LoadOptions& options = {});

}  // namespace crank::config
