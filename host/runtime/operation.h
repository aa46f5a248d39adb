#pragma once

#include <memory>
#include <optional>
#include <string>

#include "config/operation_config.h"
#include "json/json_schema.h"
#include "json/json_template.h"
#include "runtime/output_mapping.h"
#include "runtime/secret_scrubber.h"

namespace crank::plugins {
class AdapterHandle;
class AggregatorHandle;
}  // namespace crank::plugins

namespace crank::runtime {

/// An operation ready to run: its config, checked against the loaded plugins, with everything
/// that can be prepared once (schemas compiled, templates compiled, paths parsed).
/// Immutable and shared by every call of its tool.
struct Operation {
    config::OperationConfig config;
    std::string path;  ///< where it is defined: "operations[2]"

    const plugins::AdapterHandle* adapter = nullptr;
    /// The aggregator of a window; nullptr for unary.
    const plugins::AggregatorHandle* aggregator = nullptr;

    // Always set once compiled (optional only because they have no empty state).
    std::optional<json::CompiledSchema> input_schema;
    std::optional<json::CompiledTemplate> request_template;
    std::optional<OutputMapping> output_mapping;
    /// True when the execution block names at least one of the *_path members.
    bool maps_output = false;

    /// The tool's outputSchema (JSON text); empty when the tool declares none.
    std::string output_schema_json;

    /// The resolved `auth_profile` handed to the plugin on every call (runtime/auth_json.h),
    /// secrets in clear: never log it. Empty when the operation names no profile.
    std::string auth_json;
    /// The profile's secret values: scrubbed from the plugin's errors, log lines and results.
    SecretScrubber scrubber;
};

using OperationPtr = std::shared_ptr<const Operation>;

}  // namespace crank::runtime
