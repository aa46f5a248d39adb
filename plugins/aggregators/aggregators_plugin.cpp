// The "aggregators" plugin library: registers the modes of aggregator_catalog.h with the SDK and
// turns the logic's AggregateError into SDK errors. Nothing else is exported than
// crank_plugin_entry.

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "aggregate_error.h"
#include "aggregator_catalog.h"
#include "crank/sdk.hpp"
#include "json_writer.h"

namespace crank::aggregators {
namespace {

/// {"path": "<path>"}, or empty for no path.
std::string pathDetails(std::string_view path) {
    if (path.empty()) {
        return {};
    }
    std::string details = "{\"path\":";
    sdk::appendJsonString(details, path);
    details.push_back('}');
    return details;
}

[[noreturn]] void rethrowAsSdkError(const AggregateError& error) {
    throw sdk::Error(sdk::ErrorCode::invalid_argument, error.what(), pathDetails(error.path()));
}

/// One call's aggregate: the logic, and a reused buffer for snapshots.
class PluginAggregate final : public sdk::Aggregate {
public:
    explicit PluginAggregate(std::unique_ptr<AggregateLogic> logic) : logic_(std::move(logic)) {}

    void accept(std::string_view item_json) override {
        try {
            logic_->accept(item_json);
        } catch (const AggregateError& error) {
            rethrowAsSdkError(error);
        }
    }

    void snapshot(sdk::Writer& writer) override {
        buffer_.Clear();
        logic_->snapshot(buffer_);
        // A false append() ends the snapshot: the layer reports resource_exhausted.
        writer.append(std::string_view(buffer_.GetString(), buffer_.GetSize()));
        if (buffer_.GetSize() > kKeptBufferBytes) {
            buffer_.Clear();
            buffer_.ShrinkToFit();
        }
    }

private:
    static constexpr std::size_t kKeptBufferBytes = std::size_t{1024} * 1024;

    std::unique_ptr<AggregateLogic> logic_;
    JsonBuffer buffer_;
};

/// One aggregation mode as the SDK sees it.
class PluginAggregator final : public sdk::Aggregator {
public:
    explicit PluginAggregator(const AggregatorEntry& entry) : entry_(entry) {}

    void validate(std::string_view config_json, sdk::Diagnostics& diagnostics) override {
        for (const ConfigProblem& problem : entry_.validate(config_json)) {
            diagnostics.error(problem.path, problem.message);
        }
    }

    std::unique_ptr<sdk::Aggregate> create(std::string_view config_json,
                                           sdk::Call& /*call*/) override {
        try {
            return std::make_unique<PluginAggregate>(entry_.create(config_json));
        } catch (const AggregateError& error) {
            rethrowAsSdkError(error);
        }
    }

private:
    const AggregatorEntry& entry_;
};

void registerAggregators(sdk::Registrar& registrar) {
    for (const AggregatorEntry& entry : aggregatorCatalog()) {
        sdk::AggregatorInfo info;
        info.name = entry.name;
        info.version = entry.version;
        info.description = entry.description;
        info.config_schema_json = entry.config_schema_json;
        info.output_schema_json = entry.output_schema_json;
        registrar.addAggregator(std::move(info), std::make_unique<PluginAggregator>(entry));
    }
}

}  // namespace
}  // namespace crank::aggregators

CRANK_PLUGIN("aggregators", "1.0.0",
             "raw_items, summary_only, summary_plus_samples, stats and latest_state aggregation",
             crank::aggregators::registerAggregators);
