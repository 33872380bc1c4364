// Note [input reuse]: a pair that fixes its inputs (pair::fixed_inputs) gets the same inputs in
// every timed call, so a variant could keep its answer from call to call. A few more samples of
// every worker with fresh inputs show it: the time of a call that cannot reuse anything.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "aisp/pair.hpp"
#include "results/pair_result.hpp"
#include "runner/run_config.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

// A candidate slower by over input_reuse_factor on fresh inputs than on its timed (fixed) ones,
// and by over input_reuse_factor more than the baseline's own ratio, reused its inputs' results.
inline constexpr double input_reuse_factor = 1.5;
inline constexpr int input_reuse_samples = 5;

// The rule alone: a failure's detail, or nullopt. Ratios are fresh-input median over timed median.
[[nodiscard]] std::optional<std::string> input_reuse_problem(double candidate_ratio, double baseline_ratio);

// For a pair with fixed inputs (and not `bench verify`): the fresh-input samples of every
// non-twin slot, and the check of each candidate.
void check_input_reuse(std::vector<variant_slot>& slots, const pair& declared, const run_config& config, std::vector<check_result>& checks);

}  // namespace aisp
