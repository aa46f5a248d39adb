// Crank SDK, C++ layer: the small value types that mirror the C ABI's enums.
// Header-only, C++17, standard library only.
#pragma once

#include <string_view>

#include <crank/plugin.h>

namespace crank::sdk {

/// A C view of `text`, valid as long as `text`'s characters are.
inline crank_str toCStr(std::string_view text) noexcept {
    return crank_str{text.data(), text.size()};
}

/// A C++ view of `text`; {NULL, n} reads as empty.
inline std::string_view toView(crank_str text) noexcept {
    return text.ptr == nullptr ? std::string_view() : std::string_view(text.ptr, text.len);
}

/// Severity of a log line; maps 1:1 onto crank_log_level.
enum class LogLevel { trace, debug, info, warn, error };

/// What kind of failure an error reports; maps 1:1 onto crank_error_code.
enum class ErrorCode {
    invalid_argument,    ///< the operation config or the request is wrong
    unavailable,         ///< the upstream cannot be reached (connect, DNS, TLS)
    upstream,            ///< the upstream answered with an error
    protocol,            ///< the upstream sent something malformed
    timeout,             ///< the upstream did not answer in time
    resource_exhausted,  ///< a limit of the plugin or upstream was hit
    unsupported,         ///< the plugin cannot do what was asked
    internal,            ///< a bug in the plugin
};

/// The host's answer to an emit; maps 1:1 onto crank_emit_result (see plugin.h for the protocol).
enum class EmitResult {
    accepted,        ///< taken; go on
    accepted_pause,  ///< taken; emit nothing more until the stream is resumed
    rejected_full,   ///< not taken; keep the item and emit it again after resume
    cancelled,       ///< not taken and the call is over; stop and complete(cancelled)
};

/// Outcome of a call or a stream; maps 1:1 onto crank_status.
enum class Status { ok, error, cancelled };

/// Conversions between the C++ enums and the C ones. Values outside the C enums (a newer host)
/// map onto the safest C++ value: internal, cancelled, error.
inline crank_log_level toC(LogLevel level) noexcept {
    switch (level) {
        case LogLevel::trace:
            return CRANK_LOG_TRACE;
        case LogLevel::debug:
            return CRANK_LOG_DEBUG;
        case LogLevel::info:
            return CRANK_LOG_INFO;
        case LogLevel::warn:
            return CRANK_LOG_WARN;
        case LogLevel::error:
            return CRANK_LOG_ERROR;
    }
    return CRANK_LOG_ERROR;
}

inline LogLevel fromC(crank_log_level level) noexcept {
    switch (level) {
        case CRANK_LOG_TRACE:
            return LogLevel::trace;
        case CRANK_LOG_DEBUG:
            return LogLevel::debug;
        case CRANK_LOG_INFO:
            return LogLevel::info;
        case CRANK_LOG_WARN:
            return LogLevel::warn;
        case CRANK_LOG_ERROR:
            return LogLevel::error;
    }
    return LogLevel::error;
}

inline crank_error_code toC(ErrorCode code) noexcept {
    switch (code) {
        case ErrorCode::invalid_argument:
            return CRANK_ERR_INVALID_ARGUMENT;
        case ErrorCode::unavailable:
            return CRANK_ERR_UNAVAILABLE;
        case ErrorCode::upstream:
            return CRANK_ERR_UPSTREAM;
        case ErrorCode::protocol:
            return CRANK_ERR_PROTOCOL;
        case ErrorCode::timeout:
            return CRANK_ERR_TIMEOUT;
        case ErrorCode::resource_exhausted:
            return CRANK_ERR_RESOURCE_EXHAUSTED;
        case ErrorCode::unsupported:
            return CRANK_ERR_UNSUPPORTED;
        case ErrorCode::internal:
            return CRANK_ERR_INTERNAL;
    }
    return CRANK_ERR_INTERNAL;
}

inline ErrorCode fromC(crank_error_code code) noexcept {
    switch (code) {
        case CRANK_ERR_INVALID_ARGUMENT:
            return ErrorCode::invalid_argument;
        case CRANK_ERR_UNAVAILABLE:
            return ErrorCode::unavailable;
        case CRANK_ERR_UPSTREAM:
            return ErrorCode::upstream;
        case CRANK_ERR_PROTOCOL:
            return ErrorCode::protocol;
        case CRANK_ERR_TIMEOUT:
            return ErrorCode::timeout;
        case CRANK_ERR_RESOURCE_EXHAUSTED:
            return ErrorCode::resource_exhausted;
        case CRANK_ERR_UNSUPPORTED:
            return ErrorCode::unsupported;
        case CRANK_ERR_INTERNAL:
            return ErrorCode::internal;
    }
    return ErrorCode::internal;
}

inline crank_emit_result toC(EmitResult result) noexcept {
    switch (result) {
        case EmitResult::accepted:
            return CRANK_EMIT_ACCEPTED;
        case EmitResult::accepted_pause:
            return CRANK_EMIT_ACCEPTED_PAUSE;
        case EmitResult::rejected_full:
            return CRANK_EMIT_REJECTED_FULL;
        case EmitResult::cancelled:
            return CRANK_EMIT_CANCELLED;
    }
    return CRANK_EMIT_CANCELLED;
}

inline EmitResult fromC(crank_emit_result result) noexcept {
    switch (result) {
        case CRANK_EMIT_ACCEPTED:
            return EmitResult::accepted;
        case CRANK_EMIT_ACCEPTED_PAUSE:
            return EmitResult::accepted_pause;
        case CRANK_EMIT_REJECTED_FULL:
            return EmitResult::rejected_full;
        case CRANK_EMIT_CANCELLED:
            return EmitResult::cancelled;
    }
    return EmitResult::cancelled;
}

inline crank_status toC(Status status) noexcept {
    switch (status) {
        case Status::ok:
            return CRANK_OK;
        case Status::error:
            return CRANK_ERROR;
        case Status::cancelled:
            return CRANK_CANCELLED;
    }
    return CRANK_ERROR;
}

inline Status fromC(crank_status status) noexcept {
    switch (status) {
        case CRANK_OK:
            return Status::ok;
        case CRANK_ERROR:
            return Status::error;
        case CRANK_CANCELLED:
            return Status::cancelled;
    }
    return Status::error;
}

/// A short lower-case name for logs and test messages ("invalid_argument", "accepted_pause"...).
inline const char* name(ErrorCode code) noexcept {
    switch (code) {
        case ErrorCode::invalid_argument:
            return "invalid_argument";
        case ErrorCode::unavailable:
            return "unavailable";
        case ErrorCode::upstream:
            return "upstream";
        case ErrorCode::protocol:
            return "protocol";
        case ErrorCode::timeout:
            return "timeout";
        case ErrorCode::resource_exhausted:
            return "resource_exhausted";
        case ErrorCode::unsupported:
            return "unsupported";
        case ErrorCode::internal:
            return "internal";
    }
    return "internal";
}

inline const char* name(Status status) noexcept {
    switch (status) {
        case Status::ok:
            return "ok";
        case Status::error:
            return "error";
        case Status::cancelled:
            return "cancelled";
    }
    return "error";
}

}  // namespace crank::sdk
