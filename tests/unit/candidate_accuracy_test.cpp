// Note [accuracy against the baseline]: the pure rule that decides when a candidate's errors
// against the fp64 reference regressed from the baseline's on the same inputs; and the rules of
// Notes [input reuse] and [batch reuse], a candidate's extra samples against the baseline's.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runner/candidate_accuracy.hpp"
#include "runner/call_reuse.hpp"

namespace {

using aisp::accuracy_regression;
using aisp::size_error;

constexpr double fp32_floor = 1e-5;

TEST(accuracy_regression, a_candidate_spending_a_loose_tolerance_at_every_size_fails_and_the_detail_names_the_worst) {
  const std::vector<size_error> errors{{"validation n=7", 2e-4, 1.6e-7}, {"validation n=1000", 2.1e-4, 1.6e-7}, {"held_out n=1003", 9e-4, 1e-7}};
  const auto failure = accuracy_regression(errors, fp32_floor);
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->find("3 of 3 sizes"), std::string::npos) << *failure;
  EXPECT_NE(failure->find("held_out n=1003"), std::string::npos) << *failure;
}

TEST(accuracy_regression, errors_under_the_dtype_default_or_within_the_factor_pass) {
  // Far over 16x the baseline, but under fp32's default bound: a reordered sum.
  EXPECT_FALSE(accuracy_regression({{"a", 5e-6, 1e-9}, {"b", 6e-6, 1e-9}}, fp32_floor));
  // Over the floor, within 16x of a baseline that is itself loose.
  EXPECT_FALSE(accuracy_regression({{"a", 1e-3, 2e-4}, {"b", 3e-3, 2e-4}}, fp32_floor));
  // Exactly 16x is not over it.
  EXPECT_FALSE(accuracy_regression({{"a", 16e-4, 1e-4}, {"b", 16e-4, 1e-4}}, fp32_floor));
}

TEST(accuracy_regression, one_lucky_baseline_size_or_a_single_size_does_not_fail) {
  // A single sum whose baseline happened to round almost exactly at one size of three.
  EXPECT_FALSE(accuracy_regression({{"a", 3e-5, 1e-10}, {"b", 1e-6, 9e-7}, {"c", 2e-6, 1e-6}}, fp32_floor));
  // Half of the sizes is not more than half.
  EXPECT_FALSE(accuracy_regression({{"a", 1e-3, 1e-7}, {"b", 1e-6, 1e-6}}, fp32_floor));
  EXPECT_FALSE(accuracy_regression({{"a", 1e-3, 1e-7}}, fp32_floor));
  EXPECT_FALSE(accuracy_regression({}, fp32_floor));
}

TEST(accuracy_regression, an_exact_baseline_holds_the_candidate_to_the_floor) {
  EXPECT_TRUE(accuracy_regression({{"a", 2e-5, 0}, {"b", 3e-5, 0}}, fp32_floor));
  EXPECT_FALSE(accuracy_regression({{"a", 9e-6, 0}, {"b", 9e-6, 0}}, fp32_floor));
}

// Note [honest reorders]: a level's relative L2 failure within 4x of the baseline's own error
// there is an honest reorder; NaN, Inf or unwritten elements never are.
TEST(honest_reorders, a_candidate_within_four_times_the_baselines_error_at_a_level_is_right) {
  aisp::wide_outcome outcome{false, "rel-L2 3e-5", 3e-5, true};
  EXPECT_TRUE(aisp::within_the_baselines_error(outcome, 9e-6));
  EXPECT_FALSE(aisp::within_the_baselines_error(outcome, 7e-6));
  EXPECT_FALSE(aisp::within_the_baselines_error(outcome, 0.0)) << "an exact baseline lends nothing";
  outcome.only_rel_l2 = false;  // a NaN among its outputs
  EXPECT_FALSE(aisp::within_the_baselines_error(outcome, 1.0));
  EXPECT_TRUE(aisp::within_the_baselines_error(aisp::wide_outcome{}, 0.0)) << "a pass is a pass";
  aisp::wide_outcome added;
  aisp::verify::comparison nan_out;
  nan_out.nan_count = 1;
  nan_out.rel_l2_error = std::nan("");
  nan_out.reason_code = "O4";
  aisp::add_comparison(added, nan_out, "level");
  EXPECT_FALSE(added.passed);
  EXPECT_FALSE(added.only_rel_l2);
  EXPECT_FALSE(aisp::within_the_baselines_error(added, 1e300));
}

