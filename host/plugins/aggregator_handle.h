#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plugins/diagnostic.h"
#include "plugins/plugin_call.h"
#include "plugins/plugin_writer.h"
#include <crank/plugin.h>

namespace crank::plugins {

/// A registered aggregator: the host's copy of a plugin's `crank_aggregator` (read up to its
/// struct_size, texts copied) and typed calls into it.
///
/// Owned by the PluginRegistry; valid as long as the registry. THREADING: const and safe to use
/// from any thread; the functions of one aggregate must not be called concurrently (plugin.h).
class AggregatorHandle {
public:
    AggregatorHandle(const crank_aggregator& aggregator, std::string plugin_name);

    const std::string& name() const { return name_; }
    const std::string& version() const { return version_; }
    const std::string& description() const { return description_; }
    const std::string& pluginName() const { return plugin_name_; }
    /// JSON Schema of `execution.aggregation` (a JSON object, checked at load).
    const std::string& configSchemaJson() const { return config_schema_json_; }
    /// JSON Schema of what snapshot() writes (a JSON object, checked at load).
    const std::string& outputSchemaJson() const { return output_schema_json_; }

    /// As AdapterHandle::validate.
    std::vector<Diagnostic> validate(std::string_view config_json) const;

    /// A fresh aggregate for one call, or NULL after call.setError(). Destroy it with destroy().
    crank_aggregate* create(std::string_view config_json, PluginCall& call) const;
    /// One item; CRANK_ERROR fails the call (the plugin reported why through the create() call).
    crank_status accept(crank_aggregate* aggregate, std::string_view item_json) const;
    /// Appends the current result (one JSON object) to `writer`.
    crank_status snapshot(crank_aggregate* aggregate, PluginWriter& writer) const;
    void destroy(crank_aggregate* aggregate) const;

private:
    crank_aggregator aggregator_;
    std::string name_;
    std::string version_;
    std::string description_;
    std::string config_schema_json_;
    std::string output_schema_json_;
    std::string plugin_name_;
};

}  // namespace crank::plugins
