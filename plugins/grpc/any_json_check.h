// The gRPC plugin: a check of google.protobuf.Any objects in tool input, before protobuf parses it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <google/protobuf/descriptor.h>
#include <rapidjson/document.h>

namespace crank::grpc_plugin {

/// What is wrong with the first google.protobuf.Any in `json` (proto3 JSON of a `type`, at any
/// depth, Any payloads included) that protobuf 3.21's JSON parser cannot take; nullopt when
/// there is none.
///
/// An Any whose "@type" names a well-known type with a JSON form of its own (Duration, Timestamp,
/// FieldMask, Struct, Value, ListValue, the wrappers, Any) is {"@type": URL, "value": JSON}. Give
/// protobuf 3.21 a second "value", a second "@type" or any other member next to them, and it
/// writes the payload's root message twice: a failed CHECK (FatalException) from deep in its
/// converter. So each of the two may appear once and nothing else may, e.g.
///   "packed: a google.protobuf.Any of google.protobuf.Duration has \"value\" twice (it takes
///    \"@type\" and \"value\" once each, and nothing else)".
/// Types the pool does not know, malformed URLs and wrong JSON kinds are left to protobuf, which
/// refuses them by name. The walk follows `json`, whose depth the caller bounds.
/// The message type an Any's type URL names ("type.googleapis.com/pkg.T", or the bare name): the
/// part after the last '/', looked up in `pool`; null when the pool has no such type.
const google::protobuf::Descriptor* anyPayloadType(const google::protobuf::DescriptorPool& pool,
                                                   std::string_view type_url);

std::optional<std::string> anyInputProblem(const rapidjson::Value& json,
                                           const google::protobuf::Descriptor& type,
                                           const google::protobuf::DescriptorPool& pool);

}  // namespace crank::grpc_plugin
