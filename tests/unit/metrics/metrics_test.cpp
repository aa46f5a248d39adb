#include "metrics/metrics.h"

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace crank::metrics {
namespace {

TEST(Registry, RendersFamiliesSortedWithHelpTypeAndLabels) {
    Registry r;
    r.counter("crank_b_total", "b things", {{"tool", "t1"}, {"outcome", "ok"}}).inc();
    r.counter("crank_b_total", "ignored: the first help stays", {{"tool", "t1"}, {"outcome", "ok"}})
        .inc(2);
    r.counter("crank_a_total", "a things").inc(0.5);
    r.gauge("crank_c", "c now", [] {
        return std::vector<std::pair<Labels, double>>{{{{"status", "loaded"}}, 3}, {{}, 1}};
    });
    EXPECT_EQ(r.render(),
              "# HELP crank_a_total a things\n"
              "# TYPE crank_a_total counter\n"
              "crank_a_total 0.5\n"
              "# HELP crank_b_total b things\n"
              "# TYPE crank_b_total counter\n"
              "crank_b_total{tool=\"t1\",outcome=\"ok\"} 3\n"
              "# HELP crank_c c now\n"
              "# TYPE crank_c gauge\n"
              "crank_c{status=\"loaded\"} 3\n"
              "crank_c 1\n");
}

TEST(Registry, HistogramsHaveCumulativeBucketsSumAndCount) {
    Registry r;
    Histogram& h = r.histogram("crank_d_seconds", "d", {0.1, 1}, {{"tool", "x"}});
    h.observe(0.05);
    h.observe(0.1);  // on a bound: counted in that bucket (le is inclusive)
    h.observe(0.5);
    h.observe(7);
    EXPECT_EQ(r.render(),
              "# HELP crank_d_seconds d\n"
              "# TYPE crank_d_seconds histogram\n"
              "crank_d_seconds_bucket{tool=\"x\",le=\"0.1\"} 2\n"
              "crank_d_seconds_bucket{tool=\"x\",le=\"1\"} 3\n"
              "crank_d_seconds_bucket{tool=\"x\",le=\"+Inf\"} 4\n"
              "crank_d_seconds_sum{tool=\"x\"} 7.65\n"
              "crank_d_seconds_count{tool=\"x\"} 4\n");
}

TEST(Registry, LabelValuesAndHelpAreEscaped) {
    Registry r;
    r.counter("crank_e_total", "line one\nback\\slash", {{"tool", "a\"b\\c\nd"}}).inc();
    const std::string text = r.render();
    EXPECT_NE(text.find("# HELP crank_e_total line one\\nback\\\\slash\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("crank_e_total{tool=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos) << text;
    EXPECT_EQ(escapeLabelValue("plain"), "plain");
}

TEST(Registry, SeriesBeyondTheCapShareOneOtherSeries) {
    Registry r;
    for (std::size_t i = 0; i < Registry::kMaxSeriesPerFamily + 50; ++i) {
        r.counter("crank_f_total", "f", {{"tool", "t" + std::to_string(i)}}).inc();
    }
    const std::string text = r.render();
    EXPECT_NE(text.find("crank_f_total{tool=\"_other\"} 50\n"), std::string::npos);
    EXPECT_EQ(text.find("tool=\"t" + std::to_string(Registry::kMaxSeriesPerFamily) + "\""),
              std::string::npos);
    // A series that existed before the cap keeps counting on its own.
    r.counter("crank_f_total", "f", {{"tool", "t0"}}).inc();
    EXPECT_NE(r.render().find("crank_f_total{tool=\"t0\"} 2\n"), std::string::npos);
}

TEST(Registry, ConcurrentUpdatesAreAllCounted) {
    Registry r;
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&r, t] {
            for (int i = 0; i < 10'000; ++i) {
                r.counter("crank_g_total", "g", {{"t", std::to_string(t % 2)}}).inc();
                r.histogram("crank_h_seconds", "h", latencyBuckets()).observe(0.002);
            }
        });
    }
    for (std::thread& th : threads) {
        th.join();
    }
    const std::string text = r.render();
    EXPECT_NE(text.find("crank_g_total{t=\"0\"} 40000\n"), std::string::npos) << text;
    EXPECT_NE(text.find("crank_g_total{t=\"1\"} 40000\n"), std::string::npos) << text;
    EXPECT_NE(text.find("crank_h_seconds_count 80000\n"), std::string::npos) << text;
    EXPECT_NE(text.find("crank_h_seconds_bucket{le=\"0.001\"} 0\n"), std::string::npos) << text;
    EXPECT_NE(text.find("crank_h_seconds_bucket{le=\"0.005\"} 80000\n"), std::string::npos) << text;
}

TEST(Registry, AFamilyKeepsItsType) {
    Registry r;
    r.counter("crank_i", "i").inc();
    EXPECT_THROW(r.histogram("crank_i", "i", {1}), std::logic_error);
}

}  // namespace
}  // namespace crank::metrics
