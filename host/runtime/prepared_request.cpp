#include "runtime/prepared_request.h"

#include "runtime/operation.h"

namespace crank::runtime {
namespace {

crank_str str(const std::string& s) {
    return crank_str{s.data(), s.size()};
}

}  // namespace

crank_request PreparedRequest::view(const Operation& op) const {
    crank_request r{};
    r.struct_size = sizeof(crank_request);
    r.operation_name = str(op.config.name);
    r.config_json = str(op.config.config_json);
    r.request_json = str(request_json);
    r.input_json = str(input_json);
    r.auth_json = str(op.auth_json);
    r.cursor = str(cursor);
    r.timeout_ms = timeout_ms;
    r.max_item_bytes = max_item_bytes;
    r.traceparent = str(traceparent);
    r.tracestate = str(tracestate);
    return r;
}

}  // namespace crank::runtime
