#include "stats/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <utility>
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
  [[nodiscard]] double quantile(double q) const { return quantile_of_sorted(sorted_, q); }

  // Median of one resample drawn with replacement.
  double resample_median(std::mt19937_64& rng) {
    draw(rng);
    const std::size_t n = sorted_.size();
    // 0-based positions of the middle order statistics of the resample (equal for odd n).
    const auto [lower, upper] = order_statistics((n - 1) / 2, n / 2);
    return (lower + upper) / 2;
  }

  // The mean of one resample.
  double resample_mean(std::mt19937_64& rng) {
    draw(rng);
    double sum = 0;
    for (std::size_t rank = 0; rank < sorted_.size(); ++rank) sum += counts_[rank] * sorted_[rank];
    return sum / static_cast<double>(sorted_.size());
  }

  // The type-7 quantile q of one resample (quantile_of_sorted's definition).
  double resample_quantile(std::mt19937_64& rng, double q) {
    draw(rng);
    const double h = static_cast<double>(sorted_.size() - 1) * q;
    const double floor_h = std::floor(h);
    const auto below = static_cast<std::size_t>(floor_h);
    const auto [lower, upper] = order_statistics(below, std::min(below + 1, sorted_.size() - 1));
    return lower + (h - floor_h) * (upper - lower);
  }

 private:
  // Counts per rank of one resample drawn with replacement. Each 64-bit draw gives two 32-bit
  // indices by multiply-shift; the bias, at most n / 2^32, is far below the bootstrap's own Monte
  // Carlo error, and it halves the generator calls in the hot loop.
  void draw(std::mt19937_64& rng) {
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
  }

  // The resample's values at 0-based sorted positions lower_pos <= upper_pos, by a running sum
  // over the counts.
  [[nodiscard]] std::pair<double, double> order_statistics(std::size_t lower_pos, std::size_t upper_pos) const {
    std::size_t rank = 0;
    std::size_t seen = counts_[0];
    while (seen <= lower_pos) seen += counts_[++rank];
    const double lower = sorted_[rank];
    while (seen <= upper_pos) seen += counts_[++rank];
    return {lower, sorted_[rank]};
  }

  std::vector<double> sorted_;
  std::vector<std::uint32_t> counts_;
};

void expect_valid(std::span<const double> numerator, std::span<const double> denominator, const bootstrap_config& config) {
  AISP_EXPECTS(!numerator.empty() && !denominator.empty(), "bootstrap needs samples on both sides");
  AISP_EXPECTS(numerator.size() <= 0xffffffffu && denominator.size() <= 0xffffffffu,
               "bootstrap supports at most 2^32 - 1 samples per side");
  AISP_EXPECTS(config.resamples >= 1, "bootstrap needs at least one resample");
  AISP_EXPECTS(config.confidence > 0.0 && config.confidence < 1.0,
               "confidence must lie in (0, 1)");
}

// The estimate's bounds: the percentile interval of the resampled statistics.
void set_bounds(ratio_estimate& estimate, std::vector<double>& resampled, double confidence) {
  std::sort(resampled.begin(), resampled.end());
  const double tail = (1 - confidence) / 2;
  estimate.low = quantile_of_sorted(resampled, tail);
  estimate.high = quantile_of_sorted(resampled, 1 - tail);
}

// The statistic of config.resamples resamples of one side, and its percentile interval.
template <class Statistic>
ratio_estimate resampled_value(resampler& side, double point, const bootstrap_config& config, Statistic statistic) {
  ratio_estimate estimate;
  estimate.point = point;
  std::mt19937_64 rng(config.seed);
  std::vector<double> values(static_cast<std::size_t>(config.resamples));
  for (double& value : values) value = statistic(side, rng);
  set_bounds(estimate, values, config.confidence);
  return estimate;
}

// The same for the ratio of two sides' statistics, each resampled independently (the numerator
// drawn first, so that a seed gives the same interval it always gave).
template <class Statistic>
ratio_estimate resampled_ratio(resampler& num, resampler& den, double point, const bootstrap_config& config, Statistic statistic) {
  ratio_estimate estimate;
  estimate.point = point;
  std::mt19937_64 rng(config.seed);
  std::vector<double> ratios(static_cast<std::size_t>(config.resamples));
  for (double& ratio : ratios) {
    const double of_numerator = statistic(num, rng);
    ratio = of_numerator / statistic(den, rng);
  }
  set_bounds(estimate, ratios, config.confidence);
  return estimate;
}

double mean_of(std::span<const double> values) {
  double sum = 0;
  for (const double value : values) sum += value;
  return sum / static_cast<double>(values.size());
}

}  // namespace

ratio_estimate bootstrap_quantile_ratio(std::span<const double> numerator, std::span<const double> denominator, double q,
                                        const bootstrap_config& config) {
  expect_valid(numerator, denominator, config);
  AISP_EXPECTS(q > 0.0 && q < 1.0, "the quantile level must lie in (0, 1)");
  resampler num(numerator);
  resampler den(denominator);
  AISP_EXPECTS(den.quantile(q) > 0, "the denominator's quantile must be positive");
  return resampled_ratio(num, den, num.quantile(q) / den.quantile(q), config,
                         [q](resampler& side, std::mt19937_64& rng) { return side.resample_quantile(rng, q); });
}

ratio_estimate bootstrap_quantile(std::span<const double> samples, double q, const bootstrap_config& config) {
  expect_valid(samples, samples, config);
  AISP_EXPECTS(q > 0.0 && q < 1.0, "the quantile level must lie in (0, 1)");
  resampler side(samples);
  return resampled_value(side, side.quantile(q), config,
                         [q](resampler& one, std::mt19937_64& rng) { return one.resample_quantile(rng, q); });
}

ratio_estimate bootstrap_mean(std::span<const double> samples, const bootstrap_config& config) {
  expect_valid(samples, samples, config);
  resampler side(samples);
  return resampled_value(side, mean_of(samples), config,
                         [](resampler& one, std::mt19937_64& rng) { return one.resample_mean(rng); });
}

ratio_estimate bootstrap_median_ratio(std::span<const double> numerator, std::span<const double> denominator,
                                      const bootstrap_config& config) {
  expect_valid(numerator, denominator, config);
  resampler num(numerator);
  resampler den(denominator);
  AISP_EXPECTS(den.median() > 0, "the denominator's median must be positive");
  return resampled_ratio(num, den, num.median() / den.median(), config,
                         [](resampler& side, std::mt19937_64& rng) { return side.resample_median(rng); });
}

}  // namespace aisp::stats
