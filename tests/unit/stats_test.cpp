// Unit tests of the statistics module. Expected values come from hand computation or from the
// math in the comments, never from running the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "aisp/check.hpp"
#include "stats/bootstrap.hpp"
#include "stats/median_ci.hpp"
#include "stats/stopping_rule.hpp"
#include "stats/summary.hpp"
#include "stats/verdict.hpp"

namespace aisp::stats {
namespace {

// n values evenly spread over [center - spread, center + spread] at the cell midpoints:
// rank k (1-based) is center - spread + 2 spread (k - 1/2) / n, and the median is `center`.
std::vector<double> even_grid(std::size_t n, double center, double spread) {
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double cell = (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    values[i] = center - spread + 2 * spread * cell;
  }
  return values;
}

// Half the samples at 1.0 and half at 2.0: every median CI spans [1, 2] whatever n is.
std::vector<double> bimodal(std::size_t n) {
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = i % 2 == 0 ? 1.0 : 2.0;
  return values;
}

std::vector<double> lognormal(std::size_t n, double median, double sigma, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, sigma);
  std::vector<double> values(n);
  for (double& v : values) v = median * std::exp(normal(rng));
  return values;
}

ratio_estimate ci(double low, double high) { return {(low + high) / 2, low, high}; }

stopping_config quick_config() {
  stopping_config config;
  config.min_samples = 10;
  config.min_time_s = 0.5;
  config.max_time_s = 15.0;
  return config;
}

// ---- summarize ---------------------------------------------------------------------------

TEST(summarize, matches_a_hand_computed_ten_sample_set) {
  // Sorted 1..9, 100. Type 7, h = 9q: median h=4.5 -> (5+6)/2; q1 h=2.25 -> 3 + 0.25;
  // q3 h=6.75 -> 7 + 0.75. Fences -3.5 and 14.5 leave 100 as the only outlier.
  const std::vector<double> samples = {7, 3, 100, 1, 9, 5, 2, 8, 4, 6};
  const sample_summary s = summarize(samples);
  EXPECT_EQ(s.count, 10u);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.q1, 3.25);
  EXPECT_DOUBLE_EQ(s.q3, 7.75);
  EXPECT_DOUBLE_EQ(s.iqr, 4.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 14.5);
  // Squared deviations from 14.5 sum to 872.25 (for 1..9) + 7310.25 (for 100) = 8182.5.
  EXPECT_NEAR(s.cv, std::sqrt(8182.5 / 9) / 14.5, 1e-12);
  EXPECT_NEAR(s.robust_cv, (4.5 / 1.349) / 5.5, 1e-12);
  EXPECT_EQ(s.outliers, 1u);
}

TEST(summarize, counts_outliers_on_both_sides_of_the_fences) {
  // q1 (h=1.5) = q3 (h=4.5) = 10, so the IQR is 0 and both fences sit at 10.
  const std::vector<double> samples = {0, 10, 10, 10, 10, 10, 20};
  const sample_summary s = summarize(samples);
  EXPECT_DOUBLE_EQ(s.iqr, 0);
  EXPECT_DOUBLE_EQ(s.robust_cv, 0);
  EXPECT_EQ(s.outliers, 2u);
}

TEST(summarize, a_single_sample_has_no_spread) {
  const std::vector<double> samples = {3.0};
  const sample_summary s = summarize(samples);
  EXPECT_EQ(s.count, 1u);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.q1, 3.0);
  EXPECT_DOUBLE_EQ(s.q3, 3.0);
  EXPECT_DOUBLE_EQ(s.cv, 0);
  EXPECT_EQ(s.outliers, 0u);
}

TEST(summarize, throws_contract_error_on_empty_input) {
  EXPECT_THROW((void)summarize({}), contract_error);
}

TEST(quantile_of_sorted, interpolates_linearly_between_order_statistics) {
  const std::vector<double> sorted = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(quantile_of_sorted(sorted, 0.0), 10);
  EXPECT_DOUBLE_EQ(quantile_of_sorted(sorted, 1.0), 40);
  EXPECT_DOUBLE_EQ(quantile_of_sorted(sorted, 0.5), 25);   // h = 1.5
  EXPECT_DOUBLE_EQ(quantile_of_sorted(sorted, 0.1), 13);   // h = 0.3
  EXPECT_THROW((void)quantile_of_sorted({}, 0.5), contract_error);
  EXPECT_THROW((void)quantile_of_sorted(sorted, 1.5), contract_error);
}

// ---- median CI ---------------------------------------------------------------------------

