#include "util/heap_usage.h"

#include <cstddef>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "sanitizers.h"

namespace crank::util {
namespace {

// A sanitizer's allocator replaces glibc's, whose figures then say nothing about this process.
bool measurable(const HeapUsage& usage) {
    return usage.known && !testing::kSanitized;
}

TEST(HeapUsage, InUseNeverExceedsTaken) {
    const HeapUsage usage = heapUsage();
    if (!measurable(usage)) {
        GTEST_SKIP() << "no glibc allocator to read";
    }
    EXPECT_GT(usage.in_use, 0U);
    EXPECT_LE(usage.in_use, usage.taken);
}

TEST(HeapUsage, LiveAllocationsCountAsInUseAndFreedOnesNoLonger) {
    const HeapUsage before = heapUsage();
    if (!measurable(before)) {
        GTEST_SKIP() << "no glibc allocator to read";
    }
    // Small blocks (from an arena, not mapped on their own): 4 MiB in 4096 blocks of 1 KiB.
    constexpr std::size_t kBlocks = 4096;
    constexpr std::size_t kBlock = 1024;
    std::vector<std::unique_ptr<char[]>> blocks;
    blocks.reserve(kBlocks);
    for (std::size_t i = 0; i < kBlocks; ++i) {
        blocks.push_back(std::make_unique<char[]>(kBlock));
    }
    const HeapUsage held = heapUsage();
    EXPECT_GE(held.in_use, before.in_use + kBlocks * kBlock);
    EXPECT_GE(held.taken, held.in_use);

    // Every other block freed: in use falls by half of them, while the pages they sat in stay
    // taken (the live neighbours hold them): fragmentation, which only `taken` shows.
    for (std::size_t i = 0; i < kBlocks; i += 2) {
        blocks[i].reset();
    }
    const HeapUsage holed = heapUsage();
    EXPECT_LE(holed.in_use + (kBlocks / 2) * kBlock, held.in_use);
    EXPECT_GE(holed.taken, holed.in_use + (kBlocks / 2) * kBlock);
}

}  // namespace
}  // namespace crank::util
