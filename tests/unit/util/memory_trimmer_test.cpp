#include "util/memory_trimmer.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "sanitizers.h"

namespace crank::util {
namespace {

using namespace std::chrono_literals;

TEST(MemoryTrimmer, TrimsEveryIntervalUntilStopped) {
    std::atomic<int> calls{0};
    MemoryTrimmer trimmer(5ms, [&] { ++calls; });
    trimmer.start();
    for (int i = 0; i < 1000 && calls.load() < 3; ++i) {  // at most 10 s
        std::this_thread::sleep_for(10ms);
    }
    trimmer.stop();
    ASSERT_GE(calls.load(), 3);
    EXPECT_EQ(trimmer.trims(), static_cast<std::uint64_t>(calls.load()));
    const int stopped_at = calls.load();
    std::this_thread::sleep_for(30ms);
    EXPECT_EQ(calls.load(), stopped_at) << "no trim after stop()";
}

TEST(MemoryTrimmer, StopDoesNotWaitForTheIntervalAndZeroTurnsItOff) {
    std::atomic<int> calls{0};
    {
        MemoryTrimmer hourly(std::chrono::hours(1), [&] { ++calls; });
        hourly.start();
        hourly.stop();   // returns now, or this test times out
        hourly.start();  // and starts again
    }                    // the destructor stops it as well
    MemoryTrimmer off(0ms, [&] { ++calls; });
    off.start();
    std::this_thread::sleep_for(20ms);
    off.stop();
    EXPECT_EQ(calls.load(), 0);
}

/// Resident pages of this process, KiB.
long rssKib() {
    std::ifstream statm("/proc/self/statm");
    long pages = 0;
    long resident = 0;
    statm >> pages >> resident;
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

TEST(MemoryTrimmer, SystemTrimGivesFreedHeapBackToTheSystem) {
    if (testing::kSanitized) {
        GTEST_SKIP() << "a sanitizer's allocator replaces glibc's";
    }
    // 2048 blocks of 16 KiB (below glibc's mmap threshold: on the heap), all freed but the last,
    // which pins the top of the heap so that free() alone cannot shrink it.
    constexpr int kBlocks = 2048;
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < kBlocks; ++i) {
        blocks.push_back(std::make_unique<char[]>(16 * 1024));
        std::fill_n(blocks.back().get(), 16 * 1024, static_cast<char>(i));
    }
    const long held = rssKib();
    for (int i = 0; i + 1 < kBlocks; ++i) {
        blocks[static_cast<std::size_t>(i)].reset();
    }
    const long freed = rssKib();
    MemoryTrimmer::systemTrim()();
    const long trimmed = rssKib();
    // 32 MiB were freed; glibc kept most of them until the trim.
    EXPECT_GT(freed, held - 16 * 1024) << "free() alone gave back " << held - freed << " KiB";
    EXPECT_LT(trimmed, freed - 16 * 1024) << "the trim gave back " << freed - trimmed << " KiB";
}

}  // namespace
}  // namespace crank::util