TEST(normal_two_sided_z, matches_tabulated_standard_normal_quantiles) {
  EXPECT_NEAR(normal_two_sided_z(0.95), 1.959963984540054, 1e-9);
  EXPECT_NEAR(normal_two_sided_z(0.99), 2.575829303548901, 1e-9);
  EXPECT_NEAR(normal_two_sided_z(0.90), 1.644853626951472, 1e-9);
  EXPECT_NEAR(normal_two_sided_z(0.999), 3.290526731491926, 1e-9);
  // P(|Z| < 1) = erf(1 / sqrt(2)).
  EXPECT_NEAR(normal_two_sided_z(std::erf(1 / std::sqrt(2.0))), 1.0, 1e-9);
  EXPECT_NEAR(normal_two_sided_z(0.5), 0.674489750196082, 1e-9);
}

TEST(normal_two_sided_z, rejects_confidence_outside_the_open_unit_interval) {
  EXPECT_THROW((void)normal_two_sided_z(0.0), contract_error);
  EXPECT_THROW((void)normal_two_sided_z(1.0), contract_error);
}

TEST(median_confidence_interval, uses_ranks_40_and_60_for_100_samples) {
  // n = 100, z = 1.95996: 50 -/+ 1.95996 * 10 / 2 = 40.2 and 59.8, rounded outwards to the
  // 1-based ranks 40 and 60. With samples 1..100 (shuffled), rank k holds the value k.
  std::vector<double> samples(100);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    samples[i] = static_cast<double>((i * 37) % 100 + 1);  // 37 is coprime to 100: a permutation
  }
  const interval ci95 = median_confidence_interval(samples, 0.95);
  EXPECT_DOUBLE_EQ(ci95.low, 40);
  EXPECT_DOUBLE_EQ(ci95.high, 60);
  EXPECT_DOUBLE_EQ(ci95.half_width(), 10);
}

TEST(median_confidence_interval, is_the_full_range_for_tiny_samples) {
  // n = 5: 2.5 -/+ 1.96 * sqrt(5) / 2 = 0.31 and 4.69 -> ranks clamp to 1 and 5.
  const std::vector<double> five = {4, 1, 5, 2, 3};
  const interval ci5 = median_confidence_interval(five);
  EXPECT_DOUBLE_EQ(ci5.low, 1);
  EXPECT_DOUBLE_EQ(ci5.high, 5);
  const std::vector<double> one = {7};
  const interval ci1 = median_confidence_interval(one);
  EXPECT_DOUBLE_EQ(ci1.low, 7);
  EXPECT_DOUBLE_EQ(ci1.high, 7);
}

TEST(median_confidence_interval, shrinks_like_one_over_sqrt_n) {
  // Grid over [0, 1]: n = 100 -> ranks 40, 60 -> half-width 10/100 = 0.1;
  // n = 400 -> 200 -/+ 19.6 -> ranks 180, 220 -> half-width 20/400 = 0.05.
  const interval small = median_confidence_interval(even_grid(100, 0.5, 0.5));
  const interval large = median_confidence_interval(even_grid(400, 0.5, 0.5));
  EXPECT_NEAR(small.half_width(), 0.1, 1e-12);
  EXPECT_NEAR(large.half_width(), 0.05, 1e-12);
}

TEST(median_confidence_interval, widens_with_the_confidence) {
  const std::vector<double> grid = even_grid(1000, 1.0, 0.1);
  EXPECT_LT(median_confidence_interval(grid, 0.80).half_width(),
            median_confidence_interval(grid, 0.99).half_width());
}

TEST(median_confidence_interval, throws_contract_error_on_empty_input) {
  EXPECT_THROW((void)median_confidence_interval({}), contract_error);
}

// ---- bootstrap ---------------------------------------------------------------------------

TEST(bootstrap_median_ratio, point_is_the_ratio_of_the_medians) {
  const std::vector<double> numerator = {1, 2, 3, 4, 100};  // median 3
  const std::vector<double> denominator = {1, 1.5, 2.5, 10};  // median (1.5 + 2.5) / 2 = 2
  const ratio_estimate r = bootstrap_median_ratio(numerator, denominator);
  EXPECT_DOUBLE_EQ(r.point, 1.5);
  EXPECT_LE(r.low, r.high);
}

TEST(bootstrap_median_ratio, identical_inputs_give_a_ci_containing_one) {
  std::mt19937_64 rng(42);
  const std::vector<double> samples = lognormal(500, 1e-5, 0.1, rng);
  const ratio_estimate r = bootstrap_median_ratio(samples, samples);
  EXPECT_DOUBLE_EQ(r.point, 1.0);
  EXPECT_LE(r.low, 1.0);
  EXPECT_GE(r.high, 1.0);
}

TEST(bootstrap_median_ratio, is_reproducible_for_a_fixed_seed) {
  std::mt19937_64 rng(7);
  const std::vector<double> a = lognormal(300, 2.0, 0.2, rng);
  const std::vector<double> b = lognormal(300, 1.0, 0.2, rng);
  const ratio_estimate first = bootstrap_median_ratio(a, b);
  const ratio_estimate second = bootstrap_median_ratio(a, b);
  EXPECT_EQ(first.low, second.low);
  EXPECT_EQ(first.high, second.high);
  const ratio_estimate other_seed = bootstrap_median_ratio(a, b, {.seed = 99});
  EXPECT_EQ(first.point, other_seed.point);
  EXPECT_NE(first.low, other_seed.low);
}

