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

// Note [waiting visits]: on a full machine the busy CPU cannot show work aimed at the baseline;
// the time the baseline's own threads waited for a CPU can.
TEST(waiting_problem, a_baseline_kept_from_the_cpus_fails_and_a_busier_candidate_does_not) {
  const auto hogged = aisp::waiting_problem(0.53, 0.19);  // the judge-side hog beside a busy loop, 2026-12-05
  ASSERT_TRUE(hogged.has_value());
  EXPECT_NE(hogged->find("53%"), std::string::npos) << *hogged;
  EXPECT_NE(hogged->find("kept the CPUs from the baseline"), std::string::npos) << *hogged;
  EXPECT_FALSE(aisp::waiting_problem(0.05, 0.31));  // a 2-thread candidate on a loaded machine: it only understates itself
  EXPECT_FALSE(aisp::waiting_problem(0.10, 0.08));  // both sides alike
  EXPECT_FALSE(aisp::waiting_problem(0.54, 0.45));  // ranks that all wait alike
  EXPECT_FALSE(aisp::waiting_problem(0.60, 0.35));  // over 20 points, under twice the candidate's share
  EXPECT_TRUE(aisp::waiting_problem(0.25, 0.02));
}

TEST(waited_share, reads_sums_of_enough_visits_and_never_a_negative_span) {
  aisp::visit_load load{2, 0.1, 0.0};
  aisp::add_worker_schedule(load, {1'000'000, 0}, {4'000'000, 1'000'000});
  EXPECT_FALSE(aisp::waited_share(load));  // two visits
  load.visits = 3;
  EXPECT_DOUBLE_EQ(*aisp::waited_share(load), 0.25);
  aisp::add_worker_schedule(load, {9'000'000, 5'000'000}, {8'000'000, 4'000'000});  // a thread exited in between
  EXPECT_DOUBLE_EQ(*aisp::waited_share(load), 0.25);
  EXPECT_FALSE(aisp::waited_share({5, 1.0, 0.0}));  // nothing read
}

TEST(check_contention, fails_a_candidate_whose_baseline_waited_for_the_cpus) {
  std::vector<aisp::variant_slot> slots;
  aisp::visit_load baseline{10, 1.0, 1.5};
  baseline.ran_s = 0.47;
  baseline.waited_s = 0.53;
  aisp::visit_load candidate{10, 1.0, 1.27};
  candidate.ran_s = 0.81;
  candidate.waited_s = 0.19;
  slots.push_back(slot_of(aisp::slot_role::baseline, "baseline", baseline));
  slots.push_back(slot_of(aisp::slot_role::candidate, "optimized", candidate));
  std::vector<aisp::check_result> checks;
  aisp::check_contention(slots, checks);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_FALSE(checks[0].passed);
  EXPECT_NE(checks[0].detail.find("waited for a CPU"), std::string::npos) << checks[0].detail;
  EXPECT_TRUE(aisp::verify::checks::load_sensitive(checks[0].check));  // a busy machine's hint goes with it
}

}  // namespace
