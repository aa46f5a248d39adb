// editDistance and closestMatch (the "did you mean" of config errors).

#include "util/suggest.h"

#include <array>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace crank {
namespace {

TEST(ConfigSuggestTest, EditDistanceBasics) {
    EXPECT_EQ(editDistance("", ""), 0U);
    EXPECT_EQ(editDistance("abc", "abc"), 0U);
    EXPECT_EQ(editDistance("", "abc"), 3U);
    EXPECT_EQ(editDistance("abc", ""), 3U);
    EXPECT_EQ(editDistance("max_items", "max_item"), 1U);  // deletion
    EXPECT_EQ(editDistance("threds", "threads"), 1U);      // insertion
    EXPECT_EQ(editDistance("windaw", "window"), 1U);       // substitution
    EXPECT_EQ(editDistance("kitten", "sitting"), 3U);
    EXPECT_EQ(editDistance("flaw", "lawn"), 2U);
}

TEST(ConfigSuggestTest, AdjacentTranspositionCostsOne) {
    EXPECT_EQ(editDistance("ab", "ba"), 1U);
    EXPECT_EQ(editDistance("sesison", "session"), 1U);
    EXPECT_EQ(editDistance("stauts", "status"), 1U);
}

TEST(ConfigSuggestTest, EditDistanceIsSymmetric) {
    const std::array<std::string_view, 5> words{"", "a", "unary", "async_job", "summary_only"};
    for (const std::string_view a : words) {
        for (const std::string_view b : words) {
            EXPECT_EQ(editDistance(a, b), editDistance(b, a)) << a << " / " << b;
        }
    }
}

TEST(ConfigSuggestTest, ClosestMatchFindsPlausibleTypos) {
    constexpr std::array<std::string_view, 4> keys{"threads", "queue", "backlog", "listen"};
    EXPECT_EQ(closestMatch("thread", keys), "threads");
    EXPECT_EQ(closestMatch("queu", keys), "queue");
    EXPECT_EQ(closestMatch("Listen", keys), "listen");
    EXPECT_EQ(closestMatch("backlgo", keys), "backlog");
}

TEST(ConfigSuggestTest, ClosestMatchPicksTheNearestCandidate) {
    constexpr std::array<std::string_view, 3> names{"stats", "status", "state"};
    EXPECT_EQ(closestMatch("statuss", names), "status");
    EXPECT_EQ(closestMatch("stat", names), "stats");  // ties go to the first candidate
}

TEST(ConfigSuggestTest, ClosestMatchRefusesFarWords) {
    constexpr std::array<std::string_view, 3> keys{"server", "store", "operations"};
    EXPECT_EQ(closestMatch("listeners", keys), std::nullopt);
    EXPECT_EQ(closestMatch("ops", keys), std::nullopt);
    EXPECT_EQ(closestMatch("", keys), std::nullopt);
    EXPECT_EQ(closestMatch("server", std::span<const std::string_view>{}), std::nullopt);
}

TEST(ConfigSuggestTest, ClosestMatchThresholdGrowsWithTheWord) {
    // At most max(1, size / 3) edits.
    constexpr std::array<std::string_view, 1> one{"abcdef"};
    EXPECT_EQ(closestMatch("abcdXY", one), "abcdef");      // 2 edits, 6 / 3 = 2
    EXPECT_EQ(closestMatch("abcXYZ", one), std::nullopt);  // 3 edits
    constexpr std::array<std::string_view, 1> shortKey{"in"};
    EXPECT_EQ(closestMatch("on", shortKey), "in");  // 1 edit allowed for short words
    EXPECT_EQ(closestMatch("ox", shortKey), std::nullopt);
}

TEST(ConfigSuggestTest, ClosestMatchOfAHugeWordIsQuick) {
    // A hostile key of a few megabytes must not cost size * candidates * length steps for nothing.
    constexpr std::array<std::string_view, 3> keys{"server", "store", "operations"};
    const std::string huge(8 * 1024 * 1024, 'x');
    EXPECT_EQ(closestMatch(huge, keys), std::nullopt);
}

}  // namespace
}  // namespace crank
