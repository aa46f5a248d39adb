#pragma once

#include <vector>

#include "config/config.h"
#include "config/config_error.h"
#include "runtime/operation.h"

namespace crank::plugins {
class PluginRegistry;
}  // namespace crank::plugins

namespace crank::runtime {

/// The operations of a config, compiled, or every reason why not.
struct CompiledOperations {
    std::vector<OperationPtr> operations;
    std::vector<config::ConfigError> errors;
};

/// Checks every operation of `config` against the loaded plugins and prepares it to run:
/// - `protocol` names a loaded adapter (else the error says whether its plugin is disabled,
///   rejected, or not installed, or suggests a close name), which supports the operation's mode
///   and transport behaviour;
/// - `config` is valid against the adapter's config schema and its own validate();
/// - for a window, `aggregation_mode` names a loaded aggregator and `execution.aggregation` is
///   valid against its config schema and validate();
/// - `input_schema` compiles, the templates in `config` compile, the *_path members and the
///   safety settings parse;
/// - `auth_profile` names a profile of `config.auth_profiles`, which becomes the operation's
///   auth_json (built once here, handed to every call) and the scrubber of its secrets.
/// Errors carry config paths ("operations[2].config.url: ...") like the config loader's.
CompiledOperations compileOperations(const config::Config& config,
                                     const plugins::PluginRegistry& registry);

/// One operation compiled on its own (an operation of the admin API), by the same rules as
/// compileOperations(), against `config`'s auth profiles. The errors' paths start at the
/// operation itself ("execution.max_items", "config.url", "" for the whole of it); `operation`
/// is null when there is any.
struct CompiledOperation {
    OperationPtr operation;
    std::vector<config::ConfigError> errors;
};
CompiledOperation compileOperation(const config::OperationConfig& op, const config::Config& config,
                                   const plugins::PluginRegistry& registry);

}  // namespace crank::runtime
