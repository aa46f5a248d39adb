#pragma once

// Secrets that a plugin takes in its own config (`operations[].config`, `upstreams[].config`)
// rather than through an auth profile: the mcp plugin's `headers` with {"env": NAME}, for one. The
// plugin resolves them itself, so crankd would not know the values it must scrub from what the
// plugin returns. The rule, for every plugin: an object that is exactly {"env": "NAME"} anywhere in
// a plugin's config is a secret reference, and crankd resolves it too, to scrub its value.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/secret.h"

namespace crank::config {

/// Looks up an environment variable (nullopt when unset).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

/// crankd's own environment (getenv), which the plugin in crankd's process reads too.
std::optional<std::string> processEnv(const std::string& name);

/// The values of every {"env": "NAME"} object (exactly that one member, a string) in
/// `config_json`, a plugin's config as JSON text, at any depth. Unset and empty variables are
/// left out (the plugin reports them, naming its member); so is text that does not parse.
std::vector<Secret> pluginConfigSecrets(std::string_view config_json,
                                        const EnvLookup& lookup = processEnv);

/// The same, as the values alone (for runtime::SecretScrubber).
std::vector<std::string> pluginConfigSecretValues(std::string_view config_json,
                                                  const EnvLookup& lookup = processEnv);

}  // namespace crank::config
