// Note [hidden mean] (mean_check.cpp): a candidate whose median is faster than the baseline's
// while its mean time a call is clearly slower fails `hidden-cost` (S2).
#pragma once

#include <string>
#include <vector>

#include "results/pair_result.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

// `soak_judged`: the late look's back-to-back calls judged too (Note [soaked mean]: host pairs).
void check_hidden_cost(const std::vector<variant_slot>& slots, std::vector<check_result>& checks, bool soak_judged);

// Why a speedup the medians call faster is not trusted: the calls' mean confirms under half of
// the median's gain (Note [hidden mean]); "" where it does.
[[nodiscard]] std::string unconfirmed_by_the_mean(const variant_slot& baseline, const variant_slot& candidate);

}  // namespace aisp
