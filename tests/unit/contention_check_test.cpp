// Note [contended visits] (src/runner/contention_check.cpp): the rule that compares the other
// work beside the baseline's timed visits with the other work beside each candidate's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/contention_check.hpp"
#include "verify/battery.hpp"

namespace {

TEST(contention_problem, other_work_beside_one_side_only_fails_either_way) {
  const auto hogged_baseline = aisp::contention_problem(1.9, 0.05);  // judge-side threads on both CPUs while the baseline runs
  ASSERT_TRUE(hogged_baseline.has_value());
  EXPECT_NE(hogged_baseline->find("slowed the baseline"), std::string::npos) << *hogged_baseline;
  EXPECT_NE(hogged_baseline->find("1.90 CPUs"), std::string::npos) << *hogged_baseline;
  const auto helped = aisp::contention_problem(0.1, 1.2);  // a process outside the worker computing for the candidate
  ASSERT_TRUE(helped.has_value());
  EXPECT_NE(helped->find("ran beside this variant"), std::string::npos) << *helped;
}

TEST(contention_problem, background_work_beside_both_sides_passes) {
  EXPECT_FALSE(aisp::contention_problem(0.0, 0.0));
  EXPECT_FALSE(aisp::contention_problem(0.6, 0.1));  // under a CPU apart: a build step landing on more baseline visits
  EXPECT_FALSE(aisp::contention_problem(1.0, 1.7));  // a loaded machine, both sides
  EXPECT_FALSE(aisp::contention_problem(6.0, 7.4));  // other lanes' pairs: a quarter of 6 is 1.5
  EXPECT_TRUE(aisp::contention_problem(6.0, 7.6));
  EXPECT_TRUE(aisp::contention_problem(0.0, 0.8));
}

TEST(others_cpus, reads_only_sums_of_enough_visits) {
  EXPECT_FALSE(aisp::others_cpus({2, 0.2, 0.4}));  // two visits: a 10 ms tick is too coarse
  EXPECT_FALSE(aisp::others_cpus({5, 0.0, 0.0}));
  EXPECT_DOUBLE_EQ(*aisp::others_cpus({4, 0.5, 0.25}), 0.5);
  EXPECT_DOUBLE_EQ(*aisp::others_cpus({4, 0.5, -0.01}), 0.0);  // ticks rounded under the worker's own CPU
}

aisp::variant_slot slot_of(aisp::slot_role role, const std::string& label, aisp::visit_load load) {
  aisp::variant_slot slot;
  slot.role = role;
  slot.label = label;
  slot.load = load;
  return slot;
}

TEST(check_contention, judges_each_candidate_against_the_baseline_and_never_the_twin) {
  std::vector<aisp::variant_slot> slots;
  slots.push_back(slot_of(aisp::slot_role::baseline, "baseline", {10, 1.0, 1.8}));
  slots.push_back(slot_of(aisp::slot_role::noise_twin, "baseline_twin", {10, 1.0, 0.0}));
  slots.push_back(slot_of(aisp::slot_role::candidate, "optimized", {10, 1.0, 0.05}));
  slots.push_back(slot_of(aisp::slot_role::candidate, "optimized_b", {10, 1.0, 1.5}));
  slots.push_back(slot_of(aisp::slot_role::candidate, "optimized_c", {1, 1.0, 0.0}));  // too few visits read
  std::vector<aisp::check_result> checks;
  aisp::check_contention(slots, checks);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].variant, "optimized");
  EXPECT_FALSE(checks[0].passed);
  EXPECT_EQ(checks[0].check, aisp::verify::checks::contended.name);
  EXPECT_EQ(checks[1].variant, "optimized_b");
  EXPECT_TRUE(checks[1].passed) << checks[1].detail;
}

}  // namespace
