// Verdicts: faster, slower, no-difference or inconclusive, never finer than the noise floor.
#pragma once

#include <string>
#include <string_view>

#include "stats/bootstrap.hpp"

namespace aisp::stats {

enum class verdict { faster, slower, no_difference, inconclusive };

[[nodiscard]] std::string_view verdict_name(verdict v);

struct verdict_config {
  // The smallest equivalence band for no-difference: a CI inside [1/(1+m), 1+m].
  double equivalence_margin = 0.02;
  // Note [minimum effect]: the floor used is never below this. On the H100, two identical
  // variants in two worker processes differed systematically by up to 0.4% (ch07 A/A runs,
  // 2026-11-26), with CIs of +-0.03%: the twin of one run does not see the spread between
  // processes, so a finer claim would be a false positive.
  double min_effect = 0.01;
  // Note [widest equivalence]: no-difference needs a band of twice the noise floor, and a band
  // wider than this says nothing a user can act on: a twin 277% apart made every CI inside
  // [0.15, 6.5] "no-difference" (a user's walkthrough, 2026-12-04). Past it, inconclusive.
  double max_equivalence_margin = 0.25;
};

// How far the baseline-vs-itself ratio CI reaches from 1: max(high - 1, 1 - low, 0).
[[nodiscard]] double noise_floor_of(const ratio_estimate& baseline_vs_itself);

// Note [disturbed noise floor]: the twin runs the baseline's own code, so its ratio to the
// baseline should be 1 within its CI. A floor far wider than the pair's own CIs (a systematic
// gap between two workers of the same code: one of them was slowed, sped up, or placed apart)
// says the workers were not measured alike, and no speedup inside that disturbance can be
// trusted however tight its CI; one beyond its square (the candidate's worker sped up by it and
// the baseline's slowed by it) still can. Non-empty: why the verdict is inconclusive.
[[nodiscard]] std::string disturbed_noise_reason(const ratio_estimate& baseline_vs_itself, const ratio_estimate& speedup);

// With floor = max(noise_floor, min_effect):
// faster:        low  > 1 + floor
// slower:        high < 1 / (1 + floor)
// no-difference: [low, high] inside [1/(1+m), 1+m] with m = max(margin, 2 * floor), and m at
//                most max_equivalence_margin
// inconclusive:  anything else (the CI straddles a band edge, is too wide, or the floor is).
[[nodiscard]] verdict decide(const ratio_estimate& speedup, double noise_floor,
                             const verdict_config& config = {});

// Why decide() said no-difference or inconclusive, in one line with the numbers it used (the
// noise floor, the band); "" for faster and slower, whose CI clears the floor on its own.
[[nodiscard]] std::string decision_reason(verdict v, const ratio_estimate& speedup, double noise_floor,
                                          const verdict_config& config = {});

}  // namespace aisp::stats
