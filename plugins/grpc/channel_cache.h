// plugins/grpc: one gRPC channel per upstream, shared by every operation and call to it.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <grpcpp/generic/generic_stub.h>

#include "grpc_config.h"

namespace crank::grpc_plugin {

/// A channel and the generic stub over it. A channel multiplexes every call over its HTTP/2
/// connection(s) and reconnects by itself; both are thread-safe.
struct Upstream {
    std::shared_ptr<grpc::Channel> channel;
    std::shared_ptr<grpc::GenericStub> stub;
};

/// Channels keyed by everything that is a property of the channel rather than of a call: the
/// target, the TLS material and the receive limit (gRPC 1.51 has no per-call limit). The number
/// of keys is bounded by the config (none of these members may hold a template).
class ChannelCache {
public:
    /// The channel for `config`, created on first use. Throws sdk::Error(invalid_argument) when a
    /// TLS file cannot be read.
    Upstream get(const GrpcConfig& config);
    std::size_t size() const;
    /// Drops every channel (the plugin's shutdown: nothing of gRPC may run after it).
    void clear();

private:
    mutable std::mutex mutex_;
    std::map<std::string, Upstream> channels_;
};

}  // namespace crank::grpc_plugin