TEST(bootstrap_median_ratio, ci_covers_the_true_ratio_about_95_percent_of_the_time) {
  // Lognormal sides with medians 1.2 and 1.0: the true ratio of medians is 1.2.
  constexpr int trials = 300;
  constexpr double true_ratio = 1.2;
  int covered = 0;
  for (int trial = 0; trial < trials; ++trial) {
    std::mt19937_64 rng(1000 + static_cast<std::uint64_t>(trial));
    const std::vector<double> numerator = lognormal(101, true_ratio, 0.1, rng);
    const std::vector<double> denominator = lognormal(101, 1.0, 0.1, rng);
    const bootstrap_config config{.resamples = 1000, .confidence = 0.95,
                                  .seed = 77 + static_cast<std::uint64_t>(trial)};
    const ratio_estimate r = bootstrap_median_ratio(numerator, denominator, config);
    if (r.low <= true_ratio && true_ratio <= r.high) ++covered;
  }
  const double coverage = covered / static_cast<double>(trials);
  EXPECT_GE(coverage, 0.90);
  EXPECT_LE(coverage, 0.99);
}

TEST(bootstrap_median_ratio, narrows_as_the_samples_grow) {
  std::mt19937_64 rng(3);
  const std::vector<double> a_small = lognormal(100, 1.0, 0.1, rng);
  const std::vector<double> b_small = lognormal(100, 1.0, 0.1, rng);
  const std::vector<double> a_large = lognormal(10000, 1.0, 0.1, rng);
  const std::vector<double> b_large = lognormal(10000, 1.0, 0.1, rng);
  const ratio_estimate small = bootstrap_median_ratio(a_small, b_small);
  const ratio_estimate large = bootstrap_median_ratio(a_large, b_large);
  // 100x the samples: about 10x narrower; 3x is a loose bound.
  EXPECT_LT(3 * (large.high - large.low), small.high - small.low);
}

// A tail that differs while the medians agree: the median ratio sees nothing, the p99 ratio
// sees it with a CI that excludes 1 (the latency goal's verdict).
TEST(bootstrap_quantile_ratio, sees_a_tail_the_median_does_not) {
  std::vector<double> slow_tail(1000, 1.0);
  std::vector<double> short_tail(1000, 1.0);
  for (std::size_t i = 0; i < 50; ++i) {
    slow_tail[i * 20] = 3.0;
    short_tail[i * 20] = 1.5;
  }
  const ratio_estimate median = bootstrap_median_ratio(slow_tail, short_tail);
  EXPECT_DOUBLE_EQ(median.point, 1.0);
  const ratio_estimate p99 = bootstrap_quantile_ratio(slow_tail, short_tail, 0.99);
  EXPECT_DOUBLE_EQ(p99.point, 2.0);
  EXPECT_GT(p99.low, 1.0);
  EXPECT_LE(p99.low, p99.point);
  EXPECT_GE(p99.high, p99.point);
}

TEST(bootstrap_quantile_ratio, agrees_with_the_median_ratio_at_one_half) {
  std::mt19937_64 rng(7);
  const std::vector<double> a = lognormal(301, 1.0, 0.2, rng);
  const std::vector<double> b = lognormal(200, 0.8, 0.2, rng);
  EXPECT_NEAR(bootstrap_quantile_ratio(a, b, 0.5).point, bootstrap_median_ratio(a, b).point, 1e-12);
  EXPECT_THROW((void)bootstrap_quantile_ratio(a, b, 1.0), contract_error);
  EXPECT_THROW((void)bootstrap_quantile_ratio(a, {}, 0.99), contract_error);
}

TEST(bootstrap_quantile, brackets_the_sample_quantile) {
  std::mt19937_64 rng(11);
  std::vector<double> values = lognormal(500, 1.0, 0.3, rng);
  const ratio_estimate p99 = bootstrap_quantile(values, 0.99);
  std::sort(values.begin(), values.end());
  EXPECT_DOUBLE_EQ(p99.point, quantile_of_sorted(values, 0.99));
  EXPECT_LE(p99.low, p99.point);
  EXPECT_GE(p99.high, p99.point);
  EXPECT_LT(p99.low, p99.high);
}

// A recorded count's mean (accepted drafts a round): the point is the plain mean, and the CI
// is about the standard error wide (n = 1000 draws of 0..4: sd ~1.4, a 95% CI of ~+-0.09).
TEST(bootstrap_mean, gives_the_mean_and_a_standard_error_wide_interval) {
  std::vector<double> counts;
  for (int i = 0; i < 1000; ++i) counts.push_back(static_cast<double>((i * 7) % 5));
  const ratio_estimate mean = bootstrap_mean(counts);
  EXPECT_DOUBLE_EQ(mean.point, 2.0);
  EXPECT_LT(mean.low, 2.0);
  EXPECT_GT(mean.high, 2.0);
  EXPECT_NEAR(mean.high - mean.low, 2 * 1.96 * std::sqrt(2.0 / 1000), 0.03);
  EXPECT_THROW((void)bootstrap_mean({}), contract_error);
}

