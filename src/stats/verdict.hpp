// Verdicts: faster, slower, no-difference or inconclusive, never finer than the noise floor.
#pragma once

#include <string_view>

#include "stats/bootstrap.hpp"

namespace aisp::stats {

enum class verdict { faster, slower, no_difference, inconclusive };

[[nodiscard]] std::string_view verdict_name(verdict v);

struct verdict_config {
  // The smallest equivalence band for no-difference: a CI inside [1/(1+m), 1+m].
  double equivalence_margin = 0.02;
};

// How far the baseline-vs-itself ratio CI reaches from 1: max(high - 1, 1 - low, 0).
[[nodiscard]] double noise_floor_of(const ratio_estimate& baseline_vs_itself);

// faster:        low  > 1 + noise_floor
// slower:        high < 1 / (1 + noise_floor)
// no-difference: [low, high] inside [1/(1+m), 1+m] with m = max(margin, 2 * noise_floor)
// inconclusive:  anything else (the CI straddles a band edge, or is too wide).
[[nodiscard]] verdict decide(const ratio_estimate& speedup, double noise_floor,
                             const verdict_config& config = {});

}  // namespace aisp::stats
