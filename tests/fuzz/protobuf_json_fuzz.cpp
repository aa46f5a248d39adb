// Fuzz target protobuf_json: the gRPC plugin's proto3 JSON mapping over dynamic messages
// (plugins/grpc/descriptor_catalog.h), with the descriptors of the gRPC fixture
// (tests/fixtures/upstreams/grpc/fixture.proto and the well-known types it imports), and the
// catalog built from serialized descriptors (what an upstream's reflection service sends).
//
// Input: one byte of settings, then the payload.
//   settings bits 0-1: what the payload is
//     0  a tool input (JSON) for jsonToBinary, then back with binaryToJson;
//     1  a message from the upstream (wire bytes) for binaryToJson, then back with jsonToBinary;
//     2  a google.protobuf.Any: a type URL, a newline, the payload bytes (anyToJson);
//     3  serialized FileDescriptorProtos, separated by "%%" lines, for fromFiles();
//   bits 2-5: the message type (kTypes).
// Checks: every JSON produced is strict JSON; what binaryToJson prints, jsonToBinary reads back
// (unless it is nested past the JSON depth bound, is an Any of an unknown type, or a FieldMask
// whose paths are no field paths); bytes made by jsonToBinary print; failures are sdk::Error with a
// message, nothing else is thrown.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/stubs/logging.h>

#include "descriptor_catalog.h"
#include "fuzz_support.h"
#include <crank/sdk/error.hpp>

namespace {

using crank::fuzz::check;
using crank::fuzz::isStrictJson;
using crank::grpc_plugin::DescriptorCatalog;

constexpr const char* kTypes[] = {
    "crank.fixture.v1.EchoRequest",  "crank.fixture.v1.EchoResponse",
    "crank.fixture.v1.Tick",         "crank.fixture.v1.Node",
    "crank.fixture.v1.Inner",        "crank.fixture.v1.StatsResponse",
    "crank.fixture.v1.TicksRequest", "google.protobuf.Struct",
    "google.protobuf.Value",         "google.protobuf.ListValue",
    "google.protobuf.Any",           "google.protobuf.Timestamp",
    "google.protobuf.Duration",      "google.protobuf.FieldMask",
    "google.protobuf.Int64Value",    "google.protobuf.BytesValue",
};

const DescriptorCatalog& catalog() {
    static const std::shared_ptr<const DescriptorCatalog> kCatalog = [] {
        // protobuf logs every string that is not UTF-8 to stderr: thousands of lines a second.
        google::protobuf::SetLogHandler(nullptr);
        return DescriptorCatalog::fromDescriptorSetFile(CRANK_FUZZ_GRPC_DESC);
    }();
    return *kCatalog;
}

bool isNestingError(const crank::sdk::Error& e) {
    return std::string_view(e.what()).find("nested deeper than") != std::string_view::npos;
}

/// JSON that binaryToJson printed (or would print) must read back.
void readBack(const google::protobuf::Descriptor& type, const std::string& json) {
    check(isStrictJson(json), "binaryToJson printed invalid JSON", json);
    try {
        const std::string binary = catalog().jsonToBinary(type, json);
        (void)catalog().binaryToJson(type, binary);
    } catch (const crank::sdk::Error& e) {
        // Also an Any of a type this catalog does not know (or with another URL prefix), printed
        // with its "@type" alone since its payload is empty: it reads back nowhere.
        const std::string_view what = e.what();
        const bool unknown_any = what.find("Invalid type URL") != std::string::npos;
        // And a FieldMask whose paths are not field paths ("f\u0000)ar" from the upstream's
        // bytes): printed as they are, which the model can read, but not a mask protobuf takes.
        const bool odd_mask = what.find("Invalid FieldMask") != std::string::npos;
        check(isNestingError(e) || unknown_any || odd_mask, "printed JSON does not read back",
              json + " -> " + e.what());
    }
}

void fromJson(const google::protobuf::Descriptor& type, std::string_view payload) {
    std::string binary;
    try {
        binary = catalog().jsonToBinary(type, payload);
    } catch (const crank::sdk::Error& e) {
        check(e.code() == crank::sdk::ErrorCode::invalid_argument &&
                  !std::string_view(e.what()).empty(),
              "jsonToBinary failed oddly", e.what());
        return;
    }
    std::string json;
    try {
        json = catalog().binaryToJson(type, binary);
    } catch (const crank::sdk::Error& e) {
        // An Any whose type this catalog does not know has no JSON form; nothing else fails.
        check(std::string_view(e.what()).find("no JSON form") != std::string_view::npos,
              "bytes from jsonToBinary do not print", std::string(payload) + " -> " + e.what());
        return;
    }
    readBack(type, json);
}

void fromBinary(const google::protobuf::Descriptor& type, std::string_view payload) {
    std::string json;
    try {
        json = catalog().binaryToJson(type, std::string(payload));
    } catch (const crank::sdk::Error& e) {
        check(e.code() == crank::sdk::ErrorCode::protocol, "binaryToJson failed oddly", e.what());
        return;
    }
    readBack(type, json);
}

void fromAny(std::string_view payload) {
    const std::size_t newline = payload.find('\n');
    const std::string_view url = payload.substr(0, newline);
    const std::string value(newline == std::string_view::npos ? std::string_view()
                                                              : payload.substr(newline + 1));
    if (const auto json = catalog().anyToJson(url, value)) {
        check(isStrictJson(*json), "anyToJson printed invalid JSON", *json);
    }
}

void fromFiles(std::string_view payload) {
    std::vector<std::string> files;
    for (const std::string_view part : crank::fuzz::splitParts(payload, 8)) {
        if (!part.empty()) {
            files.emplace_back(part);
        }
    }
    try {
        const auto built = DescriptorCatalog::fromFiles(files, "fuzz");
        for (const std::string& method : built->methodNames()) {
            check(built->findMethod(method) != nullptr, "a listed method is not found", method);
        }
        (void)built->whyNoMethod("a.B/C");
    } catch (const crank::sdk::Error& e) {
        check(!std::string_view(e.what()).empty(), "fromFiles failed without a message");
    }
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const unsigned settings = data[0];
    const std::string_view payload = crank::fuzz::asText(data + 1, size - 1);
    const char* name = kTypes[(settings >> 2U) % std::size(kTypes)];
    const google::protobuf::Descriptor* type = catalog().pool().FindMessageTypeByName(name);
    check(type != nullptr, "a fixture type is missing", name);
    switch (settings & 3U) {
        case 0:
            fromJson(*type, payload);
            break;
        case 1:
            fromBinary(*type, payload);
            break;
        case 2:
            fromAny(payload);
            break;
        default:
            fromFiles(payload);
            break;
    }
    return 0;
}
