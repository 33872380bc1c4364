// Distribution-free confidence interval of the median from order statistics.
// Note [median CI]: the number of samples below the true median is Binomial(n, 1/2), so the
// order statistics at n/2 -/+ z*sqrt(n)/2 bracket it with the requested confidence. It shrinks
// like 1/sqrt(n) whatever the spread of the samples: this is what the stopping rule watches.
#pragma once

#include <span>

namespace aisp::stats {

struct interval {
  double low = 0;
  double high = 0;
  [[nodiscard]] double half_width() const { return (high - low) / 2; }
};

// Throws contract_error on an empty span. With too few samples for the confidence, the
// interval is the full range [min, max].
[[nodiscard]] interval median_confidence_interval(std::span<const double> samples,
                                                  double confidence = 0.95);

// The two-sided standard-normal quantile for a confidence level (0.95 -> 1.95996...).
[[nodiscard]] double normal_two_sided_z(double confidence);

}  // namespace aisp::stats
