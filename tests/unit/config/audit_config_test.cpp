// The `audit` section: retention bounds, the cleaner's pace and the sampling of reads.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_test_support.h"

namespace crank::config::test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ConfigAuditTest, DefaultsKeepThirtyDaysAndTwoMillionEventsAndRecordEveryRead) {
    const LoadResult result = load("{}");
    ASSERT_TRUE(result.config.has_value());
    const AuditConfig& a = result.config->audit;
    EXPECT_EQ(a.max_age_days, 30);
    EXPECT_EQ(a.max_events, 2'000'000);
    EXPECT_EQ(a.clean_interval_ms, 60'000);
    EXPECT_EQ(a.sample_reads, 1);
    EXPECT_EQ(a.queue_max, 16'384);
    EXPECT_EQ(a.write_batch, 500);
    EXPECT_EQ(a.write_delay_ms, 10);
}

TEST(ConfigAuditTest, EveryKeyIsRead) {
    const LoadResult result = load(R"({"audit": {"max_age_days": 7, "max_events": 500,
        "clean_interval_ms": 250, "sample_reads": 10,
        "queue_max": 64, "write_batch": 8, "write_delay_ms": 0}})");
    ASSERT_THAT(messages(result), IsEmpty());
    const AuditConfig& a = result.config->audit;
    EXPECT_EQ(a.max_age_days, 7);
    EXPECT_EQ(a.max_events, 500);
    EXPECT_EQ(a.clean_interval_ms, 250);
    EXPECT_EQ(a.sample_reads, 10);
    EXPECT_EQ(a.queue_max, 64);
    EXPECT_EQ(a.write_batch, 8);
    EXPECT_EQ(a.write_delay_ms, 0);
}

TEST(ConfigAuditTest, ZeroTurnsABoundOff) {
    const LoadResult result = load(R"({"audit": {"max_age_days": 0, "max_events": 0}})");
    ASSERT_THAT(messages(result), IsEmpty());
    EXPECT_EQ(result.config->audit.max_age_days, 0);
    EXPECT_EQ(result.config->audit.max_events, 0);
}

TEST(ConfigAuditTest, BadValuesAreNamedByTheirPath) {
    EXPECT_THAT(errorsOf(R"({"audit": {"max_age_days": -1, "max_events": "many",
                                       "clean_interval_ms": 10, "sample_reads": 0,
                                       "write_batch": 1001, "max_age_day": 3}})"),
                ElementsAre(R"(audit.max_age_days: expected an integer from 0 to 36500, got -1)",
                            R"(audit.max_events: expected an integer from 0 to 1000000000000, )"
                            R"(got "many")",
                            R"(audit.clean_interval_ms: expected an integer from 100 to )"
                            R"(86400000, got 10)",
                            R"(audit.sample_reads: expected a positive integer, got 0)",
                            R"(audit.write_batch: must be at most 1000, got 1001)",
                            R"(audit.max_age_day: unknown key (did you mean "max_age_days"?))"));
    EXPECT_THAT(errorsOf(R"({"audit": []})"),
                ElementsAre(R"(audit: expected an object, got an array)"));
}

}  // namespace
}  // namespace crank::config::test
