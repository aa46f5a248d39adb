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
    if (const RawValue* token = json::scan::findMember(members, "progressToken")) {
        out.progress_token = requestIdOf(*token);
        if (!out.progress_token) {
            return Error{ErrorCode::invalid_argument,
                         badId(R"("_meta.progressToken")", meta_json, *token)};
        }
    }
    if (const RawValue* version = json::scan::findMember(members, kMetaProtocolVersion)) {
        out.claims_version = true;
        out.protocol_version = stringOr(version);
    }
    out.client_capabilities_json =
        textOf(meta_json, json::scan::findMember(members, kMetaClientCapabilities));
    out.client_info_json = textOf(meta_json, json::scan::findMember(members, kMetaClientInfo));
    out.log_level_json = textOf(meta_json, json::scan::findMember(members, kMetaLogLevel));
    out.traceparent = stringOr(json::scan::findMember(members, "traceparent"));
    out.tracestate = stringOr(json::scan::findMember(members, "tracestate"));
    out.baggage = stringOr(json::scan::findMember(members, "baggage"));
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
