// Note [goals]: what a pair pursues (pair::pursue) decides what its verdict compares and what it
// reports. speed and memory: the median call, as always. latency: every sample is one call, the
// verdict is on the p99 (the baseline's p99 over the variant's, a bootstrap CI, the noise floor
// from the baseline and its twin at the same percentile), and each variant reports p50 and p99
// with CIs; a p99 needs at least 100 samples a variant, so the stopping rule asks for them.
// throughput: the verdict is the median's (a ratio of medians is the ratio of throughputs), and
// each variant reports calls per second with the CI of its median turned over, and items per
// second where the pair declares what a call delivers (Note [items]: tokens, requests).
//
// Note [judged by a recorded metric]
// A serving pair whose point is a latency tail (chunked prefill: the time per output token at
// p99) is judged on the values run() records (pair::judge_by_recorded), pooled over the timed
// calls: the baseline's quantile over the variant's, with its bootstrap CI, against the noise
// floor of the baseline's twin at the same quantile, and with the same bands as every verdict.
// The statistic is named "<metric> p<q>"; fewer than 100 values a variant is inconclusive.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "aisp/pair.hpp"
#include "results/pair_result.hpp"
#include "stats/bootstrap.hpp"

namespace aisp {

inline constexpr std::size_t latency_min_samples = 100;

struct verdict_statistic {
  double quantile = 0.5;
  std::string name = "median";
  std::string recorded_metric;  // Note [judged by a recorded metric]: "" for the call time
};

[[nodiscard]] std::string goal_name(goal what);
[[nodiscard]] verdict_statistic statistic_for(const pair& declared);

// The ratio the verdict reads: `numerator`'s statistic over `denominator`'s, with its CI.
[[nodiscard]] stats::ratio_estimate statistic_ratio(const verdict_statistic& statistic, std::span<const double> numerator,
                                                    std::span<const double> denominator, const stats::bootstrap_config& config);

// Fills `variant.goal_metrics` from its per-call `durations` at `work` (null for speed and memory
// pairs); a throughput pair that declares items per call also gets their rate.
void record_goal_metrics(const pair& declared, const workload& work, std::span<const double> durations, variant_result& variant,
                         const stats::bootstrap_config& config);

// Note [recorded metrics]: each variant's recorded values, their p50 and p99 with bootstrap CIs
// into goal_metrics.recorded.<metric>, and for every variant but the baseline the baseline's p99
// over the variant's (p99_ratio: above 1, the variant's tail is shorter).
void record_recorded_metrics(std::span<variant_result* const> variants, const variant_result& baseline,
                             const stats::bootstrap_config& config);

}  // namespace aisp
