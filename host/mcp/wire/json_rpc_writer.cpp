#include "mcp/wire/json_rpc.h"
#include "util/json_string.h"

// The writers of json_rpc.h: envelopes around JSON text the caller has already made compact.

namespace crank::mcp {
namespace {

void appendEnvelope(std::string& out) {
    out += R"({"jsonrpc":"2.0")";
}

}  // namespace

std::string makeResult(const RequestId& id, std::string_view resultJson) {
    std::string out;
    out.reserve(resultJson.size() + 48);
    appendEnvelope(out);
    out += R"(,"id":)";
    out += id.toJson();
    out += R"(,"result":)";
    out += resultJson.empty() ? std::string_view("{}") : resultJson;
    out += '}';
    return out;
}

std::string makeResult(const RequestId& id, std::initializer_list<std::string_view> resultParts) {
    std::size_t size = 0;
    for (const std::string_view part : resultParts) {
        size += part.size();
    }
    if (size == 0) {
        return makeResult(id, std::string_view());
    }
    std::string out;
    out.reserve(size + 48);
    appendEnvelope(out);
    out += R"(,"id":)";
    out += id.toJson();
    out += R"(,"result":)";
    for (const std::string_view part : resultParts) {
        out += part;
    }
    out += '}';
    return out;
}

std::string makeError(const std::optional<RequestId>& id, std::int64_t code,
                      std::string_view message, std::string_view dataJson) {
    std::string out;
    out.reserve(message.size() + dataJson.size() + 80);
    appendEnvelope(out);
    out += R"(,"id":)";
    out += id ? id->toJson() : std::string("null");
    out += R"(,"error":{"code":)";
    out += std::to_string(code);
    out += R"(,"message":)";
    appendJsonString(out, message);
    if (!dataJson.empty()) {
        out += R"(,"data":)";
        out += dataJson;
    }
    out += "}}";
    return out;
}

std::string makeError(const JsonRpcRejection& rejection) {
    return makeError(rejection.id, rejection.code, rejection.message);
}

std::string makeNotification(std::string_view method, std::string_view paramsJson) {
    std::string out;
    out.reserve(method.size() + paramsJson.size() + 48);
    appendEnvelope(out);
    out += R"(,"method":)";
    appendJsonString(out, method);
    if (!paramsJson.empty()) {
        out += R"(,"params":)";
        out += paramsJson;
    }
    out += '}';
    return out;
}

std::string makeRequest(const RequestId& id, std::string_view method, std::string_view paramsJson) {
    std::string out;
    out.reserve(method.size() + paramsJson.size() + 64);
    appendEnvelope(out);
    out += R"(,"id":)";
    out += id.toJson();
    out += R"(,"method":)";
    appendJsonString(out, method);
    if (!paramsJson.empty()) {
        out += R"(,"params":)";
        out += paramsJson;
    }
    out += '}';
    return out;
}

}  // namespace crank::mcp
