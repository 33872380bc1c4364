// Note [late look] (sampling_rounds.cpp): a candidate whose calls after sampling ran far slower
// than its sampled calls (fast only while sampled) fails `late-look` (X7); every variant's look is shown.
#pragma once

#include <vector>

#include "results/pair_result.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

// The most a candidate's look may be slower than its sampled median.
inline constexpr double late_look_bound = 2.0;
// Fewer late samples than this (calls too long for the look) are not judged.
inline constexpr std::size_t late_look_least_samples = 20;

void check_late_look(const std::vector<variant_slot>& slots, std::vector<check_result>& checks);

}  // namespace aisp