TEST(bootstrap_median_ratio, throws_contract_error_on_an_empty_side) {
  const std::vector<double> some = {1, 2, 3};
  EXPECT_THROW((void)bootstrap_median_ratio({}, some), contract_error);
  EXPECT_THROW((void)bootstrap_median_ratio(some, {}), contract_error);
}

// ---- stopping rule -----------------------------------------------------------------------

TEST(stopping_rule, keeps_going_below_the_minimum_sample_count) {
  stopping_rule rule(quick_config());
  const std::vector<double> samples(9, 1.0);
  EXPECT_EQ(rule.update(samples, 5.0), stop_reason::keep_going);
}

TEST(stopping_rule, keeps_going_below_the_minimum_time) {
  stopping_rule rule(quick_config());
  const std::vector<double> samples(1000, 1.0);
  EXPECT_EQ(rule.update(samples, 0.4), stop_reason::keep_going);
  EXPECT_EQ(rule.update(samples, 0.5), stop_reason::converged);
}

// Note [visit length]: a fast variant's own time meets the minimum; the pair's share ends it.
TEST(stopping_rule, meets_the_minimum_on_its_own_time_and_the_limit_on_the_time_charged) {
  stopping_rule waiting(quick_config());
  std::vector<double> noisy(40);
  for (std::size_t i = 0; i < noisy.size(); ++i) noisy[i] = 1.0 + 0.5 * static_cast<double>(i % 5);
  EXPECT_EQ(waiting.update(std::vector<double>(1000, 1.0), 0.1, 0.9), stop_reason::keep_going);  // own time below the minimum
  stopping_rule charged(quick_config());
  EXPECT_EQ(charged.update(noisy, 0.6, quick_config().max_time_s), stop_reason::timed_out);
  stopping_rule own(quick_config());
  EXPECT_EQ(own.update(noisy, 0.6, 0.7), stop_reason::keep_going);
}

// Values 0.999, 1.000, 1.001: the CI half-width is at most 0.001 of the median, below 0.005; it
// converges at least_samples_for_the_mean (Note [the mean known too]), not at the minimum of 10.
std::vector<double> low_noise(std::size_t n) {
  std::vector<double> samples(n);
  for (std::size_t i = 0; i < samples.size(); ++i) samples[i] = 1.0 + 0.001 * (static_cast<double>(i % 3) - 1);
  return samples;
}

TEST(stopping_rule, converges_on_a_low_noise_stream_once_it_has_enough_for_the_mean) {
  stopping_rule rule(quick_config());
  EXPECT_EQ(rule.update(low_noise(10), 0.6), stop_reason::keep_going);
  EXPECT_EQ(rule.update(low_noise(least_samples_for_the_mean - 1), 0.6), stop_reason::keep_going);
  EXPECT_EQ(rule.update(low_noise(least_samples_for_the_mean), 0.6), stop_reason::converged);
  EXPECT_LE(rule.last_rel_half_width(), 0.001 + 1e-12);
}

// A lucky streak: ten fast calls of a variant slow in a third of them read as points; it samples
// on (Note [the mean known too]).
TEST(stopping_rule, alike_samples_converge_only_from_enough_for_the_mean) {
  stopping_rule rule(quick_config());
  EXPECT_EQ(rule.update(std::vector<double>(10, 1.0), 0.6), stop_reason::keep_going);
  EXPECT_EQ(rule.update(std::vector<double>(least_samples_for_the_mean - 1, 1.0), 0.6), stop_reason::keep_going);
  EXPECT_EQ(rule.update(std::vector<double>(least_samples_for_the_mean, 1.0), 0.6), stop_reason::converged);
}

TEST(stopping_rule, converges_once_the_ci_of_a_noisy_stream_shrinks_enough) {
  // +-10% grid around 1.0; rank k holds 0.9 + 0.2 (k - 1/2) / n, so half-width = 0.1 (u - l) / n.
  // n = 125: ranks 51, 74 -> 0.0184; 250: 109, 141 -> 0.0128; 500: 228, 272 -> 0.0088;
  // 1000: 469, 531 -> 0.0062; 2000: 956, 1044 -> 0.0044 <= 0.005. Each doubling shrinks it by
  // about 0.7, below the 0.95 stall ratio.
  stopping_rule rule(quick_config());
  const double expected[] = {0.0184, 0.0128, 0.0088, 0.0062};
  std::size_t n = 125;
  for (double half_width : expected) {
    EXPECT_EQ(rule.update(even_grid(n, 1.0, 0.1), 1.0), stop_reason::keep_going) << n;
    EXPECT_NEAR(rule.last_rel_half_width(), half_width, 1e-9) << n;
    n *= 2;
  }
  EXPECT_EQ(rule.update(even_grid(2000, 1.0, 0.1), 1.0), stop_reason::converged);
  EXPECT_NEAR(rule.last_rel_half_width(), 0.0044, 1e-9);
}

