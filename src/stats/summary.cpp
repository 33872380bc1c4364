#include "stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "aisp/check.hpp"
#include "stats/median_ci.hpp"

namespace aisp::stats {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

double quantile_of_sorted(std::span<const double> sorted, double q) {
  AISP_EXPECTS(!sorted.empty(), "quantile of an empty sample");
  AISP_EXPECTS(q >= 0.0 && q <= 1.0, "quantile level must lie in [0, 1]");
  // Type 7: h = (n - 1) q on 0-based ranks, interpolated between floor(h) and floor(h) + 1.
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const double floor_h = std::floor(h);
  const auto below = static_cast<std::size_t>(floor_h);
  if (below + 1 >= sorted.size()) return sorted[sorted.size() - 1];
  return sorted[below] + (h - floor_h) * (sorted[below + 1] - sorted[below]);
}

sample_summary summarize(std::span<const double> samples) {
  AISP_EXPECTS(!samples.empty(), "summarize needs at least one sample");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());

  sample_summary s;
  s.count = sorted.size();
  s.median = quantile_of_sorted(sorted, 0.5);
  s.q1 = quantile_of_sorted(sorted, 0.25);
  s.q3 = quantile_of_sorted(sorted, 0.75);
  s.iqr = s.q3 - s.q1;
  s.min = sorted.front();
  s.max = sorted.back();

  const auto n = static_cast<double>(s.count);
  double sum = 0;
  for (double x : sorted) sum += x;
  s.mean = sum / n;
  // Sample (n - 1) variance: these are draws from the kernel's time distribution.
  double squares = 0;
  for (double x : sorted) squares += (x - s.mean) * (x - s.mean);
  const double stddev = s.count > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  s.cv = s.mean != 0 ? stddev / s.mean : 0.0;
  s.robust_cv = s.median != 0 ? (s.iqr / 1.349) / s.median : 0.0;

  const double low_fence = s.q1 - 1.5 * s.iqr;
  const double high_fence = s.q3 + 1.5 * s.iqr;
  for (double x : sorted) {
    if (x < low_fence || x > high_fence) ++s.outliers;
  }
  return s;
}

std::size_t trimmed_mean_kept(std::size_t n) {
  constexpr double trimmed_share = 0.05;
  return std::max<std::size_t>(1, n - static_cast<std::size_t>(trimmed_share * static_cast<double>(n)));
}

double trimmed_mean_of_sorted(std::span<const double> sorted) {
  AISP_EXPECTS(!sorted.empty(), "a trimmed mean needs a sample");
  const auto kept = trimmed_mean_kept(sorted.size());
  double sum = 0;
  for (std::size_t i = 0; i < kept; ++i) sum += sorted[i];
  return sum / static_cast<double>(kept);
}

double trimmed_mean_rel_half_width(std::span<const double> sorted, double confidence) {
  if (sorted.size() < 2) return 0;
  const auto kept = trimmed_mean_kept(sorted.size());  // all of 2-19 samples: at least 2 here
  const double mean = trimmed_mean_of_sorted(sorted);
  double squares = 0;
  for (std::size_t i = 0; i < kept; ++i) squares += (sorted[i] - mean) * (sorted[i] - mean);
  const double standard_error = std::sqrt(squares / static_cast<double>(kept - 1) / static_cast<double>(kept));
  return mean > 0 ? normal_two_sided_z(confidence) * standard_error / mean : 0;
}

}  // namespace aisp::stats
