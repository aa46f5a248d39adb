#include "log/throttle.h"

namespace crank::log {

Throttle::Throttle(std::size_t burst, std::chrono::milliseconds period)
    : burst_(burst), period_(period) {}

bool Throttle::admit(std::uint64_t& dropped) {
    return admit(dropped, Clock::now());
}

bool Throttle::admit(std::uint64_t& dropped, Clock::time_point now) {
    std::lock_guard lock(mutex_);
    if (now - period_start_ >= period_) {
        period_start_ = now;
        written_ = 0;
    }
    if (written_ >= burst_) {
        ++dropped_;
        dropped = 0;
        return false;
    }
    ++written_;
    dropped = dropped_;
    dropped_ = 0;
    return true;
}

KeyedThrottle::KeyedThrottle(std::size_t burst, std::chrono::milliseconds period,
                             std::size_t max_keys)
    : burst_(burst), period_(period), max_keys_(max_keys), overflow_(burst, period) {}

bool KeyedThrottle::admit(std::string_view key, std::uint64_t& dropped) {
    Throttle* throttle = &overflow_;
    {
        std::lock_guard lock(mutex_);
        auto it = by_key_.find(std::string(key));
        if (it == by_key_.end() && by_key_.size() < max_keys_) {
            it = by_key_.emplace(std::string(key), std::make_unique<Throttle>(burst_, period_))
                     .first;
        }
        if (it != by_key_.end()) {
            throttle = it->second.get();
        }
    }
    return throttle->admit(dropped);  // a Throttle is never removed, so the pointer stays valid
}

}  // namespace crank::log
