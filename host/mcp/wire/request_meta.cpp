#include "mcp/wire/request_meta.h"

#include <utility>

#include "mcp/wire/json_scanner.h"

namespace crank::mcp {
namespace {

using scan::RawValue;
using scan::ValueType;

std::string stringOr(const RawValue* value) {
    return value != nullptr && value->type == ValueType::string ? value->text : std::string();
}

std::string textOf(std::string_view json, const RawValue* value) {
    return value == nullptr ? std::string() : scan::jsonText(json, *value);
}

}  // namespace

Result<RequestMeta> readMetaObject(std::string_view meta_json) {
    Result<scan::RawEntry> meta = scan::readObject(meta_json);
    if (!meta) {
        return meta.error();
    }
    RequestMeta out;
    out.present = true;
    const auto& members = meta->members;
    if (const RawValue* token = scan::findMember(members, "progressToken")) {
        out.progress_token = scan::requestIdOf(*token);
        if (!out.progress_token) {
            return Error{ErrorCode::invalid_argument,
                         scan::badId(R"("_meta.progressToken")", meta_json, *token)};
        }
    }
    if (const RawValue* version = scan::findMember(members, kMetaProtocolVersion)) {
        out.claims_version = true;
        out.protocol_version = stringOr(version);
    }
    out.client_capabilities_json =
        textOf(meta_json, scan::findMember(members, kMetaClientCapabilities));
    out.client_info_json = textOf(meta_json, scan::findMember(members, kMetaClientInfo));
    out.log_level_json = textOf(meta_json, scan::findMember(members, kMetaLogLevel));
    out.traceparent = stringOr(scan::findMember(members, "traceparent"));
    out.tracestate = stringOr(scan::findMember(members, "tracestate"));
    out.baggage = stringOr(scan::findMember(members, "baggage"));
    return out;
}

Result<RequestMeta> readRequestMeta(std::string_view params_json) {
    if (params_json.empty() || params_json.front() != '{') {
        return RequestMeta{};
    }
    Result<scan::RawEntry> params = scan::readObject(params_json);
    if (!params) {
        return params.error();
    }
    const RawValue* meta = scan::findMember(params->members, "_meta");
    if (meta == nullptr) {
        return RequestMeta{};
    }
    if (meta->type != ValueType::object) {
        return Error{ErrorCode::invalid_argument,
                     R"("_meta" must be an object, got )" + scan::describe(params_json, *meta)};
    }
    return readMetaObject(params_json.substr(meta->start, meta->end - meta->start));
}

}  // namespace crank::mcp