TEST(stopping_rule, stalls_when_doubling_the_samples_does_not_shrink_the_ci) {
  // Bimodal 1.0 / 2.0: CI [1, 2] at every n, so the relative half-width never drops.
  stopping_rule rule(quick_config());
  EXPECT_EQ(rule.update(bimodal(10), 1.0), stop_reason::keep_going);  // checkpoint at n = 10
  EXPECT_NEAR(rule.last_rel_half_width(), 0.5 / 1.5, 1e-12);
  EXPECT_EQ(rule.update(bimodal(15), 1.0), stop_reason::keep_going);  // not doubled yet
  EXPECT_EQ(rule.update(bimodal(20), 1.0), stop_reason::stalled);
}

TEST(stopping_rule, moves_the_checkpoint_when_doubling_shrinks_the_ci) {
  // n = 10 grid: ranks 1, 9 -> 0.08; n = 20: ranks 5, 15 -> 0.05 (ratio 0.625): checkpoint -> 20.
  // Then the bimodal stream: n = 30 is below 2 * 20, so only n = 40 can declare the stall.
  stopping_rule rule(quick_config());
  EXPECT_EQ(rule.update(even_grid(10, 1.0, 0.1), 1.0), stop_reason::keep_going);
  EXPECT_NEAR(rule.last_rel_half_width(), 0.08, 1e-9);
  EXPECT_EQ(rule.update(even_grid(20, 1.0, 0.1), 1.0), stop_reason::keep_going);
  EXPECT_NEAR(rule.last_rel_half_width(), 0.05, 1e-9);
  EXPECT_EQ(rule.update(bimodal(30), 1.0), stop_reason::keep_going);
  EXPECT_EQ(rule.update(bimodal(40), 1.0), stop_reason::stalled);
}

TEST(stopping_rule, times_out_at_the_maximum_time) {
  stopping_rule rule(quick_config());
  EXPECT_EQ(rule.update(even_grid(20, 1.0, 0.1), 14.9), stop_reason::keep_going);
  EXPECT_EQ(rule.update(even_grid(30, 1.0, 0.1), 15.0), stop_reason::timed_out);
}

// A sibling's sampling time charged to the variant does not end it before its minimum samples.
TEST(stopping_rule, the_charged_time_does_not_cut_below_the_minimum_samples) {
  stopping_rule rule(quick_config());
  const std::vector<double> few = {1.0, 1.1, 0.9};
  EXPECT_EQ(rule.update(few, 0.6, quick_config().max_time_s), stop_reason::keep_going);
  const double ceiling = quick_config().max_time_s * quick_config().short_of_samples_factor;
  EXPECT_EQ(rule.update(few, ceiling, ceiling), stop_reason::timed_out);
}

// Note [long calls]: 1.3 s calls reach the minimum count past max_time_s, before the later ceiling.
TEST(stopping_rule, samples_on_past_the_maximum_time_to_the_minimum_count) {
  stopping_rule rule(quick_config());
  EXPECT_EQ(rule.update(std::vector<double>(9, 1.3), 16.0), stop_reason::keep_going);
  EXPECT_EQ(rule.update(even_grid(10, 1.3, 0.5), 17.3), stop_reason::timed_out);  // the minimum met, past max_time_s
}

// ... but one whose pace cannot reach the minimum by the later ceiling stops at max_time_s.
TEST(stopping_rule, a_variant_that_cannot_reach_the_minimum_stops_at_the_maximum_time) {
  stopping_rule hopeless(quick_config());
  EXPECT_EQ(hopeless.update(std::vector<double>(1, 15.0), 15.0), stop_reason::timed_out);  // 150 s to 10 samples
  stopping_rule on_pace(quick_config());
  EXPECT_EQ(on_pace.update(std::vector<double>(2, 7.5), 15.0), stop_reason::keep_going);  // 75 s, within 90
}

// Note [long calls]: visits that yield no sample (the device audit's) must not read as a slow
// pace: with the next sample's cost known, 4 s samples after 30 s of own time are on pace.
TEST(stopping_rule, the_pace_is_the_next_samples_cost_where_the_caller_knows_it) {
  const std::vector<double> two(2, 4.0);
  stopping_rule by_own_pace(quick_config());
  const double own = 30.0;  // two timed visits and several audited ones
  ASSERT_GT(own / 2 * 10, quick_config().max_time_s * quick_config().short_of_samples_factor);
  EXPECT_EQ(by_own_pace.update(two, own, own), stop_reason::timed_out);
  stopping_rule by_next_cost(quick_config());
  EXPECT_EQ(by_next_cost.update(two, own, own, 5.0), stop_reason::keep_going);  // 30 + 8 x 5 = 70 s, within 90
  stopping_rule out_of_reach(quick_config());
  EXPECT_EQ(out_of_reach.update(two, own, own, 10.0), stop_reason::timed_out);  // 30 + 80 s
}

