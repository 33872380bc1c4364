// Class 4 of issue 15: the math unit a variant is judged by (its FLOP ceiling, V3) must be the one
// its kernels run, not the one it declares. Reads the kernels the device audit saw against their
// machine code (own kernels) or names (library kernels): see audit/math_unit_evidence.hpp.
#pragma once

#include <vector>

#include "aisp/pair.hpp"
#include "results/pair_result.hpp"
#include "runner/run_config.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

// A variant declaring a tensor unit whose kernels show none of it (and no kernel of unknown
// make) fails (V3, W1); so does an fp32 variant that runs lower-precision tensor instructions on
// fp32 inputs without declaring a precision change (W1, W2). Needs the audit's kernel names.
void check_math_unit(const pair& declared, const variant_slot& slot, const run_config& config,
                     std::vector<check_result>& checks);

// Note [device fast math]: a candidate declaring no precision change whose kernels were built
// flush-to-zero (nvcc --use_fast_math, --ftz=true) where none of the baseline's were fails
// build-symmetry (K4). Reads the aisp binary's and every --plugin's SASS.
void check_device_fast_math(const std::vector<variant_slot>& slots, const run_config& config, std::vector<check_result>& checks);

}  // namespace aisp
