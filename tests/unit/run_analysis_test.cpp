// Leaderboards, the Pareto frontier, budgets and technique stacks on a synthetic run.
#include <gtest/gtest.h>

#include "analysis/run_analysis.hpp"

namespace aisp {
namespace {

nlohmann::json variant(const char* name, double median_s, double bytes, bool verified = true) {
  return {{"name", name}, {"median_s", median_s}, {"buffer_bytes", bytes}, {"verified", verified}, {"energy_per_call_j", 0.1}};
}

nlohmann::json run() {
  return {{"pairs",
           {{{"target", "ch07:copy"}, {"status", "pass"}, {"tags", {"coalescing", "vectorization", "cheat:X1"}},
             {"variants", {variant("baseline", 1e-3, 2e9), variant("optimized", 2e-4, 2e9), variant("optimized_small", 3e-4, 1e9),
                           variant("baseline_twin", 1e-3, 2e9)}},
             {"speedups", {{{"variant", "optimized"}, {"speedup", {{"point", 5.0}}}}, {{"variant", "optimized_small"}, {"speedup", {{"point", 3.3}}}}}}},
            {{"target", "ch07:broken"}, {"status", "fail"}, {"variants", {variant("baseline", 1e-3, 1e6)}}},
            {{"target", "ch09:fuse"}, {"status", "pass"}, {"tags", {"fusion", "vectorization"}},
             {"variants", {variant("baseline", 5e-3, 3e9), variant("optimized", 1e-3, 3e9, false)}}}}}};
}

TEST(run_analysis, keeps_verified_variants_of_passing_pairs_only) {
  const auto points = points_of(run());
  ASSERT_EQ(points.size(), 4u);  // copy: 3 (no twin); fuse: baseline (optimized unverified); broken: none
  EXPECT_EQ(points[0].speedup, 1.0);
  EXPECT_EQ(points[1].speedup, 5.0);
}

TEST(run_analysis, ranks_and_finds_the_pareto_front) {
  const auto points = points_of(run());
  EXPECT_EQ(by_speed(points).front().variant, "optimized");
  EXPECT_EQ(by_memory(points).front().variant, "optimized_small");
  const auto front = pareto_front(points);
  std::vector<std::string> names;
  for (const auto& p : front) names.push_back(p.target + ":" + p.variant);
  // the copy baseline is dominated (slower, same memory); optimized and optimized_small trade off
  EXPECT_EQ(names, (std::vector<std::string>{"ch07:copy:optimized", "ch07:copy:optimized_small", "ch09:fuse:baseline"}));
}

TEST(run_analysis, filters_by_vram_and_latency) {
  const auto fit = fitting(points_of(run()), 1.5e9, 0.5e-3);
  ASSERT_EQ(fit.size(), 1u);
  EXPECT_EQ(fit[0].variant, "optimized_small");
  EXPECT_EQ(fitting(points_of(run()), 0, 0).size(), 4u);
}

TEST(run_analysis, reports_which_techniques_compose) {
  const auto stacks = technique_stacks(run());
  ASSERT_EQ(stacks.size(), 3u);  // coalescing, fusion, vectorization (cheat tags dropped)
  const auto& vectorization = stacks[2];
  EXPECT_EQ(vectorization["technique"], "vectorization");
  EXPECT_EQ(vectorization["targets"].size(), 2u);
  EXPECT_EQ(vectorization["composes_with"], (nlohmann::json{"coalescing", "fusion"}));
}

}  // namespace
}  // namespace aisp
