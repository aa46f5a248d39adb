#include "mcp/wire/request_meta.h"

#include <utility>

#include "json/json_scanner.h"
#include "mcp/wire/json_rpc.h"

namespace crank::mcp {
namespace {

using json::scan::RawValue;
using json::scan::ValueType;

std::string stringOr(const RawValue* value) {
    return value != nullptr && value->type == ValueType::string ? value->text : std::string();
}

std::string textOf(std::string_view json, const RawValue* value) {
    return value == nullptr ? std::string() : json::scan::jsonText(json, *value);
}

}  // namespace

Result<RequestMeta> readMetaObject(std::string_view meta_json) {
    Result<json::scan::RawEntry> meta = json::scan::readObject(meta_json);
    if (!meta) {
        return meta.error();
    }
    return readMetaMembers(meta_json, meta->members);
}

Result<RequestMeta> readMetaMembers(std::string_view meta_json,
                                    const std::vector<json::scan::RawMember>& members) {
    RequestMeta out;
    out.present = true;
    // One pass; a name sent twice counts once, its first time (as findMember() reads it).
    const RawValue* token = nullptr;
    const RawValue* version = nullptr;
    const RawValue* capabilities = nullptr;
    const RawValue* client_info = nullptr;
    const RawValue* log_level = nullptr;
    const RawValue* traceparent = nullptr;
    const RawValue* tracestate = nullptr;
    const RawValue* baggage = nullptr;
    for (const json::scan::RawMember& member : members) {
        const std::string_view name = member.name;
        const RawValue** slot = name == "progressToken"           ? &token
                                : name == kMetaProtocolVersion    ? &version
                                : name == kMetaClientCapabilities ? &capabilities
                                : name == kMetaClientInfo         ? &client_info
                                : name == kMetaLogLevel           ? &log_level
                                : name == "traceparent"           ? &traceparent
                                : name == "tracestate"            ? &tracestate
                                : name == "baggage"               ? &baggage
                                                                  : nullptr;
        if (slot != nullptr && *slot == nullptr) {
            *slot = &member.value;
        }
    }
    if (token != nullptr) {
        out.progress_token = requestIdOf(*token);
        if (!out.progress_token) {
            return Error{ErrorCode::invalid_argument,
                         badId(R"("_meta.progressToken")", meta_json, *token)};
        }
    }
    if (version != nullptr) {
        out.claims_version = true;
        out.protocol_version = stringOr(version);
    }
    if (capabilities != nullptr) {
        out.client_capabilities = std::make_shared<const ClientCapabilities>(
            json::scan::jsonText(meta_json, *capabilities));
    }
    out.client_info_json = textOf(meta_json, client_info);
    out.log_level_json = textOf(meta_json, log_level);
    out.traceparent = stringOr(traceparent);
    out.tracestate = stringOr(tracestate);
    out.baggage = stringOr(baggage);
    return out;
}

Result<RequestMeta> readRequestMeta(const JsonRpcMessage& message) {
    const std::optional<ScannedParams>& scan = message.params_scan;
    if (!scan) {
        return readRequestMeta(message.params_json);
    }
    const RawValue* meta = json::scan::findMember(scan->members, "_meta");
    if (meta == nullptr) {
        return RequestMeta{};
    }
    if (!scan->meta_scanned) {
        return Error{ErrorCode::invalid_argument,
                     R"("_meta" must be an object, got )" +
                         json::scan::describe(message.params_json, *meta)};
    }
    return readMetaMembers(message.params_json, scan->meta_members);
}

Result<RequestMeta> readRequestMeta(std::string_view params_json) {
    if (params_json.empty() || params_json.front() != '{') {
        return RequestMeta{};
    }
    Result<json::scan::RawEntry> params = json::scan::readObject(params_json);
    if (!params) {
        return params.error();
    }
    const RawValue* meta = json::scan::findMember(params->members, "_meta");
    if (meta == nullptr) {
        return RequestMeta{};
    }
    if (meta->type != ValueType::object) {
        return Error{ErrorCode::invalid_argument, R"("_meta" must be an object, got )" +
                                                      json::scan::describe(params_json, *meta)};
    }
    return readMetaObject(params_json.substr(meta->start, meta->end - meta->start));
}

}  // namespace crank::mcp
