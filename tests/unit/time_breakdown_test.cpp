// Where a suite's time went: phases summed over the pairs that ran, the median pair, durations.
#include <gtest/gtest.h>

#include "results/time_breakdown.hpp"

namespace aisp {
namespace {

pair_result ran(double wall, std::vector<std::pair<std::string, double>> phases) {
  pair_result p;
  p.wall_s = wall;
  p.phase_s = std::move(phases);
  return p;
}

TEST(time_breakdown, sums_phases_over_pairs_largest_first_and_skips_skipped_pairs) {
  pair_result skipped;
  skipped.status = "skip";
  skipped.wall_s = 100;
  const auto b = break_down({ran(10, {{"sampling", 6}, {"battery", 4}}), ran(30, {{"sampling", 10}, {"battery", 20}}), skipped});
  EXPECT_EQ(b.pairs, 2);
  EXPECT_DOUBLE_EQ(b.total_s, 40);
  EXPECT_DOUBLE_EQ(b.median_pair_s, 20);
  ASSERT_EQ(b.phases.size(), 2u);
  EXPECT_EQ(b.phases[0].first, "battery");
  EXPECT_DOUBLE_EQ(b.phases[0].second, 24);
  const auto line = describe(b);
  EXPECT_NE(line.find("battery 24.0 s (60%), sampling 16.0 s (40%)"), std::string::npos) << line;
  EXPECT_NE(line.find("median pair 20.0 s over 2 pairs, 40s in all"), std::string::npos) << line;
  const auto j = to_json(b);
  EXPECT_DOUBLE_EQ(j["phase_s"]["battery"].get<double>(), 24);
}

TEST(time_breakdown, tiny_phases_are_counted_not_listed) {
  const auto line = describe(break_down({ran(100, {{"sampling", 99.5}, {"energy", 0.3}, {"verdicts", 0.2}})}));
  EXPECT_EQ(line.find("energy"), std::string::npos) << line;
  EXPECT_NE(line.find("2 more under 1% each"), std::string::npos) << line;
}

TEST(time_breakdown, nothing_ran_says_so) { EXPECT_EQ(describe(break_down({})), "time by phase: no pair ran"); }

TEST(short_duration, reads_like_a_clock) {
  EXPECT_EQ(short_duration(42.4), "42s");
  EXPECT_EQ(short_duration(65), "1m05s");
  EXPECT_EQ(short_duration(7380), "2h03m");
  EXPECT_EQ(short_duration(-3), "0s");
}

}  // namespace
}  // namespace aisp
