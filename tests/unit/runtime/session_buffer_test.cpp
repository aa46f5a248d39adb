#include "runtime/session_buffer.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace crank::runtime {
namespace {

using Offer = SessionBuffer::Offer;

SessionBuffer::Limits limits(std::uint64_t items, std::uint64_t bytes, OverflowPolicy overflow) {
    return SessionBuffer::Limits{items, bytes, overflow};
}

SessionBuffer::Page poll(SessionBuffer& b, std::optional<std::string> cursor,
                         std::size_t max_items = 100) {
    auto page = b.poll(cursor ? std::optional<std::string_view>(*cursor) : std::nullopt, max_items);
    if (!page) {
        ADD_FAILURE() << page.error().message;
        return SessionBuffer::Page{};
    }
    return std::move(page.value());
}

TEST(SessionBuffer, ItemsAreNumberedAndPolledAfterTheCursor) {
    SessionBuffer b(limits(10, 1000, OverflowPolicy::pause));
    for (const char* item : {"1", "2", "3"}) {
        EXPECT_EQ(b.offer(std::string(item)), Offer::accepted);
    }
    const auto first = poll(b, std::nullopt, 2);
    EXPECT_EQ(first.items, (std::vector<std::string>{"1", "2"}));
    EXPECT_EQ(first.first_seq, 1U);
    EXPECT_EQ(first.cursor, "2");
    EXPECT_TRUE(first.has_more);
    const auto second = poll(b, first.cursor);
    EXPECT_EQ(second.items, (std::vector<std::string>{"3"}));
    EXPECT_EQ(second.cursor, "3");
    EXPECT_FALSE(second.has_more);
    const auto empty = poll(b, second.cursor);
    EXPECT_TRUE(empty.items.empty());
    EXPECT_EQ(empty.cursor, "3");  // the same cursor again: nothing is skipped later
    b.offer("4");
    EXPECT_EQ(poll(b, empty.cursor).items, (std::vector<std::string>{"4"}));
}

TEST(SessionBuffer, PollingTwiceWithTheSameCursorReturnsTheSameItems) {
    SessionBuffer b(limits(10, 1000, OverflowPolicy::pause));
    for (const char* item : {"a", "b", "c", "d"}) {
        b.offer(std::string(item));
    }
    const auto page = poll(b, std::nullopt, 2);
    const auto again = poll(b, std::string("0"), 2);
    EXPECT_EQ(page.items, again.items);
    EXPECT_EQ(page.cursor, again.cursor);
    // The answer was lost: the client asks again with its previous cursor.
    const auto next = poll(b, page.cursor, 2);
    const auto nextAgain = poll(b, page.cursor, 2);
    EXPECT_EQ(next.items, (std::vector<std::string>{"c", "d"}));
    EXPECT_EQ(nextAgain.items, next.items);
    // Acknowledged items are gone from memory.
    EXPECT_EQ(b.counters().buffered_items, 2U);
}

TEST(SessionBuffer, BadCursorsAreErrorsThatSayWhy) {
    SessionBuffer b(limits(10, 1000, OverflowPolicy::pause));
    b.offer("x");
    for (const char* bad : {"", "abc", "-1", "1.5", "1 "}) {
        const auto page = b.poll(std::string_view(bad), 10);
        ASSERT_FALSE(static_cast<bool>(page)) << bad;
        EXPECT_NE(page.error().message.find("cursor"), std::string::npos);
    }
    const auto ahead = b.poll(std::string_view("7"), 10);
    ASSERT_FALSE(static_cast<bool>(ahead));
    EXPECT_NE(ahead.error().message.find("has received 1 items"), std::string::npos);
}

TEST(SessionBuffer, ARefusedItemIsLeftToItsCallerAndATakenOneIsMoved) {
    SessionBuffer b(limits(1, 1000, OverflowPolicy::pause));
    std::string first = R"({"seq":1})";
    EXPECT_EQ(b.offer(std::move(first)), Offer::accepted_pause);
    std::string second = R"({"seq":2})";
    EXPECT_EQ(b.offer(std::move(second)), Offer::rejected_full);
    // NOLINTNEXTLINE(bugprone-use-after-move): offer() leaves a refused item as it was
    EXPECT_EQ(second, R"({"seq":2})");
}

TEST(SessionBuffer, PausePolicyRejectsWhenFullAndResumesAtHalf) {
    SessionBuffer b(limits(4, 1000, OverflowPolicy::pause));
    EXPECT_EQ(b.offer("1"), Offer::accepted);
    EXPECT_EQ(b.offer("2"), Offer::accepted);
    EXPECT_EQ(b.offer("3"), Offer::accepted);
    EXPECT_EQ(b.offer("4"), Offer::accepted_pause);  // now full: pause before anything is lost
    EXPECT_EQ(b.offer("5"), Offer::rejected_full);
    EXPECT_TRUE(b.counters().paused);
    EXPECT_FALSE(b.takeResume());
    auto page = poll(b, std::nullopt, 1);
    EXPECT_FALSE(b.takeResume());    // nothing acknowledged yet
    page = poll(b, page.cursor, 1);  // one acknowledged: 3 left, more than half
    EXPECT_FALSE(b.takeResume());
    page = poll(b, page.cursor, 1);  // two acknowledged: 2 left = half
    EXPECT_TRUE(b.takeResume());
    EXPECT_FALSE(b.takeResume());              // once
    EXPECT_EQ(b.offer("5"), Offer::accepted);  // the plugin emits the kept item again
    const auto rest = poll(b, page.cursor);    // page held "3": acknowledged now
    EXPECT_EQ(rest.items, (std::vector<std::string>{"4", "5"}));
    EXPECT_EQ(rest.dropped, 0U);
    EXPECT_EQ(b.counters().rejected, 1U);
}

TEST(SessionBuffer, DropOldestMakesRoomAndCounts) {
    SessionBuffer b(limits(3, 1000, OverflowPolicy::drop_oldest));
    for (int i = 1; i <= 5; ++i) {
        EXPECT_EQ(b.offer(std::to_string(i)), Offer::accepted);
    }
    const auto page = poll(b, std::nullopt);
    EXPECT_EQ(page.items, (std::vector<std::string>{"3", "4", "5"}));
    EXPECT_EQ(page.first_seq, 3U);
    EXPECT_EQ(page.dropped, 2U);
    // A cursor from before what was dropped reads from the oldest item still there.
    b.offer("6");
    b.offer("7");
    b.offer("8");
    const auto late = poll(b, std::string("2"));
    EXPECT_EQ(late.items, (std::vector<std::string>{"6", "7", "8"}));
    EXPECT_EQ(late.first_seq, 6U);
    EXPECT_EQ(late.dropped, 5U);
}

TEST(SessionBuffer, BytesAreBoundedToo) {
    SessionBuffer b(limits(100, 10, OverflowPolicy::drop_oldest));
    EXPECT_EQ(b.offer("aaaa"), Offer::accepted);
    EXPECT_EQ(b.offer("bbbb"), Offer::accepted);
    EXPECT_EQ(b.offer("cccc"), Offer::accepted);  // 12 bytes: "aaaa" goes
    EXPECT_EQ(b.counters().buffered_bytes, 8U);
    EXPECT_EQ(b.offer("x-larger-than-10"), Offer::dropped);  // can never fit
    EXPECT_EQ(b.counters().dropped, 2U);

    SessionBuffer p(limits(100, 10, OverflowPolicy::pause));
    EXPECT_EQ(p.offer("12345"), Offer::accepted);
    EXPECT_EQ(p.offer("123456"), Offer::rejected_full);
    EXPECT_EQ(p.offer("x-larger-than-10"), Offer::dropped);  // would block the stream forever
}

TEST(SessionBuffer, AProducerAndAConsumerLoseNothingUnderPause) {
    SessionBuffer b(limits(16, 1 << 20, OverflowPolicy::pause));
    constexpr int kItems = 5000;
    std::atomic<bool> resumed{false};
    std::atomic<bool> stop{false};  // bounds the producer if the consumer gives up
    std::thread producer([&] {
        for (int i = 1; i <= kItems && !stop.load();) {
            const Offer o = b.offer(std::to_string(i));
            if (o == Offer::rejected_full) {
                // As a plugin would: wait for stream_resume, then emit the same item again.
                while (!resumed.exchange(false) && !stop.load()) {
                    std::this_thread::yield();
                }
                continue;
            }
            ++i;
            if (o == Offer::accepted_pause) {
                while (!resumed.exchange(false) && !stop.load()) {
                    std::this_thread::yield();
                }
            }
        }
    });
    std::vector<int> seen;
    std::string cursor = "0";
    for (int spins = 0; seen.size() < static_cast<std::size_t>(kItems) && spins < 10'000'000;
         ++spins) {
        const auto page = poll(b, cursor, 7);
        for (const std::string& item : page.items) {
            seen.push_back(std::stoi(item));
        }
        cursor = page.cursor;
        if (b.takeResume()) {
            resumed = true;
        }
        if (page.items.empty()) {
            std::this_thread::yield();  // a spinning poller would starve the producer's lock
        }
    }
    stop = true;
    producer.join();
    ASSERT_EQ(seen.size(), static_cast<std::size_t>(kItems));
    for (int i = 0; i < kItems; ++i) {
        ASSERT_EQ(seen[static_cast<std::size_t>(i)], i + 1);
    }
    EXPECT_EQ(b.counters().dropped, 0U);
}

}  // namespace
}  // namespace crank::runtime
