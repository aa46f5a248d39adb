#include "http/auth_failure_throttle.h"

namespace crank::http {

AuthFailureThrottle::AuthFailureThrottle(std::size_t max_failures, std::chrono::milliseconds window,
                                         std::size_t max_addresses)
    : max_failures_(max_failures), window_(window), max_addresses_(max_addresses) {}

void AuthFailureThrottle::failed(const std::string& address, Clock::time_point now) {
    if (max_failures_ == 0) {
        return;
    }
    std::lock_guard lock(mutex_);
    auto it = entries_.find(address);
    if (it == entries_.end()) {
        if (entries_.size() >= max_addresses_) {
            for (auto e = entries_.begin(); e != entries_.end();) {
                e = now - e->second.window_start >= window_ ? entries_.erase(e) : std::next(e);
            }
            if (entries_.size() >= max_addresses_) {
                return;
            }
        }
        it = entries_.emplace(address, Entry{now, 0}).first;
    }
    if (now - it->second.window_start >= window_) {
        it->second = Entry{now, 0};
    }
    ++it->second.failures;
}

std::int64_t AuthFailureThrottle::blockedForMs(const std::string& address, Clock::time_point now) {
    if (max_failures_ == 0) {
        return 0;
    }
    std::lock_guard lock(mutex_);
    const auto it = entries_.find(address);
    if (it == entries_.end()) {
        return 0;
    }
    const auto ends = it->second.window_start + window_;
    if (now >= ends) {
        entries_.erase(it);
        return 0;
    }
    if (it->second.failures < max_failures_) {
        return 0;
    }
    return std::chrono::duration_cast<std::chrono::milliseconds>(ends - now).count() + 1;
}

}  // namespace crank::http
