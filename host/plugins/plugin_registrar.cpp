#include "plugins/plugin_registrar.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "log/log.h"
#include "plugins/plugin_struct_reader.h"

namespace crank::plugins {
namespace {

/// The functions CRANK_CAP_FEDERATION needs that `adapter` lacks.
std::vector<std::string> missingFederationFunctions(const crank_adapter& adapter) {
    std::vector<std::string> missing;
    if (adapter.upstream_open == nullptr) {
        missing.emplace_back("upstream_open");
    }
    if (adapter.upstream_request == nullptr) {
        missing.emplace_back("upstream_request");
    }
    if (adapter.upstream_close == nullptr) {
        missing.emplace_back("upstream_close");
    }
    return missing;
}

}  // namespace

PluginRegistrar::PluginRegistrar(std::string plugin_name, OwnerLookup adapter_owner,
                                 OwnerLookup aggregator_owner)
    : plugin_name_(std::move(plugin_name)),
      adapter_owner_(std::move(adapter_owner)),
      aggregator_owner_(std::move(aggregator_owner)) {}

crank_status PluginRegistrar::refuse(std::string message) noexcept {
    try {
        log::warn("plugin {}: {}", plugin_name_, message);
        errors_.push_back(std::move(message));
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory; the CRANK_ERROR still says it
    }
    return CRANK_ERROR;
}

crank_status PluginRegistrar::registerAdapter(const crank_adapter* adapter) noexcept {
    try {
        if (!open_) {
            return refuse("register_adapter was called outside init(); ignored");
        }
        return addAdapter(adapter);
    } catch (const std::exception& e) {
        return refuse(fmt::format("register_adapter failed: {}", e.what()));
    } catch (...) {
        return refuse("register_adapter failed");
    }
}

crank_status PluginRegistrar::registerAggregator(const crank_aggregator* aggregator) noexcept {
    try {
        if (!open_) {
            return refuse("register_aggregator was called outside init(); ignored");
        }
        return addAggregator(aggregator);
    } catch (const std::exception& e) {
        return refuse(fmt::format("register_aggregator failed: {}", e.what()));
    } catch (...) {
        return refuse("register_aggregator failed");
    }
}

void PluginRegistrar::setInitError(std::string_view message) noexcept {
    try {
        if (!open_) {
            log::warn("plugin {}: set_init_error was called outside init(): {}", plugin_name_,
                      message);
            return;
        }
        init_error_.assign(message.substr(0, 4096));
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory; init() still fails
    }
}

crank_status PluginRegistrar::addAdapter(const crank_adapter* adapter) {
    auto read = readAdapter(adapter);
    if (!read) {
        return refuse(read.error().message);
    }
    const crank_adapter& copy = *read;
    auto name = readName(copy.name, "adapter name");
    if (!name) {
        return refuse(name.error().message);
    }
    const std::string who = fmt::format("adapter '{}'", *name);
    for (const auto& [text, what] :
         {std::pair{copy.version, "version"}, std::pair{copy.description, "description"}}) {
        auto checked = readText(text, what);
        if (!checked) {
            return refuse(fmt::format("{}: {}", who, checked.error().message));
        }
    }
    if ((copy.capabilities & (CRANK_CAP_UNARY | CRANK_CAP_SERVER_STREAM | CRANK_CAP_FEDERATION)) ==
        0) {
        return refuse(
            fmt::format("{} declares no capability (CRANK_CAP_UNARY, "
                        "CRANK_CAP_SERVER_STREAM or CRANK_CAP_FEDERATION)",
                        who));
    }
    if ((copy.capabilities & CRANK_CAP_FEDERATION) != 0) {
        const std::string missing =
            fmt::format("{}", fmt::join(missingFederationFunctions(copy), ", "));
        if (!missing.empty()) {
            return refuse(
                fmt::format("{} declares CRANK_CAP_FEDERATION but has no {}", who, missing));
        }
    }
    if ((copy.capabilities & CRANK_CAP_UNARY) != 0 && copy.unary_call == nullptr) {
        return refuse(fmt::format("{} declares CRANK_CAP_UNARY but has no unary_call", who));
    }
    if ((copy.capabilities & CRANK_CAP_SERVER_STREAM) != 0) {
        std::vector<std::string_view> missing;
        if (copy.stream_open == nullptr) {
            missing.emplace_back("stream_open");
        }
        if (copy.stream_resume == nullptr) {
            missing.emplace_back("stream_resume");
        }
        if (copy.stream_cancel == nullptr) {
            missing.emplace_back("stream_cancel");
        }
        if (copy.stream_destroy == nullptr) {
            missing.emplace_back("stream_destroy");
        }
        if (!missing.empty()) {
            return refuse(fmt::format("{} declares CRANK_CAP_SERVER_STREAM but has no {}", who,
                                      fmt::join(missing, ", ")));
        }
    }
    auto schema = readSchema(copy.config_schema_json, "config_schema_json");
    if (!schema) {
        return refuse(fmt::format("{}: {}", who, schema.error().message));
    }
    const std::string owner = adapter_owner_ ? adapter_owner_(*name) : std::string();
    if (!owner.empty()) {
        return refuse(fmt::format("{} is already registered by {}", who, owner));
    }
    const bool mine = std::any_of(adapters_.begin(), adapters_.end(),
                                  [&](const auto& handle) { return handle->name() == *name; });
    if (mine) {
        return refuse(fmt::format("{} is registered twice by this library", who));
    }
    adapters_.push_back(std::make_unique<AdapterHandle>(copy, plugin_name_));
    return CRANK_OK;
}

crank_status PluginRegistrar::addAggregator(const crank_aggregator* aggregator) {
    auto read = readAggregator(aggregator);
    if (!read) {
        return refuse(read.error().message);
    }
    const crank_aggregator& copy = *read;
    auto name = readName(copy.name, "aggregator name");
    if (!name) {
        return refuse(name.error().message);
    }
    const std::string who = fmt::format("aggregator '{}'", *name);
    for (const auto& [text, what] :
         {std::pair{copy.version, "version"}, std::pair{copy.description, "description"}}) {
        auto checked = readText(text, what);
        if (!checked) {
            return refuse(fmt::format("{}: {}", who, checked.error().message));
        }
    }
    std::vector<std::string_view> missing;
    if (copy.create == nullptr) {
        missing.emplace_back("create");
    }
    if (copy.accept == nullptr) {
        missing.emplace_back("accept");
    }
    if (copy.snapshot == nullptr) {
        missing.emplace_back("snapshot");
    }
    if (copy.destroy == nullptr) {
        missing.emplace_back("destroy");
    }
    if (!missing.empty()) {
        return refuse(
            fmt::format("{} has no {} (every aggregator needs create, accept, snapshot "
                        "and destroy)",
                        who, fmt::join(missing, ", ")));
    }
    for (const auto& [text, what] : {std::pair{copy.config_schema_json, "config_schema_json"},
                                     std::pair{copy.output_schema_json, "output_schema_json"}}) {
        auto schema = readSchema(text, what);
        if (!schema) {
            return refuse(fmt::format("{}: {}", who, schema.error().message));
        }
    }
    const std::string owner = aggregator_owner_ ? aggregator_owner_(*name) : std::string();
    if (!owner.empty()) {
        return refuse(fmt::format("{} is already registered by {}", who, owner));
    }
    const bool mine = std::any_of(aggregators_.begin(), aggregators_.end(),
                                  [&](const auto& handle) { return handle->name() == *name; });
    if (mine) {
        return refuse(fmt::format("{} is registered twice by this library", who));
    }
    aggregators_.push_back(std::make_unique<AggregatorHandle>(copy, plugin_name_));
    return CRANK_OK;
}

}  // namespace crank::plugins
