// plugins/grpc: an operation's `config` (README.md, "Operation config"), parsed once at config
// load (templates still in it) and again per call (rendered over the tool input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "reflection_client.h"  // Metadata

namespace crank::grpc_plugin {

/// Documented defaults and bounds (README.md).
struct GrpcDefaults {
    static constexpr std::int64_t reflection_timeout_ms = 5'000;
    static constexpr std::int64_t max_reflection_timeout_ms = 60'000;
    /// gRPC's own default receive limit; an operation may raise it up to the ceiling.
    static constexpr std::int64_t max_receive_bytes = std::int64_t{4} * 1024 * 1024;
    static constexpr std::int64_t max_receive_bytes_ceiling = std::int64_t{64} * 1024 * 1024;
};

/// `tls`: absent or false is plaintext (h2c); true uses the system's roots; an object names
/// the roots, a client certificate (mutual TLS) and the name to check.
struct TlsOptions {
    bool enabled = false;
    std::string ca_file;      ///< PEM roots; "": gRPC's default roots
    std::string cert_file;    ///< PEM client certificate chain (with key_file)
    std::string key_file;     ///< PEM private key
    std::string server_name;  ///< the name the certificate must carry; "": the target's host

    bool operator==(const TlsOptions&) const = default;
};

struct GrpcConfig {
    std::string target;  ///< "host:port", "dns:///host:port", "unix:/path", ...
    /// "pkg.Service/Method", without the leading "/" one may write.
    std::string method;
    /// The descriptor set file; "": ask the upstream's reflection service.
    std::string descriptor_set;
    std::int64_t reflection_timeout_ms = GrpcDefaults::reflection_timeout_ms;
    TlsOptions tls;
    /// Request metadata, keys lower-cased; values may hold templates before rendering.
    Metadata metadata;
    /// The request message as JSON text ("message"); nullopt: the tool input is the message.
    std::optional<std::string> message_json;
    std::int64_t max_receive_bytes = GrpcDefaults::max_receive_bytes;
    /// Wait for the channel to connect (up to the deadline) instead of failing at once.
    bool wait_for_ready = false;

    /// "pkg.Service" of `method`.
    std::string service() const;
    /// "/pkg.Service/Method", the HTTP/2 path.
    std::string path() const { return "/" + method; }
};

/// Receives each problem: `path` into the config ("tls.ca_file"), what to fix.
using ProblemSink = std::function<void(std::string_view path, std::string_view message)>;

/// Parses `json` (an operation's config). With `rendered` false (config load), values that hold
/// templates are not checked yet. Reports every problem to `problem` and returns nullopt if there
/// was any.
std::optional<GrpcConfig> parseGrpcConfig(std::string_view json, bool rendered,
                                          const ProblemSink& problem);

/// The config's JSON Schema (crank_adapter.config_schema_json).
std::string_view grpcConfigSchema();

}  // namespace crank::grpc_plugin
