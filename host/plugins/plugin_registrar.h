#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/adapter_handle.h"
#include "plugins/aggregator_handle.h"
#include <crank/plugin.h>

namespace crank::plugins {

/// The host side of `crank_registrar` for one library: what register_adapter,
/// register_aggregator and set_init_error reach during that library's init(). It checks each
/// descriptor (struct size, names, views, capabilities against functions, schemas as JSON
/// objects, duplicate names) and keeps the accepted ones PENDING: the loader commits them only
/// when the whole init() succeeded, so that a library refused half-way leaves nothing behind.
///
/// THREADING: used only by the thread that runs init().
class PluginRegistrar {
public:
    /// Who already registered `name` ("library 'x' (/path/libx.so)"), or empty when free.
    using OwnerLookup = std::function<std::string(std::string_view name)>;

    PluginRegistrar(std::string plugin_name, OwnerLookup adapter_owner,
                    OwnerLookup aggregator_owner);

    crank_status registerAdapter(const crank_adapter* adapter) noexcept;
    crank_status registerAggregator(const crank_aggregator* aggregator) noexcept;
    void setInitError(std::string_view message) noexcept;
    /// After init() returned: every later call is refused (and logged). Drops the lookups,
    /// which refer to the loader's state.
    void close() noexcept {
        open_ = false;
        adapter_owner_ = nullptr;
        aggregator_owner_ = nullptr;
    }

    /// The set_init_error() message (the last one), or empty.
    const std::string& initError() const { return init_error_; }
    /// Why registrations were refused, in order.
    const std::vector<std::string>& errors() const { return errors_; }

    std::vector<std::unique_ptr<AdapterHandle>> takeAdapters() { return std::move(adapters_); }
    std::vector<std::unique_ptr<AggregatorHandle>> takeAggregators() {
        return std::move(aggregators_);
    }

    crank_registrar* handle() noexcept { return reinterpret_cast<crank_registrar*>(this); }
    static PluginRegistrar* fromHandle(crank_registrar* registrar) noexcept {
        return reinterpret_cast<PluginRegistrar*>(registrar);
    }

private:
    crank_status refuse(std::string message) noexcept;
    crank_status addAdapter(const crank_adapter* adapter);
    crank_status addAggregator(const crank_aggregator* aggregator);

    std::string plugin_name_;
    OwnerLookup adapter_owner_;
    OwnerLookup aggregator_owner_;
    bool open_ = true;
    std::string init_error_;
    std::vector<std::string> errors_;
    std::vector<std::unique_ptr<AdapterHandle>> adapters_;
    std::vector<std::unique_ptr<AggregatorHandle>> aggregators_;
};

}  // namespace crank::plugins
