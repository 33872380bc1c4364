// Notes [hidden mean], [the means' own noise] and [soaked mean] (src/runner/mean_check.cpp): a
// candidate whose median claims a speedup that its calls in sum do not have fails hidden-cost,
// by its samples' trimmed mean or (on the host) by its calls back to back; honest noise does not.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/mean_check.hpp"
#include "verify/battery.hpp"

namespace {

// n samples of `fast`, every k-th one `slow` instead (k 0: none).
std::vector<double> calls(std::size_t n, double fast, std::size_t k = 0, double slow = 0) {
  std::vector<double> values(n, fast);
  for (std::size_t i = 0; k > 0 && i < n; ++i)
    if (i % k == k - 1) values[i] = slow;
  return values;
}

aisp::variant_slot slot_of(aisp::slot_role role, const std::string& label, const std::vector<double>& durations, double soak_call_s = 0) {
  aisp::variant_slot slot;
  slot.role = role;
  slot.label = label;
  for (double d : durations) slot.result.samples.push_back(aisp::sample_record{.duration_s = d});
  slot.soak_call_s = soak_call_s;
  return slot;
}

// The one hidden-cost check of `candidate` beside a baseline and twin of 1.5 a call.
aisp::check_result judged(const std::vector<double>& candidate, double candidate_soak, bool soak_judged,
                          const std::vector<double>& baseline = calls(100, 1.5), double baseline_soak = 1.5) {
  std::vector<aisp::variant_slot> slots;
  slots.push_back(slot_of(aisp::slot_role::baseline, "baseline", baseline, baseline_soak));
  slots.push_back(slot_of(aisp::slot_role::noise_twin, "baseline_twin", baseline));
  slots.push_back(slot_of(aisp::slot_role::candidate, "optimized", candidate, candidate_soak));
  std::vector<aisp::check_result> checks;
  aisp::check_hidden_cost(slots, checks, soak_judged);
  EXPECT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks.at(0).check, aisp::verify::checks::hidden_cost.name);
  return checks.at(0);
}

TEST(hidden_cost, a_third_of_calls_slow_fails_by_the_trimmed_mean) {
  const auto check = judged(calls(99, 1.0, 3, 4.5), 0, false);  // mean ~2.1 against 1.5
  EXPECT_FALSE(check.passed) << check.detail;
}

TEST(hidden_cost, an_honest_candidate_passes) {
  EXPECT_TRUE(judged(calls(100, 1.0), 1.0, true).passed);
  EXPECT_TRUE(judged(calls(100, 1.0), 0, true).passed);  // no soak: calls too long for a look
}

// Note [soaked mean]: 4% of calls at 80 units sit in the trimmed 5%, or in none of the samples;
// back to back they show: the stream ratio 4.2 against the baseline's 1, over 1.5 x 1.5.
TEST(hidden_cost, a_rare_slow_call_fails_on_the_host_by_the_calls_back_to_back) {
  const auto candidate = calls(100, 1.0, 25, 80.0);
  const auto check = judged(candidate, 4.2, true);
  EXPECT_FALSE(check.passed) << check.detail;
  EXPECT_NE(check.detail.find("back to back"), std::string::npos) << check.detail;
  // The same samples pass by the trimmed mean alone, and on the device the soak is reported only.
  const auto on_the_device = judged(candidate, 4.2, false);
  EXPECT_TRUE(on_the_device.passed) << on_the_device.detail;
  EXPECT_NE(on_the_device.detail.find("reported only on the device"), std::string::npos) << on_the_device.detail;
}

// A soak reads each variant against its own median: a baseline that gains more from the soak's
// repeated inputs than its candidate (accuracy_honest:bf16_rows_reordered, reversed) passes.
TEST(hidden_cost, a_baseline_faster_back_to_back_than_sampled_does_not_fail_its_candidate) {
  EXPECT_TRUE(judged(calls(100, 1.0), 1.0, true, calls(100, 1.5), 0.75).passed);  // 2.0 against 1.5 x 1.5
  EXPECT_FALSE(judged(calls(100, 1.0), 1.0, true, calls(100, 1.5), 0.6).passed);  // 2.5
}

// Note [the means' own noise]: an honest candidate 5% faster by its median and 3.4% slower by its
// trimmed mean, where the baseline's own is known only to ~9% (13% for two such means), passes;
// by the twin's distance alone (0 here: 3%) it failed.
TEST(hidden_cost, a_mean_over_the_baseline_by_less_than_its_noise_passes) {
  std::vector<double> noisy_baseline;
  for (int i = 0; i < 100; ++i) noisy_baseline.push_back(i % 4 == 3 ? 2.6 : 1.05);  // mean ~1.4, spread ~0.67
  std::vector<double> candidate;
  for (int i = 0; i < 100; ++i) candidate.push_back(i % 4 == 3 ? 3.0 : 1.0);  // median 1.05x, trimmed mean 3.3% over
  const auto check = judged(candidate, 0, true, noisy_baseline, 0);
  EXPECT_TRUE(check.passed) << check.detail;
}

}  // namespace
