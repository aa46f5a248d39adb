// plugins/grpc: a failed call's gRPC status as a clear error.
#pragma once

#include <string>
#include <string_view>

namespace grpc {
class Status;
}  // namespace grpc

namespace crank::grpc_plugin {

class DescriptorCatalog;

/// "OK", "CANCELLED", ... "UNAUTHENTICATED"; "CODE_<n>" for a code gRPC does not define.
std::string_view codeName(int code);

/// The details of a status (the grpc-status-details-bin trailer, a google.rpc.Status) as a JSON
/// array of the Any messages it carries: each rendered in the upstream's types when `catalog`
/// knows them, else {"@type": url, "value_base64": "..."}. "[]" when there are none or the bytes
/// are not a google.rpc.Status (an Any whose type URL is not UTF-8 included).
std::string detailsJson(const std::string& status_details, const DescriptorCatalog* catalog);

/// Throws the sdk::Error for `status` (not OK) of a call of `method` ("pkg.Service/Method"):
/// UNAVAILABLE → unavailable, DEADLINE_EXCEEDED → timeout, RESOURCE_EXHAUSTED →
/// resource_exhausted, every other code → upstream. The message names the code and the method and
/// carries the status message (or says what the code means when the upstream sent none); the
/// details are {"grpc_status": {"code", "name", "message", "details": [...]}}.
[[noreturn]] void throwStatus(const grpc::Status& status, std::string_view method,
                              const DescriptorCatalog* catalog);

}  // namespace crank::grpc_plugin
