#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <crank/plugin.h>

namespace crank::plugins {

/// The host side of one `crank_call`: what a plugin's callbacks (emit, set_error, progress,
/// is_cancelled, complete, set_cursor, log) reach. The runtime implements it for every call it
/// runs; the loader implements it to collect validation diagnostics. The host API functions in
/// host_api.cpp only translate between the C handle and this class.
///
/// THREADING: a plugin may call any of these from its own threads, concurrently with the host's
/// threads; implementations synchronise themselves. No exception may escape any of them (they
/// are called through the C boundary).
class PluginCall {
public:
    virtual ~PluginCall() = default;

    /// One item, a JSON value as text (not yet parsed: the implementation checks it).
    virtual crank_emit_result emit(std::string_view item_json) noexcept = 0;
    /// `count` items; `*accepted` receives how many were taken from the front. The default
    /// calls emit() for each until one is not accepted or asks for a pause.
    virtual crank_emit_result emitBatch(const crank_str* items, std::size_t count,
                                        std::size_t* accepted) noexcept;
    virtual void setError(crank_error_code code, std::string_view message,
                          std::string_view details_json) noexcept = 0;
    virtual void progress(double progress, double total, std::string_view message) noexcept;
    virtual bool isCancelled() const noexcept = 0;
    /// Why isCancelled() is true (CRANK_CANCEL_NONE while it is false). The default says
    /// "requested" for any cancel.
    virtual crank_cancel_reason cancelReason() const noexcept {
        return isCancelled() ? CRANK_CANCEL_REQUESTED : CRANK_CANCEL_NONE;
    }
    virtual void complete(crank_status status) noexcept;
    virtual void setCursor(std::string_view cursor) noexcept;
    /// ABI 1.2 call_notify: a notification for the client that made the call. The default
    /// drops it.
    virtual void notify(std::string_view /*method*/, std::string_view /*params_json*/) noexcept {}
    /// ABI 1.2 call_request: a request to the client that made the call; the answer's `result`
    /// (CRANK_OK) or `error` object (CRANK_ERROR) as JSON text into `answer`. The default
    /// refuses: the call has no client to ask.
    virtual crank_status request(std::string_view method, std::string_view params_json,
                                 std::int64_t timeout_ms, std::string& answer) noexcept;
    /// Names the call in log lines written through the host (the operation's name), or empty.
    virtual std::string_view logContext() const noexcept { return {}; }
    /// Removes the call's secrets (its operation's auth profile) from `line`, a log line the
    /// plugin wrote for this call, before it is logged. The default knows none. Unlike the
    /// callbacks above it may throw (std::bad_alloc): host_api.cpp calls it inside its try.
    virtual void scrubLogLine(std::string& /*line*/) const {}

    /// The opaque handle handed to plugins for this call, and back.
    crank_call* handle() noexcept { return reinterpret_cast<crank_call*>(this); }
    static PluginCall* fromHandle(crank_call* call) noexcept {
        return reinterpret_cast<PluginCall*>(call);
    }
    static const PluginCall* fromHandle(const crank_call* call) noexcept {
        return reinterpret_cast<const PluginCall*>(call);
    }
};

}  // namespace crank::plugins
