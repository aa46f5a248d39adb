// Crank SDK, C++ layer: one running call, as the host handed it to the plugin.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "crank/sdk/types.hpp"
#include <crank/plugin.h>

namespace crank::sdk {

/// One running call (or a stream's call, or an aggregate's call): a cheap value type over the
/// host's table and the call handle. Copies refer to the same call.
///
/// Lifetime: valid until the entry point that received it returns (unary), until complete() has
/// been called (stream), or until the aggregate is destroyed. Nothing may be called afterwards.
/// Threading: any thread; emit()/emitBatch() for one call must not overlap (one producer).
/// Every member is noexcept: the host copies every view it is given.
class Call {
public:
    Call() = default;
    Call(const crank_host_api* api, crank_host* host, crank_call* call) noexcept
        : api_(api), host_(host), call_(call) {}

    /// Hands one item (a JSON value as text) to the host. See EmitResult for what to do next;
    /// ThreadedStream's StreamContext::emit() does it for you.
    EmitResult emit(std::string_view json) noexcept {
        return fromC(api_->emit(call_, toCStr(json)));
    }

    /// Hands `count` items; `accepted` receives how many were taken, from the front. The result
    /// is that of the last item the host looked at.
    EmitResult emitBatch(const std::string_view* items, std::size_t count,
                         std::size_t& accepted) noexcept {
        // Converted in fixed chunks so that emitting never allocates.
        constexpr std::size_t kChunk = 64;
        std::array<crank_str, kChunk> chunk{};
        accepted = 0;
        EmitResult result = EmitResult::accepted;
        while (accepted < count) {
            const std::size_t n = count - accepted < kChunk ? count - accepted : kChunk;
            for (std::size_t i = 0; i < n; ++i) {
                chunk[i] = toCStr(items[accepted + i]);
            }
            std::size_t taken = 0;
            result = fromC(api_->emit_batch(call_, chunk.data(), n, &taken));
            accepted += taken < n ? taken : n;
            if (taken < n || result != EmitResult::accepted) {
                break;
            }
        }
        return result;
    }

    /// Reports the failure of the call (the last report wins). `details_json` is empty or a JSON
    /// object. The C++ layer calls it for you when an entry point throws.
    void setError(ErrorCode code, std::string_view message,
                  std::string_view details_json = {}) noexcept {
        api_->set_error(call_, toC(code), toCStr(message), toCStr(details_json));
    }

    /// Progress for notifications/progress; `total` < 0 means unknown.
    void progress(double progress, double total = -1, std::string_view message = {}) noexcept {
        api_->progress(call_, progress, total, toCStr(message));
    }

    /// True once the host wants the call to stop. Check it between steps of long work.
    bool isCancelled() const noexcept { return api_->is_cancelled(call_) != 0; }

    /// Why the host wants the call to stop (CRANK_CANCEL_NONE while it does not). Undo upstream
    /// work (an unsubscribe, a job's cancel request) only when this is not
    /// CRANK_CANCEL_SHUTDOWN: then the host means to follow the work again from the cursor.
    crank_cancel_reason cancelReason() const noexcept { return api_->cancel_reason(call_); }

    /// Ends a stream: exactly once per stream, never for a unary call. ThreadedStream does it
    /// for you.
    void complete(Status status) noexcept { api_->complete(call_, toC(status)); }

    /// The position to resume from later (last one wins).
    void setCursor(std::string_view cursor) noexcept { api_->set_cursor(call_, toCStr(cursor)); }

    /// A log line that names the call's operation.
    void log(LogLevel level, std::string_view message) noexcept {
        api_->log(host_, call_, toC(level), toCStr(message));
    }

    /// ABI 1.2: a notification for the client that made the call (notifications/message).
    void notify(std::string_view method, std::string_view params_json) noexcept {
        if (api_->struct_size > offsetof(crank_host_api, call_notify) &&
            api_->call_notify != nullptr) {
            api_->call_notify(call_, toCStr(method), toCStr(params_json));
        }
    }

    /// ABI 1.2: a request to the client that made the call (sampling/createMessage,
    /// elicitation/create, roots/list), waiting at most `timeout_ms`. True: `answer` is the
    /// response's `result` (JSON text); false: `answer` is a JSON-RPC `error` object's text.
    bool request(std::string_view method, std::string_view params_json, std::int64_t timeout_ms,
                 std::string& answer);

    /// The raw handles, for what the C++ layer does not wrap.
    crank_call* handle() const noexcept { return call_; }
    const crank_host_api* api() const noexcept { return api_; }
    crank_host* host() const noexcept { return host_; }

private:
    const crank_host_api* api_ = nullptr;
    crank_host* host_ = nullptr;
    crank_call* call_ = nullptr;
};

inline bool Call::request(std::string_view method, std::string_view params_json,
                          std::int64_t timeout_ms, std::string& answer) {
    answer.clear();
    if (api_->struct_size <= offsetof(crank_host_api, call_request) ||
        api_->call_request == nullptr) {
        answer = R"({"code":-32601,"message":"this crankd cannot forward requests to clients"})";
        return false;
    }
    struct Sink {
        std::string* out;
        bool failed = false;
    } sink{&answer};
    const crank_status status = api_->call_request(
        call_, toCStr(method), toCStr(params_json), timeout_ms,
        [](void* context, crank_str json) {
            auto* s = static_cast<Sink*>(context);
            try {
                s->out->assign(toView(json));
            } catch (...) {  // out of memory: reported as an error below
                s->failed = true;
            }
        },
        &sink);
    if (sink.failed) {
        answer = R"({"code":-32603,"message":"out of memory"})";
        return false;
    }
    return status == CRANK_OK;
}

}  // namespace crank::sdk
