#include "stats/verdict.hpp"

#include <algorithm>
#include <cmath>

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

// A floor over 10% whose CI extreme, in log space, is also over 4x the wider of the two CIs' log
// half-widths. Log space, because a twin k times slower and one k times faster are the same
// disturbance: read linearly, a slower twin's floor (1 - low) stays under 100% however slow it
// is, and a 4x slower twin (floor 80%, CIs +-21%) passed as honest in a CI run (2026-11-27).
std::string disturbed_noise_reason(const ratio_estimate& baseline_vs_itself, const ratio_estimate& speedup) {
  const double floor = noise_floor_of(baseline_vs_itself);
  if (floor <= 0.10 || baseline_vs_itself.low <= 0 || baseline_vs_itself.high <= 0) return "";
  const auto log_half_width = [](const ratio_estimate& r) {
    return r.low > 0 && r.high > 0 ? (std::log(r.high) - std::log(r.low)) / 2 : 0.0;
  };
  const double disparity = std::max(std::log(baseline_vs_itself.high), -std::log(baseline_vs_itself.low));
  const double widest = std::max(log_half_width(baseline_vs_itself), log_half_width(speedup));
  if (disparity <= 4 * widest) return "";
  // An effect beyond the disturbance squared (one worker sped up by it and the other slowed by
  // it) stands however the workers differed: a Python loop against numpy on a loaded CI machine
  // (2026-11-28) is not made inconclusive by a twin 15% apart.
  if (speedup.low > 0 && (std::log(speedup.low) > 2 * disparity || std::log(speedup.high) < -2 * disparity)) return "";
  return fmt::format("the baseline and its twin (the same code in two workers) differ by {:.0f}% while the CIs are "
                     "+-{:.1f}%: the workers were not measured alike, so no speedup of this run is trusted",
                     100 * (std::exp(disparity) - 1), 100 * (std::exp(widest) - 1));
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
  if (margin <= config.max_equivalence_margin && speedup.low >= 1 / (1 + margin) && speedup.high <= 1 + margin)
    return verdict::no_difference;
  return verdict::inconclusive;
}

std::string decision_reason(verdict v, const ratio_estimate& speedup, double measured_noise_floor, const verdict_config& config) {
  const double noise_floor = std::max(measured_noise_floor, config.min_effect);
  const double margin = std::max(config.equivalence_margin, 2 * noise_floor);
  const auto floor_text = fmt::format("the noise floor {:.1f}% ({})", 100 * noise_floor,
                                      measured_noise_floor >= config.min_effect ? "the baseline against its twin"
                                                                                : "the minimum effect; the twin's was lower");
  switch (v) {
    case verdict::no_difference:
      return fmt::format("the CI [{:.3f}, {:.3f}] lies inside the equivalence band [{:.3f}, {:.3f}]: twice {}", speedup.low, speedup.high,
                         1 / (1 + margin), 1 + margin, floor_text);
    case verdict::inconclusive:
      if (margin > config.max_equivalence_margin)
        return fmt::format("the CI [{:.3f}, {:.3f}] does not clear {} (beyond [{:.3f}, {:.3f}]), and that floor is too wide to claim "
                           "no difference (its band of twice the floor, +-{:.0f}%, is over +-{:.0f}%): a quieter machine or more "
                           "samples (--max-time) can decide it",
                           speedup.low, speedup.high, floor_text, 1 / (1 + noise_floor), 1 + noise_floor, 100 * margin,
                           100 * config.max_equivalence_margin);
      return fmt::format("the CI [{:.3f}, {:.3f}] neither clears {} (beyond [{:.3f}, {:.3f}]) nor lies inside the equivalence band "
                         "[{:.3f}, {:.3f}]: more samples (--max-time) or a quieter machine can decide it",
                         speedup.low, speedup.high, floor_text, 1 / (1 + noise_floor), 1 + noise_floor, 1 / (1 + margin), 1 + margin);
    case verdict::faster:
    case verdict::slower: return "";
  }
  return "";
}

}  // namespace aisp::stats
