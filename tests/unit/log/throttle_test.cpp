// log::Throttle and log::KeyedThrottle: a flood costs a few lines per period, and the next line
// let through says how many were dropped.
#include "log/throttle.h"

#include <chrono>
#include <string>

#include <gtest/gtest.h>

namespace crank::log {
namespace {

using namespace std::chrono_literals;

TEST(Throttle, LetsABurstThroughPerPeriodAndCountsTheRest) {
    Throttle throttle(3, 10s);
    const auto t0 = Throttle::Clock::now();
    std::uint64_t dropped = 99;
    for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(throttle.admit(dropped, t0 + std::chrono::milliseconds(i)));
        EXPECT_EQ(dropped, 0u);
    }
    for (int i = 0; i < 1000; ++i) {
        EXPECT_FALSE(throttle.admit(dropped, t0 + 1s));
    }
    // The next period: the first line says what the flood cost.
    EXPECT_TRUE(throttle.admit(dropped, t0 + 11s));
    EXPECT_EQ(dropped, 1000u);
    EXPECT_TRUE(throttle.admit(dropped, t0 + 11s));
    EXPECT_EQ(dropped, 0u);
}

TEST(KeyedThrottle, OneNoisySourceDoesNotSilenceAnother) {
    KeyedThrottle throttle(2, 10s, 16);
    std::uint64_t dropped = 0;
    EXPECT_TRUE(throttle.admit("noisy", dropped));
    EXPECT_TRUE(throttle.admit("noisy", dropped));
    EXPECT_FALSE(throttle.admit("noisy", dropped));
    EXPECT_TRUE(throttle.admit("quiet", dropped));
}

TEST(KeyedThrottle, KeysBeyondTheBoundShareOneThrottle) {
    KeyedThrottle throttle(1, 10s, 2);
    std::uint64_t dropped = 0;
    EXPECT_TRUE(throttle.admit("a", dropped));
    EXPECT_TRUE(throttle.admit("b", dropped));
    EXPECT_TRUE(throttle.admit("c", dropped));   // the shared one
    EXPECT_FALSE(throttle.admit("d", dropped));  // shared, and spent
    for (int i = 0; i < 10000; ++i) {
        throttle.admit("key-" + std::to_string(i), dropped);  // memory stays bounded
    }
    EXPECT_FALSE(throttle.admit("a", dropped));
}

}  // namespace
}  // namespace crank::log
