// Note [ranks]: checks of a multi-GPU pair's ranks as a whole, after sampling.
#pragma once

#include <vector>

#include "results/pair_result.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

// D4: a variant whose slowest rank took far longer than its fastest in most samples, where the
// baseline's ranks kept together. The samples are the slowest rank's either way; the check says
// which variant put its cost on ranks other than rank 0.
void check_rank_skew(const std::vector<variant_slot>& slots, std::vector<check_result>& checks);

}  // namespace aisp
