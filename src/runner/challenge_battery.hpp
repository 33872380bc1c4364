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

// Challenge seeds: derived from the run seed (salt: the challenge), never sent to a worker
// before the challenge.
[[nodiscard]] std::uint64_t challenge_seed(const run_config& config, std::uint64_t salt);

// Every slot's verified timed calls (fingerprints taken during sampling), each against the
// baseline worker's untimed call on the same inputs, at the same probe positions (Note
// [verified after the call]); the same call of several slots is answered once.
void check_timed_calls(const judge_scope& scope, const std::vector<variant_slot>& slots, variant_slot& baseline);

// A seed from the judge's own entropy (std::random_device), never derived from the run seed:
// what a variant cannot predict even knowing every public input of the run.
[[nodiscard]] std::uint64_t secret_seed();

inline constexpr std::size_t timed_call_probes = 4096;
// Note [random timed calls]: `verified_reservoir_size` samples a worker are verified, drawn
// uniformly from all its samples (Note [verified reservoir] in sampling_rounds.cpp).
inline constexpr int verified_reservoir_size = 8;

}  // namespace aisp
