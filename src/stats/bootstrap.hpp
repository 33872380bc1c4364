// Bootstrap confidence interval of a ratio of medians (the speedup).
#pragma once

#include <cstdint>
#include <span>

namespace aisp::stats {

struct ratio_estimate {
  double point = 0;  // median(numerator) / median(denominator), on all samples
  double low = 0;    // percentile bootstrap bounds
  double high = 0;
};

struct bootstrap_config {
  int resamples = 2000;
  double confidence = 0.95;
  std::uint64_t seed = 0x5eed;
};

// Resamples each side independently (the variants ran in separate processes), so the ratio
// CI carries both sides' uncertainty. Throws contract_error on an empty side.
// speedup = bootstrap_median_ratio(baseline_times, optimized_times).
[[nodiscard]] ratio_estimate bootstrap_median_ratio(std::span<const double> numerator,
                                                    std::span<const double> denominator,
                                                    const bootstrap_config& config = {});

// The same for a quantile q in (0, 1) other than the median: the latency goal's verdict on the
// declared percentile (p99 of baseline calls over p99 of the variant's).
[[nodiscard]] ratio_estimate bootstrap_quantile_ratio(std::span<const double> numerator,
                                                      std::span<const double> denominator, double q,
                                                      const bootstrap_config& config = {});

// One side's quantile q with its percentile-bootstrap CI (a variant's p50 or p99 latency).
[[nodiscard]] ratio_estimate bootstrap_quantile(std::span<const double> samples, double q,
                                                const bootstrap_config& config = {});

// One side's mean with its percentile-bootstrap CI (a recorded count's average, e.g. the drafts
// a speculative round accepts).
[[nodiscard]] ratio_estimate bootstrap_mean(std::span<const double> samples, const bootstrap_config& config = {});

}  // namespace aisp::stats
