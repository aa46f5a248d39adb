#include "channel_cache.h"

#include <fstream>
#include <iterator>
#include <sstream>

#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <crank/sdk/error.hpp>

namespace crank::grpc_plugin {
namespace {

constexpr std::size_t kMaxPemBytes = std::size_t{1} * 1024 * 1024;
// A connection that stops answering is noticed within a minute and a half, even mid-stream.
constexpr int kKeepaliveTimeMs = 60'000;
constexpr int kKeepaliveTimeoutMs = 20'000;

std::string readPem(const std::string& path, std::string_view what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw sdk::Error(sdk::ErrorCode::invalid_argument,
                         "tls." + std::string(what) + ": cannot read " + path);
    }
    std::string text;
    char buffer[8192];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > kMaxPemBytes) {
            throw sdk::Error(sdk::ErrorCode::invalid_argument,
                             "tls." + std::string(what) + ": " + path + " is larger than 1 MiB");
        }
    }
    if (text.find("-----BEGIN ") == std::string::npos) {
        throw sdk::Error(sdk::ErrorCode::invalid_argument,
                         "tls." + std::string(what) + ": " + path + " is not a PEM file");
    }
    return text;
}

std::string keyOf(const GrpcConfig& c) {
    std::ostringstream key;
    key << c.target << '\n'
        << c.max_receive_bytes << '\n'
        << c.tls.enabled << '\n'
        << c.tls.ca_file << '\n'
        << c.tls.cert_file << '\n'
        << c.tls.key_file << '\n'
        << c.tls.server_name;
    return key.str();
}

}  // namespace

Upstream ChannelCache::get(const GrpcConfig& config) {
    const std::string key = keyOf(config);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (const auto it = channels_.find(key); it != channels_.end()) {
            return it->second;
        }
    }
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    grpc::ChannelArguments args;
    if (config.tls.enabled) {
        grpc::SslCredentialsOptions options;
        if (!config.tls.ca_file.empty()) {
            options.pem_root_certs = readPem(config.tls.ca_file, "ca_file");
        }
        if (!config.tls.cert_file.empty()) {
            options.pem_cert_chain = readPem(config.tls.cert_file, "cert_file");
            options.pem_private_key = readPem(config.tls.key_file, "key_file");
        }
        credentials = grpc::SslCredentials(options);
        if (!config.tls.server_name.empty()) {
            args.SetSslTargetNameOverride(config.tls.server_name);
        }
    } else {
        credentials = grpc::InsecureChannelCredentials();
    }
    args.SetMaxReceiveMessageSize(static_cast<int>(config.max_receive_bytes));
    args.SetMaxSendMessageSize(static_cast<int>(GrpcDefaults::max_receive_bytes_ceiling));
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
    args.SetUserAgentPrefix("crank-grpc/1.0");
    // Channels of one target would otherwise share one connection process-wide; a channel of
    // its own keeps the receive limits and TLS material of different keys apart.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    Upstream made;
    made.channel = grpc::CreateCustomChannel(config.target, credentials, args);
    made.stub = std::make_shared<grpc::GenericStub>(made.channel);
    std::lock_guard<std::mutex> lock(mutex_);
    // Another thread may have made one meanwhile: keep the first, so that every call shares it.
    return channels_.emplace(key, std::move(made)).first->second;
}

std::size_t ChannelCache::size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return channels_.size();
}

void ChannelCache::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    channels_.clear();
}

}  // namespace crank::grpc_plugin
