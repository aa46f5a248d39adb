#pragma once

// The "rest" adapter: unary HTTP calls (also the host's long-poll windows), long jobs (`job`,
// rest_job.h) and SSE streams.

#include <memory>
#include <string_view>

#include "http.h"
#include <crank/sdk.hpp>

namespace crank::rest {

class RestAdapter : public sdk::Adapter {
public:
    RestAdapter();
    ~RestAdapter() override;
    RestAdapter(const RestAdapter&) = delete;
    RestAdapter& operator=(const RestAdapter&) = delete;
    RestAdapter(RestAdapter&&) = delete;
    RestAdapter& operator=(RestAdapter&&) = delete;

    void validate(std::string_view config_json, sdk::Diagnostics& diagnostics) override;
    void unaryCall(sdk::Call& call, const sdk::Request& request) override;
    std::unique_ptr<sdk::Stream> openStream(sdk::Call& call, const sdk::Request& request) override;

    /// The keep-alive pool shared by every call (tests read its counters).
    ConnectionPool& pool() { return pool_; }

private:
    ConnectionPool pool_;
};

/// What the adapter declares to the host.
sdk::AdapterInfo restAdapterInfo();

/// Registers the adapter (the plugin's entry calls it).
void registerRestPlugin(sdk::Registrar& registrar);

}  // namespace crank::rest
