#include "plugins/plugin_registry.h"

#include <utility>

#include "log/log.h"
#include "plugins/plugin_registry_state.h"

namespace crank::plugins {

PluginRegistry::State::~State() {
    adapters.clear();
    aggregators.clear();
    for (auto it = libraries.rbegin(); it != libraries.rend(); ++it) {
        LoadedLibrary& loaded = **it;
        if (loaded.descriptor.shutdown != nullptr) {
            loaded.descriptor.shutdown();
        }
        try {
            loaded.library.unload();
        } catch (...) {  // NOLINT(bugprone-empty-catch): unload is noexcept in practice
        }
    }
    libraries.clear();
}

PluginRegistry::PluginRegistry() : state_(std::make_unique<State>()) {}
PluginRegistry::PluginRegistry(std::unique_ptr<State> state) : state_(std::move(state)) {}
PluginRegistry::~PluginRegistry() = default;
PluginRegistry::PluginRegistry(PluginRegistry&& other) noexcept
    : state_(std::exchange(other.state_, nullptr)) {}
PluginRegistry& PluginRegistry::operator=(PluginRegistry&& other) noexcept {
    if (this != &other) {
        state_ = std::exchange(other.state_, nullptr);
    }
    return *this;
}

const AdapterHandle* PluginRegistry::adapter(std::string_view name) const {
    if (!state_) {
        return nullptr;
    }
    const auto it = state_->adapters.find(name);
    return it == state_->adapters.end() ? nullptr : it->second.get();
}

const AggregatorHandle* PluginRegistry::aggregator(std::string_view name) const {
    if (!state_) {
        return nullptr;
    }
    const auto it = state_->aggregators.find(name);
    return it == state_->aggregators.end() ? nullptr : it->second.get();
}

const std::vector<PluginInfo>& PluginRegistry::plugins() const {
    static const std::vector<PluginInfo> kNone;
    return state_ ? state_->plugins : kNone;
}

std::vector<std::string> PluginRegistry::adapterNames() const {
    std::vector<std::string> names;
    if (state_) {
        for (const auto& entry : state_->adapters) {
            names.push_back(entry.first);
        }
    }
    return names;
}

std::vector<std::string> PluginRegistry::aggregatorNames() const {
    std::vector<std::string> names;
    if (state_) {
        for (const auto& entry : state_->aggregators) {
            names.push_back(entry.first);
        }
    }
    return names;
}

bool PluginRegistry::allLoaded() const {
    return !state_ || state_->all_loaded;
}

std::string_view pluginStatusName(PluginStatus status) {
    switch (status) {
        case PluginStatus::loaded:
            return "loaded";
        case PluginStatus::rejected:
            return "rejected";
        case PluginStatus::disabled:
            return "disabled";
        case PluginStatus::missing:
            return "missing";
    }
    return "rejected";
}

}  // namespace crank::plugins
