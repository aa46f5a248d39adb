#include "plugins/aggregator_handle.h"

#include <utility>

#include "plugins/diagnostics_call.h"
#include "plugins/plugin_struct_reader.h"

namespace crank::plugins {

AggregatorHandle::AggregatorHandle(const crank_aggregator& aggregator, std::string plugin_name)
    : aggregator_(aggregator),
      name_(toView(aggregator.name)),
      version_(toView(aggregator.version)),
      description_(toView(aggregator.description)),
      config_schema_json_(toView(aggregator.config_schema_json)),
      output_schema_json_(toView(aggregator.output_schema_json)),
      plugin_name_(std::move(plugin_name)) {
    // Only the copies are used from now on.
    aggregator_.name = {};
    aggregator_.version = {};
    aggregator_.description = {};
    aggregator_.config_schema_json = {};
    aggregator_.output_schema_json = {};
}

std::vector<Diagnostic> AggregatorHandle::validate(std::string_view config_json) const {
    if (aggregator_.validate == nullptr) {
        return {};
    }
    DiagnosticsCall call;
    const crank_status status = aggregator_.validate(
        aggregator_.state, crank_str{config_json.data(), config_json.size()}, call.handle());
    return call.finish(status);
}

crank_aggregate* AggregatorHandle::create(std::string_view config_json, PluginCall& call) const {
    return aggregator_.create(aggregator_.state, crank_str{config_json.data(), config_json.size()},
                              call.handle());
}

crank_status AggregatorHandle::accept(crank_aggregate* aggregate,
                                      std::string_view item_json) const {
    return aggregator_.accept(aggregate, crank_str{item_json.data(), item_json.size()});
}

crank_status AggregatorHandle::snapshot(crank_aggregate* aggregate, PluginWriter& writer) const {
    return aggregator_.snapshot(aggregate, writer.handle());
}

void AggregatorHandle::destroy(crank_aggregate* aggregate) const {
    if (aggregate != nullptr) {
        aggregator_.destroy(aggregate);
    }
}

}  // namespace crank::plugins
