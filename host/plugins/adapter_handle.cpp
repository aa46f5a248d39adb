#include "plugins/adapter_handle.h"

#include <utility>

#include "plugins/diagnostics_call.h"
#include "plugins/plugin_struct_reader.h"
#include "plugins/plugin_writer.h"

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

AdapterHandle::Description AdapterHandle::describe(std::string_view config_json) const {
    Description out;
    if (adapter_.describe == nullptr) {
        return out;
    }
    // A derived input schema of a large message is a few hundred KiB at most.
    PluginWriter writer(std::size_t{4} * 1024 * 1024);
    DiagnosticsCall call;
    const crank_status status =
        adapter_.describe(adapter_.state, crank_str{config_json.data(), config_json.size()},
                          writer.handle(), call.handle());
    out.diagnostics = call.finish(status);
    if (status == CRANK_OK && writer.overflowed()) {
        out.diagnostics.push_back(
            Diagnostic{"", "the adapter's description of the operation is larger than 4 MiB"});
    }
    if (out.diagnostics.empty() && !writer.text().empty()) {
        out.json = writer.text();
    }
    return out;
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

namespace {
crank_str cView(std::string_view text) {
    return crank_str{text.data(), text.size()};
}
}  // namespace

crank_upstream* AdapterHandle::upstreamOpen(crank_peer* peer, std::string_view name,
                                            std::string_view config_json,
                                            PluginCall& diagnostics) const {
    if (adapter_.upstream_open == nullptr || !hasCapability(CRANK_CAP_FEDERATION)) {
        diagnostics.setError(CRANK_ERR_UNSUPPORTED,
                             "adapter '" + name_ + "' cannot federate upstreams", {});
        return nullptr;
    }
    return adapter_.upstream_open(adapter_.state, peer, cView(name), cView(config_json),
                                  diagnostics.handle());
}

crank_status AdapterHandle::upstreamRequest(crank_upstream* upstream, PluginCall& call,
                                            std::string_view method, std::string_view params_json,
                                            crank_writer* result) const {
    if (upstream == nullptr || adapter_.upstream_request == nullptr) {
        call.setError(CRANK_ERR_UNSUPPORTED, "adapter '" + name_ + "' cannot federate upstreams",
                      {});
        return CRANK_ERROR;
    }
    return adapter_.upstream_request(upstream, call.handle(), cView(method), cView(params_json),
                                     result);
}

void AdapterHandle::upstreamNotify(crank_upstream* upstream, std::string_view method,
                                   std::string_view params_json) const {
    if (upstream != nullptr && adapter_.upstream_notify != nullptr) {
        adapter_.upstream_notify(upstream, cView(method), cView(params_json));
    }
}

std::string AdapterHandle::upstreamStatus(crank_upstream* upstream) const {
    if (upstream == nullptr || adapter_.upstream_status == nullptr) {
        return "{}";
    }
    PluginWriter writer(std::size_t{64} * 1024);
    if (adapter_.upstream_status(upstream, writer.handle()) != CRANK_OK || writer.overflowed() ||
        writer.text().empty()) {
        return "{}";
    }
    return writer.text();
}

void AdapterHandle::upstreamClose(crank_upstream* upstream) const {
    if (upstream != nullptr && adapter_.upstream_close != nullptr) {
        adapter_.upstream_close(upstream);
    }
}

}  // namespace crank::plugins
