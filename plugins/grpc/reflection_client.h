// plugins/grpc: a client of the gRPC server reflection service, with no generated code.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace grpc {
class Channel;
}  // namespace grpc

namespace crank::grpc_plugin {

/// Metadata sent with each call, keys already lower-case and checked (metadata.h).
using Metadata = std::vector<std::pair<std::string, std::string>>;

/// Asks the server's reflection service (grpc.reflection.v1, then grpc.reflection.v1alpha when
/// the server answers UNIMPLEMENTED) for the files that define each of `services` ("pkg.Service")
/// and, recursively, every file they import that the answers did not carry already (a server may
/// answer with only the one file). Well-known types (google/protobuf/*.proto) are not fetched:
/// DescriptorCatalog has them. Returns the serialized FileDescriptorProtos, each file once.
///
/// Everything happens within `timeout` on one reflection stream (two when it falls back to
/// v1alpha), on its own completion queue, drained before returning or throwing. Messages name
/// "the server at 127.0.0.1:5000" (gRPC's peer, or the target before it connects).
/// No services: no request, no files. Throws sdk::Error:
///  - unavailable: the server cannot be reached (gRPC's message);
///  - timeout: no complete answer within `timeout`;
///  - unsupported: the server implements neither reflection service (names both);
///  - invalid_argument: the server does not know a service, or cannot send a file an answer
///    imports (its error_response NOT_FOUND, naming them);
///  - upstream: any other error status or error_response (PERMISSION_DENIED...), code named;
///  - protocol: an answer that is not a ServerReflectionResponse or a FileDescriptorProto, or
///    that does not define the service asked for, or a stream ending without an answer;
///  - resource_exhausted: more than 1000 files or 64 MiB in total.
std::vector<std::string> fetchServiceFiles(const std::shared_ptr<grpc::Channel>& channel,
                                           const std::vector<std::string>& services,
                                           const Metadata& metadata,
                                           std::chrono::milliseconds timeout);

/// The services the server lists (list_services), sorted, the reflection services included.
/// Same errors as fetchServiceFiles().
std::vector<std::string> listServices(const std::shared_ptr<grpc::Channel>& channel,
                                      const Metadata& metadata, std::chrono::milliseconds timeout);

}  // namespace crank::grpc_plugin
