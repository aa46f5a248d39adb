#include "plugins/adapter_handle.h"

#include <utility>

#include "plugins/diagnostics_call.h"
#include "plugins/plugin_struct_reader.h"

namespace crank::plugins {

AdapterHandle::AdapterHandle(const crank_adapter& adapter, std::string plugin_name)
    : adapter_(adapter),
      name_(toView(adapter.name)),
      version_(toView(adapter.version)),
      description_(toView(adapter.description)),
      config_schema_json_(toView(adapter.config_schema_json)),
      plugin_name_(std::move(plugin_name)) {
    // Only the copies are used from now on.
    adapter_.name = {};
    adapter_.version = {};
    adapter_.description = {};
    adapter_.config_schema_json = {};
}

std::vector<Diagnostic> AdapterHandle::validate(std::string_view config_json) const {
    if (adapter_.validate == nullptr) {
        return {};
    }
    DiagnosticsCall call;
    const crank_status status = adapter_.validate(
        adapter_.state, crank_str{config_json.data(), config_json.size()}, call.handle());
    return call.finish(status);
}

crank_status AdapterHandle::unaryCall(PluginCall& call, const crank_request& request) const {
    if (adapter_.unary_call == nullptr || !hasCapability(CRANK_CAP_UNARY)) {
        call.setError(CRANK_ERR_UNSUPPORTED,
                      "adapter '" + name_ + "' does not support request/response calls", {});
        return CRANK_ERROR;
    }
    return adapter_.unary_call(adapter_.state, call.handle(), &request);
}

crank_stream* AdapterHandle::streamOpen(PluginCall& call, const crank_request& request) const {
    if (adapter_.stream_open == nullptr || !hasCapability(CRANK_CAP_SERVER_STREAM)) {
        call.setError(CRANK_ERR_UNSUPPORTED,
                      "adapter '" + name_ + "' does not support server streams", {});
        return nullptr;
    }
    return adapter_.stream_open(adapter_.state, call.handle(), &request);
}

void AdapterHandle::streamResume(crank_stream* stream) const {
    if (stream != nullptr && adapter_.stream_resume != nullptr) {
        adapter_.stream_resume(stream);
    }
}

void AdapterHandle::streamCancel(crank_stream* stream) const {
    if (stream != nullptr && adapter_.stream_cancel != nullptr) {
        adapter_.stream_cancel(stream);
    }
}

void AdapterHandle::streamDestroy(crank_stream* stream) const {
    if (stream != nullptr && adapter_.stream_destroy != nullptr) {
        adapter_.stream_destroy(stream);
    }
}

}  // namespace crank::plugins