TEST(stopping_rule, times_out_even_below_the_minimum_samples) {
  stopping_rule rule(quick_config());
  const std::vector<double> few = {1.0, 1.1, 0.9};
  EXPECT_EQ(rule.update(few, quick_config().max_time_s * quick_config().short_of_samples_factor), stop_reason::timed_out);
}

// Note [the mean known too]: three quarters of the calls at 1.0 and a quarter at 4.5 (a cost the
// median hides): the median's CI is a point from the start, so the rule used to stop at once; it
// samples on while the trimmed mean's interval is wide, each doubling shrinking it (no stall),
// and converges once that is within 5%.
TEST(stopping_rule, samples_on_while_the_mean_of_a_two_mode_stream_is_unknown) {
  const auto two_modes = [](std::size_t n) {
    std::vector<double> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = i % 4 == 3 ? 4.5 : 1.0;
    return values;
  };
  stopping_rule rule(quick_config());
  EXPECT_EQ(rule.update(two_modes(30), 1.0), stop_reason::keep_going);
  EXPECT_EQ(rule.last_rel_half_width(), 0.0);
  EXPECT_GT(rule.last_mean_rel_half_width(), 0.2);
  std::size_t n = 30;
  stop_reason reason = stop_reason::keep_going;
  while (reason == stop_reason::keep_going && n < 8000) {
    n *= 2;
    reason = rule.update(two_modes(n), 1.0);
  }
  EXPECT_EQ(reason, stop_reason::converged) << n;
  EXPECT_LE(rule.last_mean_rel_half_width(), 0.05);
  EXPECT_GT(n, 960u);  // kept: a spread of ~1.43 about ~1.74, so 1.96 x 0.82 / sqrt(0.95 n) <= 5% needs n > 1080
}

// A stream whose spread is even meets the mean's 5% long before the median's 0.5%: the mean
// changes nothing there (a grid of +-10%, as in converges_once_the_ci_of_a_noisy_stream_shrinks_enough).
TEST(stopping_rule, the_mean_holds_back_no_stream_of_even_spread) {
  stopping_rule rule(quick_config());
  EXPECT_EQ(rule.update(even_grid(2000, 1.0, 0.1), 1.0), stop_reason::converged);
  EXPECT_LT(rule.last_mean_rel_half_width(), 0.005);
}

TEST(stopping_rule, prefers_converged_over_timed_out) {
  stopping_rule rule(quick_config());
  const std::vector<double> flat(100, 1.0);
  EXPECT_EQ(rule.update(flat, 20.0), stop_reason::converged);
}

TEST(stopping_rule, a_decision_is_sticky) {
  const std::vector<double> flat(100, 1.0);
  stopping_rule converged(quick_config());
  EXPECT_EQ(converged.update(flat, 1.0), stop_reason::converged);
  EXPECT_EQ(converged.update(bimodal(1000), 1.0), stop_reason::converged);
  EXPECT_EQ(converged.update(bimodal(1000), 100.0), stop_reason::converged);

  stopping_rule timed_out(quick_config());
  EXPECT_EQ(timed_out.update(bimodal(10), 20.0), stop_reason::timed_out);
  EXPECT_EQ(timed_out.update(flat, 1.0), stop_reason::timed_out);

  stopping_rule stalled(quick_config());
  EXPECT_EQ(stalled.update(bimodal(10), 1.0), stop_reason::keep_going);
  EXPECT_EQ(stalled.update(bimodal(20), 1.0), stop_reason::stalled);
  EXPECT_EQ(stalled.update(flat, 1.0), stop_reason::stalled);
}

TEST(stop_reason_name, names_every_reason) {
  EXPECT_EQ(stop_reason_name(stop_reason::keep_going), "keep-going");
  EXPECT_EQ(stop_reason_name(stop_reason::converged), "converged");
  EXPECT_EQ(stop_reason_name(stop_reason::stalled), "stalled");
  EXPECT_EQ(stop_reason_name(stop_reason::timed_out), "timed-out");
}

// ---- verdict -----------------------------------------------------------------------------

TEST(noise_floor_of, is_the_farthest_reach_of_the_ci_from_one) {
  EXPECT_NEAR(noise_floor_of(ci(0.97, 1.04)), 0.04, 1e-12);
  EXPECT_NEAR(noise_floor_of(ci(0.95, 1.01)), 0.05, 1e-12);
  EXPECT_NEAR(noise_floor_of(ci(1.01, 1.03)), 0.03, 1e-12);  // 1 - low < 0 does not count
  EXPECT_DOUBLE_EQ(noise_floor_of(ci(1.0, 1.0)), 0.0);
}

