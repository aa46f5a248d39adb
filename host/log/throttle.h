#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace crank::log {

/// Bounds how often one source may write to the log: at most `burst` messages per `period`; the
/// rest are dropped and counted, and the next message let through says how many were dropped
/// (the caller appends it), so that a flood costs a line per period, not a line per event.
///
/// One Throttle per source (an accept loop, a plugin, an upstream's stderr).
/// THREADING: admit() may be called from any thread.
class Throttle {
public:
    using Clock = std::chrono::steady_clock;

    Throttle(std::size_t burst, std::chrono::milliseconds period);

    /// True when this message may be written. `dropped` is then the number of messages dropped
    /// since the last one let through (0 when none).
    bool admit(std::uint64_t& dropped);
    /// admit() at a given time (for tests).
    bool admit(std::uint64_t& dropped, Clock::time_point now);

private:
    const std::size_t burst_;
    const std::chrono::milliseconds period_;
    std::mutex mutex_;
    Clock::time_point period_start_{};
    std::size_t written_ = 0;
    std::uint64_t dropped_ = 0;
};

/// One Throttle per key (a plugin call's context, say), for at most `max_keys` keys; keys beyond
/// them share one Throttle, so the memory stays bounded whatever the keys.
/// THREADING: admit() may be called from any thread.
class KeyedThrottle {
public:
    KeyedThrottle(std::size_t burst, std::chrono::milliseconds period, std::size_t max_keys);

    /// Throttle::admit() for the key's own Throttle.
    bool admit(std::string_view key, std::uint64_t& dropped);

private:
    const std::size_t burst_;
    const std::chrono::milliseconds period_;
    const std::size_t max_keys_;
    std::mutex mutex_;
    std::unordered_map<std::string, std::unique_ptr<Throttle>> by_key_;
    Throttle overflow_;
};

}  // namespace crank::log
