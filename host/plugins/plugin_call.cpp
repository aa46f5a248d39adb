#include "plugins/plugin_call.h"

namespace crank::plugins {

crank_emit_result PluginCall::emitBatch(const crank_str* items, std::size_t count,
                                        std::size_t* accepted) noexcept {
    std::size_t taken = 0;
    crank_emit_result result = CRANK_EMIT_ACCEPTED;
    for (std::size_t i = 0; i < count; ++i) {
        const crank_str item = items[i];
        const std::string_view text =
            item.ptr == nullptr ? std::string_view() : std::string_view(item.ptr, item.len);
        result = emit(text);
        if (result == CRANK_EMIT_ACCEPTED) {
            ++taken;
            continue;
        }
        if (result == CRANK_EMIT_ACCEPTED_PAUSE) {
            ++taken;
        }
        break;  // paused, full or cancelled: the plugin keeps the rest
    }
    if (accepted != nullptr) {
        *accepted = taken;
    }
    return result;
}

void PluginCall::progress(double /*progress*/, double /*total*/,
                          std::string_view /*message*/) noexcept {}

void PluginCall::complete(crank_status /*status*/) noexcept {}

void PluginCall::setCursor(std::string_view /*cursor*/) noexcept {}

crank_status PluginCall::request(std::string_view /*method*/, std::string_view /*params_json*/,
                                 std::int64_t /*timeout_ms*/, std::string& answer) noexcept {
    try {
        answer = R"({"code":-32601,"message":"this call has no client to ask"})";
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory; CRANK_ERROR still says it
    }
    return CRANK_ERROR;
}

}  // namespace crank::plugins