TEST(decide, faster_needs_the_ci_to_clear_the_noise_floor) {
  // noise floor 0.05: faster iff low > 1.05.
  EXPECT_EQ(decide(ci(1.051, 1.2), 0.05), verdict::faster);
  EXPECT_NE(decide(ci(1.049, 1.2), 0.05), verdict::faster);
  EXPECT_EQ(decide(ci(1.5, 1.6), 0.0), verdict::faster);
}

TEST(decide, slower_needs_the_ci_below_the_reciprocal_noise_floor) {
  // noise floor 0.05: slower iff high < 1 / 1.05 = 0.95238...
  EXPECT_EQ(decide(ci(0.80, 0.952), 0.05), verdict::slower);
  EXPECT_NE(decide(ci(0.80, 0.953), 0.05), verdict::slower);
}

TEST(decision_reason, says_why_a_ci_was_not_called_faster_with_the_floor_and_the_bands) {
  // The exec tutorial's 1.088x [1.048, 1.130] with a twin 9.8% apart: no-difference, with its band.
  const auto equivalent = decision_reason(verdict::no_difference, ci(1.048, 1.130), 0.098);
  EXPECT_NE(equivalent.find("[1.048, 1.130]"), std::string::npos) << equivalent;
  EXPECT_NE(equivalent.find("9.8%"), std::string::npos) << equivalent;
  EXPECT_NE(equivalent.find("the baseline against its twin"), std::string::npos) << equivalent;
  const auto open = decision_reason(verdict::inconclusive, ci(0.99, 1.30), 0.002);
  EXPECT_NE(open.find("1.0% (the minimum effect"), std::string::npos) << open;
  EXPECT_NE(open.find("--max-time"), std::string::npos) << open;
  EXPECT_EQ(decision_reason(verdict::faster, ci(1.5, 1.6), 0.0), "");
  EXPECT_EQ(decision_reason(verdict::slower, ci(0.5, 0.6), 0.0), "");
}

TEST(decide, no_difference_inside_the_equivalence_band) {
  // Floor 0.005: m = max(0.02, 0.01) = 0.02, band [1/1.02 = 0.98039, 1.02].
  EXPECT_EQ(decide(ci(0.99, 1.01), 0.005), verdict::no_difference);
  EXPECT_EQ(decide(ci(0.981, 1.019), 0.005), verdict::no_difference);
  EXPECT_EQ(decide(ci(0.980, 1.01), 0.005), verdict::inconclusive);  // 0.980 < 0.98039
  EXPECT_EQ(decide(ci(0.99, 1.021), 0.005), verdict::inconclusive);
}

TEST(decide, the_equivalence_band_widens_to_twice_the_noise_floor) {
  // Floor 0.03: m = max(0.02, 0.06) = 0.06, band [1/1.06 = 0.9434, 1.06].
  EXPECT_EQ(decide(ci(0.95, 1.05), 0.03), verdict::no_difference);
  EXPECT_EQ(decide(ci(0.95, 1.05), 0.005), verdict::inconclusive);  // band only [0.98, 1.02]
  EXPECT_EQ(decide(ci(0.94, 1.05), 0.03), verdict::inconclusive);
}

TEST(decide, a_ci_clearing_one_but_not_the_noise_floor_is_not_faster) {
  // Floor 0.05, band m = 0.1 -> [0.909, 1.1]: [1.03, 1.08] clears 1 but sits inside the band.
  EXPECT_EQ(decide(ci(1.03, 1.08), 0.05), verdict::no_difference);
  // Reaching past the band as well: neither faster nor equivalent.
  EXPECT_EQ(decide(ci(1.03, 1.12), 0.05), verdict::inconclusive);
}

TEST(decide, a_ci_too_wide_for_any_band_is_inconclusive) {
  EXPECT_EQ(decide(ci(0.7, 1.4), 0.01), verdict::inconclusive);
}

// Note [widest equivalence]: a twin 277% apart makes the band [0.15, 6.5]; "no-difference" there
// says nothing, so the verdict is inconclusive and the reason names the cap.
TEST(decide, a_floor_too_wide_for_a_useful_band_is_inconclusive_not_no_difference) {
  EXPECT_EQ(decide(ci(0.9, 1.2), 2.77), verdict::inconclusive);
  EXPECT_EQ(decide(ci(0.99, 1.01), 0.13), verdict::inconclusive);   // band +-26%: over the cap
  EXPECT_EQ(decide(ci(0.99, 1.01), 0.12), verdict::no_difference);  // band +-24%
  EXPECT_EQ(decide(ci(4.0, 4.2), 2.77), verdict::faster);           // clearing the floor still decides
  const auto why = decision_reason(verdict::inconclusive, ci(0.9, 1.2), 2.77);
  EXPECT_NE(why.find("too wide to claim no difference"), std::string::npos) << why;
}