// Note [input reuse]: fresh-input median over timed median, a candidate's against the baseline's.
TEST(input_reuse_problem, a_candidate_far_slower_on_fresh_inputs_than_the_baseline_reused_its_answers) {
  const auto kept = aisp::input_reuse_problem(6.8, 1.02);  // the red team's GPU memo
  ASSERT_TRUE(kept.has_value());
  EXPECT_NE(kept->find("6.80x"), std::string::npos) << *kept;
  EXPECT_FALSE(aisp::input_reuse_problem(1.1, 1.0));   // honest: the same either way
  EXPECT_FALSE(aisp::input_reuse_problem(1.6, 1.2));   // over 1.5x, but within 1.5x of the baseline's own ratio
  EXPECT_FALSE(aisp::input_reuse_problem(1.5, 0.5));   // exactly 1.5x is not over it
  EXPECT_TRUE(aisp::input_reuse_problem(2.0, 1.0));
}

// Note [baseline reuse bound]: a baseline slowed where nothing can be reused lends a candidate at
// most its bound, and fails itself.
TEST(baseline_reuse_problem, a_baseline_that_does_more_on_fresh_inputs_lends_no_candidate_its_ratio) {
  EXPECT_TRUE(aisp::input_reuse_problem(175.0, 394.0));  // the red team's kept answer beside a baseline burning 400x
  EXPECT_FALSE(aisp::input_reuse_problem(3.7, 2.5));     // within 1.5x of a baseline at its bound
  EXPECT_TRUE(aisp::input_reuse_problem(3.8, 9.0));      // the baseline's 9x counts as 2.5x
  const auto burned = aisp::baseline_reuse_problem(394.0, aisp::input_reuse_baseline_bound, "fresh inputs");
  ASSERT_TRUE(burned.has_value());
  EXPECT_NE(burned->find("394.00x"), std::string::npos) << *burned;
  EXPECT_FALSE(aisp::baseline_reuse_problem(1.0, aisp::input_reuse_baseline_bound, "fresh inputs"));
  EXPECT_FALSE(aisp::baseline_reuse_problem(2.85, aisp::batch_reuse_baseline_bound, "one call a sample"));  // ch01's tiny launches
  EXPECT_TRUE(aisp::batch_reuse_problem(8.1, 50.0, aisp::timing_mode::graph));  // 50x counts as 4x
}

// Note [batch reuse]: one-call median (less the empty window) over the timed batched median.
TEST(batch_reuse_problem, a_candidate_far_slower_one_call_at_a_time_than_the_baseline_did_the_work_once_a_batch) {
  const auto once_a_batch = aisp::batch_reuse_problem(3.6, 1.05, aisp::timing_mode::hot);  // the red team's host memo
  ASSERT_TRUE(once_a_batch.has_value());
  EXPECT_NE(once_a_batch->find("3.60x its timed hot median"), std::string::npos) << *once_a_batch;
  const auto captured_once = aisp::batch_reuse_problem(8.0, 1.0, aisp::timing_mode::graph);
  ASSERT_TRUE(captured_once.has_value());
  EXPECT_NE(captured_once->find("graph"), std::string::npos) << *captured_once;
  EXPECT_FALSE(aisp::batch_reuse_problem(1.2, 1.0, aisp::timing_mode::hot));  // honest: a call costs its share of a batch
  EXPECT_FALSE(aisp::batch_reuse_problem(1.7, 1.3, aisp::timing_mode::graph));  // a short call's launch cost, the baseline's too
  // On the host a baseline lends at most 1.25x: red team six's baseline redid its work on changed
  // inputs (2.0x) to lend a candidate that reused most of a batch (2.75x).
  EXPECT_FALSE(aisp::batch_reuse_problem(2.75, 2.0, aisp::timing_mode::hot));
  EXPECT_TRUE(aisp::batch_reuse_problem(2.75, 2.0, aisp::timing_mode::hot, true));
  EXPECT_FALSE(aisp::batch_reuse_problem(1.5, 1.2, aisp::timing_mode::hot, true));  // the honest host sines
  EXPECT_FALSE(aisp::batch_reuse_problem(1.5, 1.15, aisp::timing_mode::hot));   // a host loop whose branches learned the inputs
  EXPECT_FALSE(aisp::batch_reuse_problem(2.0, 1.0, aisp::timing_mode::hot));   // exactly 2x is not over it
  EXPECT_TRUE(aisp::batch_reuse_problem(2.1, 1.0, aisp::timing_mode::hot));   // every other call skipped, and a little more
}

}  // namespace
