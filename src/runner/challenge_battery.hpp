// The challenges run on one validation size of every variant: fresh inputs after setup and
// after warmup, a determinism re-run, single-element jitter of every input, the same data at
// new addresses, and the exact-integer challenge. Plus the check of verified timed calls.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runner/verification_phase.hpp"

namespace aisp {

void run_challenges(const judge_scope& scope, variant_slot& slot, const workload& work);

// The slot's verified timed calls (fingerprints taken during sampling) against `expected`, the
// baseline's benchmark-size outputs.
void check_timed_calls(const judge_scope& scope, const variant_slot& slot,
                       const std::map<std::string, std::vector<double>, std::less<>>& expected);

// The seed of the unpredictable output pattern of verified timed calls.
[[nodiscard]] std::uint64_t timed_call_pattern_seed(const run_config& config);
inline constexpr std::size_t timed_call_probes = 4096;

}  // namespace aisp
