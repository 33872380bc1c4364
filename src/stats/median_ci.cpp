#include "stats/median_ci.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "aisp/check.hpp"

namespace aisp::stats {
namespace {

// Acklam's rational approximation of the inverse standard-normal CDF (relative error 1.15e-9),
// polished by one Halley step on erfc, which brings it to machine precision.
double inverse_normal_cdf(double p) {
  constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                          1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                          6.680131188771972e+01,  -1.328068155288572e+01};
  constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                          -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                          3.754408661907416e+00};
  constexpr double p_low = 0.02425;

  double x = 0;
  if (p < p_low) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - p_low) {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

}  // namespace

double normal_two_sided_z(double confidence) {
  AISP_EXPECTS(confidence > 0.0 && confidence < 1.0, "confidence must lie in (0, 1)");
  return inverse_normal_cdf(1 - (1 - confidence) / 2);
}

interval median_confidence_interval(std::span<const double> samples, double confidence) {
  AISP_EXPECTS(!samples.empty(), "median CI needs at least one sample");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());

  // Note [median CI]: 1-based ranks l = floor(n/2 - z sqrt(n)/2), u = ceil(n/2 + z sqrt(n)/2),
  // the normal approximation of Binomial(n, 1/2), rounded outwards so that the coverage errs
  // on the conservative side. Clamping to [1, n] gives the full range for tiny n.
  const auto n = static_cast<double>(sorted.size());
  const double reach = normal_two_sided_z(confidence) * std::sqrt(n) / 2;
  const double low_rank = std::clamp(std::floor(n / 2 - reach), 1.0, n);
  const double high_rank = std::clamp(std::ceil(n / 2 + reach), 1.0, n);
  return {sorted[static_cast<std::size_t>(low_rank) - 1],
          sorted[static_cast<std::size_t>(high_rank) - 1]};
}

}  // namespace aisp::stats
