#pragma once

// Internal to plugins/aggregators: the five aggregation modes, each with its schemas, its
// config checks and its factory. The plugin layer registers exactly these.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "aggregate_logic.h"
#include "config_reader.h"

namespace crank::aggregators {

/// One aggregation mode.
struct AggregatorEntry {
    std::string name;
    std::string version;
    std::string description;
    std::string config_schema_json;  ///< JSON Schema of the config
    std::string output_schema_json;  ///< JSON Schema of what snapshot() writes
    /// Every problem of `config_json` (empty when it is valid).
    std::vector<ConfigProblem> (*validate)(std::string_view config_json) = nullptr;
    /// A fresh aggregate; throws AggregateError (invalid_config) when the config is wrong.
    std::unique_ptr<AggregateLogic> (*create)(std::string_view config_json) = nullptr;
};

/// The modes, built once, alive until the process ends.
const std::vector<AggregatorEntry>& aggregatorCatalog();

/// The entry named `name`, or null.
const AggregatorEntry* findAggregator(std::string_view name);

}  // namespace crank::aggregators
