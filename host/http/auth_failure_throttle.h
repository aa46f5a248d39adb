#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace crank::http {

/// Failed authentications per client address: an address that has had `max_failures` answers
/// 401 within `window` gets every request answered 429 until the window ends
/// (server.max_auth_failures, server.auth_failure_window_ms). Guessing keys online then costs
/// a window per `max_failures` guesses.
///
/// At most `max_addresses` addresses are tracked; beyond them (after dropping expired entries) a
/// new address is not tracked, so that a flood of addresses cannot lock out everyone.
/// THREADING: every function may be called from any thread.
class AuthFailureThrottle {
public:
    using Clock = std::chrono::steady_clock;

    AuthFailureThrottle(std::size_t max_failures, std::chrono::milliseconds window,
                        std::size_t max_addresses = 65536);

    /// A request from `address` was answered 401.
    void failed(const std::string& address, Clock::time_point now = Clock::now());
    /// How long `address` must still wait, in ms; 0 when it may send requests.
    std::int64_t blockedForMs(const std::string& address, Clock::time_point now = Clock::now());

    std::size_t maxFailures() const { return max_failures_; }

private:
    struct Entry {
        Clock::time_point window_start;
        std::size_t failures = 0;
    };

    const std::size_t max_failures_;
    const std::chrono::milliseconds window_;
    const std::size_t max_addresses_;
    std::mutex mutex_;
    std::unordered_map<std::string, Entry> entries_;
};

}  // namespace crank::http
