// ParkedWorkers on its own: a worker parked on a connection wakes for the connection's bytes, for
// wakeOne() (the longest parked first), at its deadline, and for close().

#include "http/parked_workers.h"

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "http_test_support.h"

namespace crank::http {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Wake = ParkedWorkers::Wake;

const std::function<bool()> kNotWanted = [] { return false; };

/// Parks on `fd` on a thread of its own until `deadline`.
std::future<Wake> parkAsync(ParkedWorkers& parked, int fd, Clock::time_point deadline) {
    return std::async(std::launch::async,
                      [&parked, fd, deadline] { return parked.park(fd, deadline, kNotWanted); });
}

/// Waits (bounded) until `count` workers are parked.
bool waitParked(const ParkedWorkers& parked, std::size_t count) {
    const auto until = Clock::now() + testing::kWait;
    while (parked.parked() != count && Clock::now() < until) {
        std::this_thread::sleep_for(1ms);
    }
    return parked.parked() == count;
}

TEST(ParkedWorkersTest, AParkedWorkerWakesForItsConnectionsBytes) {
    ParkedWorkers parked;
    test::SocketPair pair = test::tcpPair();
    auto wake = parkAsync(parked, pair.server.get(), Clock::now() + testing::kWait);
    ASSERT_TRUE(waitParked(parked, 1));
    test::writeAll(pair.client.get(), "GET");
    EXPECT_EQ(wake.get(), Wake::readable);
    EXPECT_EQ(parked.parked(), 0U);
}

TEST(ParkedWorkersTest, AHangUpWakesItToo) {
    ParkedWorkers parked;
    test::SocketPair pair = test::tcpPair();
    auto wake = parkAsync(parked, pair.server.get(), Clock::now() + testing::kWait);
    ASSERT_TRUE(waitParked(parked, 1));
    pair.client.reset();
    EXPECT_EQ(wake.get(), Wake::readable);
}

TEST(ParkedWorkersTest, ItWakesAtItsDeadlineWhenNothingHappens) {
    ParkedWorkers parked;
    test::SocketPair pair = test::tcpPair();
    EXPECT_EQ(parked.park(pair.server.get(), Clock::now() + 20ms, kNotWanted), Wake::timeout);
    EXPECT_EQ(parked.parked(), 0U);
}

TEST(ParkedWorkersTest, WakeOneWakesTheWorkerParkedLongestAndOnlyIt) {
    ParkedWorkers parked;
    test::SocketPair first = test::tcpPair();
    test::SocketPair second = test::tcpPair();
    auto wake_first = parkAsync(parked, first.server.get(), Clock::now() + testing::kWait);
    ASSERT_TRUE(waitParked(parked, 1));
    auto wake_second = parkAsync(parked, second.server.get(), Clock::now() + testing::kWait);
    ASSERT_TRUE(waitParked(parked, 2));

    EXPECT_TRUE(parked.wakeOne());
    EXPECT_EQ(wake_first.get(), Wake::wanted);
    EXPECT_EQ(parked.parked(), 1U);
    EXPECT_EQ(wake_second.wait_for(50ms), std::future_status::timeout);  // still parked
    test::writeAll(second.client.get(), "x");
    EXPECT_EQ(wake_second.get(), Wake::readable);
    EXPECT_FALSE(parked.wakeOne());  // nobody left
}

TEST(ParkedWorkersTest, AWakeLeavesNothingBehindForTheThreadsNextPark) {
    ParkedWorkers parked;
    test::SocketPair pair = test::tcpPair();
    // One thread parks, is woken, and parks again: the second park must not see the first wake.
    std::atomic<bool> woken{false};
    auto second = std::async(std::launch::async, [&] {
        const Wake first =
            parked.park(pair.server.get(), Clock::now() + testing::kWait, kNotWanted);
        woken = first == Wake::wanted;
        return parked.park(pair.server.get(), Clock::now() + 50ms, kNotWanted);
    });
    ASSERT_TRUE(waitParked(parked, 1));
    EXPECT_TRUE(parked.wakeOne());
    EXPECT_EQ(second.get(), Wake::timeout);
    EXPECT_TRUE(woken);
}

TEST(ParkedWorkersTest, AWorkerWantedBeforeItWasListedDoesNotPark) {
    ParkedWorkers parked;
    test::SocketPair pair = test::tcpPair();
    std::size_t listed_when_asked = 0;
    const Wake wake = parked.park(pair.server.get(), Clock::now() + testing::kWait, [&] {
        listed_when_asked = parked.parked();
        return true;
    });
    EXPECT_EQ(wake, Wake::wanted);
    EXPECT_EQ(listed_when_asked, 1U);  // asked once listed: a wakeOne() from then on finds it
    EXPECT_EQ(parked.parked(), 0U);
}

TEST(ParkedWorkersTest, CloseWakesEveryParkedWorkerAndRefusesLaterParks) {
    ParkedWorkers parked;
    std::vector<test::SocketPair> pairs;
    std::vector<std::future<Wake>> wakes;
    pairs.reserve(3);
    wakes.reserve(3);
    for (int i = 0; i < 3; ++i) {
        pairs.push_back(test::tcpPair());
    }
    for (auto& pair : pairs) {
        wakes.push_back(parkAsync(parked, pair.server.get(), Clock::now() + testing::kWait));
    }
    ASSERT_TRUE(waitParked(parked, 3));
    parked.close();
    for (auto& wake : wakes) {
        EXPECT_EQ(wake.get(), Wake::closed);
    }
    EXPECT_EQ(parked.park(pairs[0].server.get(), Clock::now() + testing::kWait, kNotWanted),
              Wake::closed);
    EXPECT_FALSE(parked.wakeOne());
}

}  // namespace
}  // namespace crank::http
