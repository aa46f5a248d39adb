#include "plugins/host_api.h"

#include <string>
#include <string_view>

#include "plugins/plugin_call.h"
#include "plugins/plugin_host.h"
#include "plugins/plugin_peer.h"
#include "plugins/plugin_registrar.h"
#include "plugins/plugin_writer.h"

namespace crank::plugins {
namespace {

// A view the plugin passed; a malformed one ({NULL, n}) reads as empty rather than crashing.
std::string_view view(crank_str text) noexcept {
    if (text.ptr == nullptr) {
        return {};
    }
    return {text.ptr, text.len};
}

int apiLogEnabled(crank_host* /*host*/, crank_log_level level) noexcept {
    try {
        return log::enabled(logLevelFromPlugin(level)) ? 1 : 0;
    } catch (...) {
        return 0;
    }
}

void apiLog(crank_host* host, crank_call* call, crank_log_level level, crank_str message) noexcept {
    try {
        const log::Level host_level = logLevelFromPlugin(level);
        if (!log::enabled(host_level)) {
            return;
        }
        PluginHost* plugin = host != nullptr ? PluginHost::fromHandle(host) : nullptr;
        const PluginCall* owner = call != nullptr ? PluginCall::fromHandle(call) : nullptr;
        const std::string_view context = owner != nullptr ? owner->logContext() : "";
        std::uint64_t dropped = 0;
        if (plugin != nullptr && !plugin->logThrottle().admit(context, dropped)) {
            return;  // counted; the next line let through says how many were dropped
        }
        std::string line = "plugin ";
        line += plugin != nullptr ? plugin->pluginName() : "?";
        if (!context.empty()) {
            line += " [";
            line += context;
            line += ']';
        }
        line += ": ";
        if (dropped > 0) {
            line += "(" + std::to_string(dropped) + " earlier lines dropped: --log-source-rate) ";
        }
        line += view(message);
        if (owner != nullptr) {
            owner->scrubLogLine(line);  // a line made for a call never carries its secrets
        }
        log::write(host_level, line);
    } catch (...) {  // NOLINT(bugprone-empty-catch): a log line is never worth a crash
    }
}

crank_status apiRegisterAdapter(crank_registrar* registrar, const crank_adapter* adapter) noexcept {
    if (registrar == nullptr) {
        return CRANK_ERROR;
    }
    return PluginRegistrar::fromHandle(registrar)->registerAdapter(adapter);
}

crank_status apiRegisterAggregator(crank_registrar* registrar,
                                   const crank_aggregator* aggregator) noexcept {
    if (registrar == nullptr) {
        return CRANK_ERROR;
    }
    return PluginRegistrar::fromHandle(registrar)->registerAggregator(aggregator);
}

void apiSetInitError(crank_registrar* registrar, crank_str message) noexcept {
    if (registrar != nullptr) {
        PluginRegistrar::fromHandle(registrar)->setInitError(view(message));
    }
}

void apiSetError(crank_call* call, crank_error_code code, crank_str message,
                 crank_str details_json) noexcept {
    if (call != nullptr) {
        PluginCall::fromHandle(call)->setError(code, view(message), view(details_json));
    }
}

crank_emit_result apiEmit(crank_call* call, crank_str item_json) noexcept {
    if (call == nullptr) {
        return CRANK_EMIT_CANCELLED;
    }
    return PluginCall::fromHandle(call)->emit(view(item_json));
}

crank_emit_result apiEmitBatch(crank_call* call, const crank_str* items, size_t count,
                               size_t* accepted) noexcept {
    size_t ignored = 0;
    size_t* taken = accepted != nullptr ? accepted : &ignored;
    *taken = 0;
    if (call == nullptr) {
        return CRANK_EMIT_CANCELLED;
    }
    if (items == nullptr || count == 0) {
        return CRANK_EMIT_ACCEPTED;
    }
    return PluginCall::fromHandle(call)->emitBatch(items, count, taken);
}

void apiProgress(crank_call* call, double progress, double total, crank_str message) noexcept {
    if (call != nullptr) {
        PluginCall::fromHandle(call)->progress(progress, total, view(message));
    }
}

int apiIsCancelled(const crank_call* call) noexcept {
    if (call == nullptr) {
        return 1;
    }
    return PluginCall::fromHandle(call)->isCancelled() ? 1 : 0;
}

crank_cancel_reason apiCancelReason(const crank_call* call) noexcept {
    if (call == nullptr) {
        return CRANK_CANCEL_REQUESTED;
    }
    return PluginCall::fromHandle(call)->cancelReason();
}

void apiComplete(crank_call* call, crank_status status) noexcept {
    if (call != nullptr) {
        PluginCall::fromHandle(call)->complete(status);
    }
}

void apiSetCursor(crank_call* call, crank_str cursor) noexcept {
    if (call != nullptr) {
        PluginCall::fromHandle(call)->setCursor(view(cursor));
    }
}

crank_status apiWriterAppend(crank_writer* writer, crank_str text) noexcept {
    if (writer == nullptr) {
        return CRANK_ERROR;
    }
    try {
        return PluginWriter::fromHandle(writer)->append(view(text)) ? CRANK_OK : CRANK_ERROR;
    } catch (...) {  // std::bad_alloc
        return CRANK_ERROR;
    }
}

void apiPeerNotify(crank_peer* peer, crank_str method, crank_str params_json) noexcept {
    if (peer != nullptr) {
        PluginPeer::fromHandle(peer)->notify(view(method), view(params_json));
    }
}

void apiCallNotify(crank_call* call, crank_str method, crank_str params_json) noexcept {
    if (call != nullptr) {
        PluginCall::fromHandle(call)->notify(view(method), view(params_json));
    }
}

crank_status apiCallRequest(crank_call* call, crank_str method, crank_str params_json,
                            int64_t timeout_ms, void (*answer)(void* context, crank_str json),
                            void* context) noexcept {
    if (call == nullptr) {
        return CRANK_ERROR;
    }
    std::string text;
    crank_status status = CRANK_ERROR;
    try {
        status = PluginCall::fromHandle(call)->request(view(method), view(params_json), timeout_ms,
                                                       text);
    } catch (...) {  // std::bad_alloc
        status = CRANK_ERROR;
        text.clear();
    }
    if (answer != nullptr) {
        answer(context, crank_str{text.data(), text.size()});
    }
    return status;
}

constexpr crank_host_api kHostApi = {
    .struct_size = sizeof(crank_host_api),
    .abi_major = CRANK_ABI_MAJOR,
    .abi_minor = CRANK_ABI_MINOR,
    .log_enabled = apiLogEnabled,
    .log = apiLog,
    .register_adapter = apiRegisterAdapter,
    .register_aggregator = apiRegisterAggregator,
    .set_init_error = apiSetInitError,
    .set_error = apiSetError,
    .emit = apiEmit,
    .emit_batch = apiEmitBatch,
    .progress = apiProgress,
    .is_cancelled = apiIsCancelled,
    .complete = apiComplete,
    .set_cursor = apiSetCursor,
    .writer_append = apiWriterAppend,
    .cancel_reason = apiCancelReason,
    .peer_notify = apiPeerNotify,
    .call_notify = apiCallNotify,
    .call_request = apiCallRequest,
};

}  // namespace

const crank_host_api* hostApi() noexcept {
    return &kHostApi;
}

log::Level logLevelFromPlugin(crank_log_level level) noexcept {
    switch (level) {
        case CRANK_LOG_TRACE:
            return log::Level::trace;
        case CRANK_LOG_DEBUG:
            return log::Level::debug;
        case CRANK_LOG_INFO:
            return log::Level::info;
        case CRANK_LOG_WARN:
            return log::Level::warn;
        case CRANK_LOG_ERROR:
            return log::Level::error;
    }
    return log::Level::error;
}

}  // namespace crank::plugins
