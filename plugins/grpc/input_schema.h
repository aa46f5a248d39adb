// plugins/grpc: a tool's input schema derived from a gRPC request message.
#pragma once

#include <string>

namespace google::protobuf {
class Descriptor;
}  // namespace google::protobuf

namespace crank::grpc_plugin {

/// The JSON Schema (draft 2020-12, the subset host/json/json_schema.cpp compiles) of `message` in
/// the proto3 JSON mapping, as JSON text: an object with "type":"object", "properties" under the
/// fields' JSON names (lowerCamel), "additionalProperties": false, and a "description" per field
/// saying its proto type. See input_schema.cpp for the mapping of each kind.
/// Deterministic (fields in declaration order). Recursive messages are in the root's "$defs"
/// under their full names ("$ref": "#/$defs/pkg.Node"; "#" for the root message itself). No
/// "required"; oneofs are described, not enforced. A well-known type as the root gets its JSON
/// form, which is not an object for Timestamp, Duration, wrappers, Value, ListValue and
/// FieldMask: an MCP tool needs an object, so the caller must refuse or wrap those.
std::string inputSchemaJson(const google::protobuf::Descriptor& message);

}  // namespace crank::grpc_plugin
