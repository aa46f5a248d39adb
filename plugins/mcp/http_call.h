#pragma once

// Internal to the HTTP transports (http_connection.cpp, streamable_http.cpp, legacy_sse.cpp):
// one request in progress, and the helpers the transports share.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "connection.h"
#include "http_connection.h"
#include "http_wire.h"

namespace crank::mcpc {

struct HttpConnection::Call {
    std::int64_t id = 0;
    std::string method;
    std::string message;
    Clock::time_point deadline;
    std::chrono::milliseconds timeout{0};
    const RequestHooks* hooks = nullptr;
    HaltCheck halt;
    bool sent = false;  // the request reached the server: a cancellation is worth sending
};

namespace http_detail {

inline constexpr std::chrono::milliseconds kSlice{50};  // a wait's slice, as http_wire.cpp's
inline constexpr std::size_t kErrorBodyBytes = std::size_t{64} * 1024;  // read of an error's body
inline constexpr std::chrono::milliseconds kErrorBodyWait{1'000};
/// After an SSE answer: how long, and how many bytes, the rest of the stream is read for the
/// connection to be kept (HttpWire::drainAfterAnswer).
inline constexpr std::chrono::milliseconds kDrainWait{20};
inline constexpr std::size_t kDrainBytes = 4096;
/// The least wait before a stream is reconnected, whatever its `retry:` says.
inline constexpr std::chrono::milliseconds kMinReconnectDelay{100};

inline RpcOutcome failure(std::string message) {
    RpcOutcome r;
    r.error_message = std::move(message);
    return r;
}

/// Why an SSE stream was given up when its parser refused it (a line or event over the limit).
inline std::string eventTooLarge(std::size_t max_message_bytes) {
    return "the server sent an SSE event larger than max_message_bytes (" +
           std::to_string(max_message_bytes) + " bytes)";
}

inline bool isStatusOk(int status) {
    return status >= 200 && status < 300;
}

inline bool isJsonType(const std::string& type) {
    return type == "application/json" ||
           (type.size() > 5 && type.compare(type.size() - 5, 5, "+json") == 0);
}

/// `text` without leading and trailing blanks.
inline std::string_view trimmed(std::string_view text) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
        return {};
    }
    return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

/// Runs `f` when it goes out of scope.
template <typename F>
class Finally {
public:
    explicit Finally(F f) : f_(std::move(f)) {}
    ~Finally() { f_(); }
    Finally(const Finally&) = delete;
    Finally& operator=(const Finally&) = delete;
    Finally(Finally&&) = delete;
    Finally& operator=(Finally&&) = delete;

private:
    F f_;
};

}  // namespace http_detail
}  // namespace crank::mcpc
