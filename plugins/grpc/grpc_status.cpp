#include "grpc_status.h"

#include <array>
#include <cstdint>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/support/status.h>

#include "descriptor_catalog.h"
#include <crank/sdk/base64.hpp>
#include <crank/sdk/error.hpp>
#include <crank/sdk/json.hpp>

namespace crank::grpc_plugin {
namespace {

using google::protobuf::internal::WireFormatLite;

constexpr std::array<std::string_view, 17> kNames = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

// What a code means, for a status that came without a message (gRPC's own UNIMPLEMENTED does).
constexpr std::array<std::string_view, 17> kMeanings = {
    "",
    "the call was cancelled",
    "the upstream failed without saying why",
    "the upstream refused the request",
    "the upstream did not answer in time",
    "the upstream did not find what was asked for",
    "the upstream says it exists already",
    "the upstream refused: permission denied",
    "the upstream ran out of a resource or a quota",
    "the upstream is not in a state to do this",
    "the upstream aborted the call",
    "a value is out of range",
    "the upstream does not implement this method",
    "the upstream failed internally",
    "the upstream cannot be reached",
    "the upstream lost data",
    "the upstream did not accept the credentials"};

struct AnyMessage {
    std::string type_url;
    std::string value;
};

/// One google.protobuf.Any from its bytes; false when they are not one (a type_url that is not
/// UTF-8 included, as protobuf's own parser refuses it: it would reach the JSON details raw).
bool readAny(const std::string& bytes, AnyMessage& out) {
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                              static_cast<int>(bytes.size()));
    while (const std::uint32_t tag = in.ReadTag()) {
        const int field = WireFormatLite::GetTagFieldNumber(tag);
        const auto wire = WireFormatLite::GetTagWireType(tag);
        if (wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED && (field == 1 || field == 2)) {
            if (!WireFormatLite::ReadBytes(&in, field == 1 ? &out.type_url : &out.value)) {
                return false;
            }
        } else if (!WireFormatLite::SkipField(&in, tag)) {
            return false;
        }
    }
    return in.ConsumedEntireMessage() &&
           google::protobuf::internal::IsStructurallyValidUTF8(
               out.type_url.data(), static_cast<int>(out.type_url.size()));
}

sdk::ErrorCode errorCodeOf(grpc::StatusCode code) {
    switch (code) {
        case grpc::StatusCode::UNAVAILABLE:
            return sdk::ErrorCode::unavailable;
        case grpc::StatusCode::DEADLINE_EXCEEDED:
            return sdk::ErrorCode::timeout;
        case grpc::StatusCode::RESOURCE_EXHAUSTED:
            return sdk::ErrorCode::resource_exhausted;
        default:
            return sdk::ErrorCode::upstream;
    }
}

}  // namespace

std::string_view codeName(int code) {
    if (code >= 0 && static_cast<std::size_t>(code) < kNames.size()) {
        return kNames[static_cast<std::size_t>(code)];
    }
    return "UNKNOWN_CODE";
}

std::string detailsJson(const std::string& status_details, const DescriptorCatalog* catalog) {
    if (status_details.empty()) {
        return "[]";
    }
    std::vector<std::string> rendered;
    google::protobuf::io::CodedInputStream in(
        reinterpret_cast<const std::uint8_t*>(status_details.data()),
        static_cast<int>(status_details.size()));
    // google.rpc.Status: 1 code (varint), 2 message (string), 3 details (repeated Any).
    while (const std::uint32_t tag = in.ReadTag()) {
        if (WireFormatLite::GetTagFieldNumber(tag) == 3 &&
            WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
            std::string bytes;
            AnyMessage any;
            if (!WireFormatLite::ReadBytes(&in, &bytes) || !readAny(bytes, any)) {
                return "[]";
            }
            std::optional<std::string> json;
            if (catalog != nullptr) {
                json = catalog->anyToJson(any.type_url, any.value);
            }
            if (!json) {
                std::string raw = "{\"@type\":";
                sdk::appendJsonString(raw, any.type_url);
                raw += ",\"value_base64\":";
                sdk::appendJsonString(raw, sdk::base64(any.value));
                raw += "}";
                json = std::move(raw);
            }
            rendered.push_back(std::move(*json));
        } else if (!WireFormatLite::SkipField(&in, tag)) {
            return "[]";
        }
    }
    std::string out = "[";
    for (std::size_t i = 0; i < rendered.size(); ++i) {
        out += i == 0 ? "" : ",";
        out += rendered[i];
    }
    return out + "]";
}

void throwStatus(const grpc::Status& status, std::string_view method,
                 const DescriptorCatalog* catalog) {
    const int code = static_cast<int>(status.error_code());
    const std::string_view name = codeName(code);
    std::string said = status.error_message();
    if (said.empty() && code >= 0 && static_cast<std::size_t>(code) < kMeanings.size()) {
        said = std::string(kMeanings[static_cast<std::size_t>(code)]);
    }
    std::string message =
        "gRPC " + std::string(name) + " from " + std::string(method) + ": " + said;
    std::string details = "{\"grpc_status\":{\"code\":" + std::to_string(code) + ",\"name\":";
    sdk::appendJsonString(details, name);
    details += ",\"message\":";
    sdk::appendJsonString(details, status.error_message());
    details += ",\"details\":" + detailsJson(status.error_details(), catalog) + "}}";
    throw sdk::Error(errorCodeOf(status.error_code()), message, std::move(details));
}

}  // namespace crank::grpc_plugin
