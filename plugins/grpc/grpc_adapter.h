// plugins/grpc: the "grpc" protocol adapter (README.md).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "channel_cache.h"
#include "descriptor_catalog.h"
#include "grpc_config.h"
#include <crank/sdk.hpp>

namespace crank::grpc_plugin {

/// Descriptor catalogs by where they come from: a descriptor set file, or the reflection service
/// of one upstream for one service. Filled at config load (validate/describe), read by calls. A
/// failed load is not kept: the next config load or call tries again.
class CatalogCache {
public:
    std::shared_ptr<const DescriptorCatalog> get(const GrpcConfig& config, ChannelCache& channels);
    void clear();

private:
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<const DescriptorCatalog>> catalogs_;
};

/// Calls gRPC methods with messages built at run time from descriptors: unary methods in every
/// mode, server-streaming ones as streams (window, session, async_job). Client-streaming and
/// bidirectional methods are refused when the config loads.
class GrpcAdapter final : public sdk::Adapter {
public:
    GrpcAdapter() = default;
    ~GrpcAdapter() override;
    GrpcAdapter(const GrpcAdapter&) = delete;
    GrpcAdapter& operator=(const GrpcAdapter&) = delete;
    GrpcAdapter(GrpcAdapter&&) = delete;
    GrpcAdapter& operator=(GrpcAdapter&&) = delete;

    void validate(std::string_view config_json, sdk::Diagnostics& diagnostics) override;
    std::string describe(std::string_view config_json, sdk::Diagnostics& diagnostics) override;
    void unaryCall(sdk::Call& call, const sdk::Request& request) override;
    std::unique_ptr<sdk::Stream> openStream(sdk::Call& call, const sdk::Request& request) override;

    /// How many channels are open (tests: one per upstream, whatever the number of calls).
    std::size_t channelCount() const { return channels_.size(); }

private:
    struct Prepared;
    Prepared prepare(const sdk::Request& request);

    ChannelCache channels_;
    CatalogCache catalogs_;
};

sdk::AdapterInfo grpcAdapterInfo();
void registerGrpcPlugin(sdk::Registrar& registrar);

}  // namespace crank::grpc_plugin
