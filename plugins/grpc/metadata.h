// plugins/grpc: request metadata (headers) checked before gRPC sees them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "reflection_client.h"  // Metadata

namespace crank::grpc_plugin {

/// Why `key` cannot be a metadata key, or nullopt when it can. Keys are lower-case already
/// (normalizeKey); allowed: [0-9a-z_.-]+, not starting with "grpc-" (gRPC's own) or ":"
/// (pseudo-headers), not a connection header HTTP/2 forbids.
std::optional<std::string> badKey(std::string_view key);
/// Why `value` cannot be the value of `key`, or nullopt when it can: printable ASCII (0x20-0x7E)
/// unless the key ends in "-bin" (binary: any bytes), at most 8 KiB.
std::optional<std::string> badValue(std::string_view key, std::string_view value);
/// Lower-cases ASCII: HTTP/2 header names are lower-case, and gRPC 1.51 aborts the whole process
/// on an upper-case key, so nothing reaches it unchecked.
std::string normalizeKey(std::string_view key);

/// The metadata an auth profile (crank_request.auth_json) adds: bearer → authorization: Bearer,
/// basic → authorization: Basic base64(user:password), api_key in a header → that header, and
/// the profile's static headers. Throws sdk::Error(invalid_argument) for an api_key "in":"query"
/// (gRPC has no query) or a header that is not valid metadata.
Metadata authMetadata(std::string_view auth_json);

/// Checks every entry (badKey, badValue) and throws sdk::Error(invalid_argument) naming the first
/// bad one, `where` saying where it came from ("metadata", "the auth profile").
void checkMetadata(const Metadata& metadata, std::string_view where);

}  // namespace crank::grpc_plugin
