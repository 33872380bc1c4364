// Note [late look] (sampling_rounds.cpp): a variant whose calls after sampling ran far slower than
// its sampled calls (a candidate fast only while sampled), or a baseline far faster after (one
// slow only while sampled), fails `late-look` (X7).
#pragma once

#include <vector>

#include "results/pair_result.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

// The most a look's median may differ from the sampled median, either way that helps a candidate.
inline constexpr double late_look_bound = 1.5;
// Fewer late samples than this (calls too long for the look) are not judged.
inline constexpr std::size_t late_look_least_samples = 10;

void check_late_look(const std::vector<variant_slot>& slots, std::vector<check_result>& checks);

}  // namespace aisp
