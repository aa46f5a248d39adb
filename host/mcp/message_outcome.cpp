#include "mcp/message_outcome.h"

#include "mcp/wire/json_rpc.h"
#include "mcp/wire/method_registry.h"

namespace crank::mcp {

std::string_view methodLabel(std::string_view method) {
    const MethodInfo* known = findMethod(method);
    return known != nullptr ? known->name : "unknown";
}

std::string_view errorName(std::int64_t code) {
    switch (code) {
        case kParseError:
            return "parse_error";
        case kInvalidRequest:
            return "invalid_request";
        case kMethodNotFound:
            return "method_not_found";
        case kInvalidParams:
            return "invalid_params";
        case kInternalError:
            return "internal_error";
        case kResourceNotFound:
            return "resource_not_found";
        case kUrlElicitationRequired:
            return "url_elicitation_required";
        default:
            return "server_error";
    }
}

}  // namespace crank::mcp
