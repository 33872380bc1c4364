#include "stats/verdict.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "aisp/check.hpp"

namespace aisp::stats {

std::string_view verdict_name(verdict v) {
  switch (v) {
    case verdict::faster: return "faster";
    case verdict::slower: return "slower";
    case verdict::no_difference: return "no-difference";
    case verdict::inconclusive: return "inconclusive";
  }
  return "unknown";
}

double noise_floor_of(const ratio_estimate& baseline_vs_itself) {
  return std::max({baseline_vs_itself.high - 1, 1 - baseline_vs_itself.low, 0.0});
}

// A floor over 10% that is also over 4x the wider of the two CIs' relative half-widths.
std::string disturbed_noise_reason(const ratio_estimate& baseline_vs_itself, const ratio_estimate& speedup) {
  const double floor = noise_floor_of(baseline_vs_itself);
  const auto half_width = [](const ratio_estimate& r) { return r.point > 0 ? (r.high - r.low) / (2 * r.point) : 0.0; };
  const double widest = std::max(half_width(baseline_vs_itself), half_width(speedup));
  if (floor <= 0.10 || floor <= 4 * widest) return "";
  return fmt::format("the baseline and its twin (the same code in two workers) differ by {:.0f}% while the CIs are "
                     "+-{:.1f}%: the workers were not measured alike, so no speedup of this run is trusted",
                     100 * floor, 100 * widest);
}

verdict decide(const ratio_estimate& speedup, double measured_noise_floor, const verdict_config& config) {
  AISP_EXPECTS(measured_noise_floor >= 0, "the noise floor cannot be negative");
  AISP_EXPECTS(config.min_effect >= 0, "the minimum effect cannot be negative");
  const double noise_floor = std::max(measured_noise_floor, config.min_effect);
  AISP_EXPECTS(config.equivalence_margin >= 0, "the equivalence margin cannot be negative");
  AISP_EXPECTS(speedup.low <= speedup.high, "a ratio CI needs low <= high");

  if (speedup.low > 1 + noise_floor) return verdict::faster;
  if (speedup.high < 1 / (1 + noise_floor)) return verdict::slower;
  // The equivalence band is never narrower than twice the noise floor: claiming "no difference"
  // more finely than the measurement can resolve would be a guess.
  const double margin = std::max(config.equivalence_margin, 2 * noise_floor);
  if (speedup.low >= 1 / (1 + margin) && speedup.high <= 1 + margin) return verdict::no_difference;
  return verdict::inconclusive;
}

}  // namespace aisp::stats