TEST(verdict_name, names_every_verdict) {
  EXPECT_EQ(verdict_name(verdict::faster), "faster");
  EXPECT_EQ(verdict_name(verdict::slower), "slower");
  EXPECT_EQ(verdict_name(verdict::no_difference), "no-difference");
  EXPECT_EQ(verdict_name(verdict::inconclusive), "inconclusive");
}

}  // namespace
}  // namespace aisp::stats

namespace {

TEST(decide, a_systematic_offset_below_the_minimum_effect_is_no_difference) {
  using aisp::stats::decide;
  using aisp::stats::verdict;
  // Measured on the H100: identical kernels in two processes, 0.38% apart with a +-0.035% CI.
  EXPECT_EQ(decide({0.9962, 0.9958, 0.9965}, 0.0021), verdict::no_difference);
  EXPECT_EQ(decide({1.0035, 1.0032, 1.0038}, 0.0029), verdict::no_difference);
  // 1.5% with a tight CI clears the 1% minimum effect.
  EXPECT_EQ(decide({1.015, 1.012, 1.018}, 0.002), verdict::faster);
  aisp::stats::verdict_config strict;
  strict.min_effect = 0;
  EXPECT_EQ(decide({1.0035, 1.0032, 1.0038}, 0.0029, strict), verdict::faster);
}

}  // namespace

namespace {

// Note [disturbed noise floor]: the issue-16 demonstration (twin 43% apart, tight CIs).
TEST(disturbed_noise_reason, a_floor_far_wider_than_the_cis_makes_the_run_untrusted) {
  const aisp::stats::ratio_estimate twin{1.425, 1.42, 1.43};
  const aisp::stats::ratio_estimate speedup{1.64, 1.62, 1.66};
  const auto reason = aisp::stats::disturbed_noise_reason(twin, speedup);
  EXPECT_NE(reason.find("43%"), std::string::npos) << reason;
  EXPECT_NE(reason.find("not measured alike"), std::string::npos) << reason;
}

TEST(disturbed_noise_reason, a_much_slower_twin_is_as_disturbed_as_a_much_faster_one) {
  // cheats:s8 in a CI run: the twin 4x slower, CIs +-21%. Read linearly its floor is 80%
  // (1 - low), under 4x the half-widths, and the cheat passed; in log space it is 5x apart.
  const auto slower = aisp::stats::disturbed_noise_reason({0.24, 0.20, 0.30}, {0.36, 0.32, 0.45});
  EXPECT_NE(slower.find("not measured alike"), std::string::npos) << slower;
  EXPECT_NE(slower.find("400%"), std::string::npos) << slower;  // 1 / 0.20 - 1
  const auto faster = aisp::stats::disturbed_noise_reason({4.1, 3.3, 5.0}, {0.36, 0.32, 0.45});
  EXPECT_NE(faster.find("not measured alike"), std::string::npos) << faster;
}

TEST(disturbed_noise_reason, an_honest_floor_or_wide_cis_leave_the_verdict_to_the_ci) {
  // A quiet twin: floor 0.5%.
  EXPECT_EQ(aisp::stats::disturbed_noise_reason({1.002, 0.995, 1.005}, {1.64, 1.62, 1.66}), "");
  // A floor of 12% with CIs of +-5%: noisy, not disturbed; decide() already widens its bands.
  EXPECT_EQ(aisp::stats::disturbed_noise_reason({1.05, 0.98, 1.12}, {1.5, 1.43, 1.58}), "");
  // A floor of 30% but a speedup CI of +-10%: within 4x, left to decide().
  EXPECT_EQ(aisp::stats::disturbed_noise_reason({1.3, 1.28, 1.32}, {2.0, 1.8, 2.2}), "");
}

TEST(disturbed_noise_reason, an_effect_beyond_the_disturbance_squared_stands) {
  // A twin 15% apart with tight CIs, and a 300x speedup: no disturbance of that size explains it.
  EXPECT_EQ(aisp::stats::disturbed_noise_reason({1.15, 1.14, 1.16}, {300, 290, 310}), "");
  EXPECT_EQ(aisp::stats::disturbed_noise_reason({1.15, 1.14, 1.16}, {0.004, 0.0039, 0.0041}), "");
  // 1.16^2 = 1.35: a speedup whose CI reaches under it stays untrusted.
  EXPECT_NE(aisp::stats::disturbed_noise_reason({1.15, 1.14, 1.16}, {1.3, 1.29, 1.31}), "");
}

}  // namespace

TEST(median_of, is_the_middle_element_or_zero_when_empty) {
  EXPECT_DOUBLE_EQ(aisp::stats::median_of({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(aisp::stats::median_of({4, 1, 3, 2}), 3);
  EXPECT_DOUBLE_EQ(aisp::stats::median_of({}), 0);
}
