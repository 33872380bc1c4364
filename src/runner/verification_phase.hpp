// The judge's verification: each variant against the fp64 reference on every validation and
// held-out size (with the process probes around each call), the challenge battery on one
// validation size, and each candidate against the baseline at the benchmark size.
#pragma once

#include <string>
#include <vector>

#include "runner/phase_timer.hpp"
#include "runner/run_config.hpp"
#include "runner/variant_slot.hpp"
#include "verify/reference_cache.hpp"

namespace aisp {

struct judge_scope {
  const pair& declared;
  const run_config& config;
  std::string pair_dir;
  std::vector<check_result>& checks;
  verify::reference_cache& references;  // shared by every slot of the pair
  // The same scope writing its checks into `into` (one slot's share, Note in slot_threads.hpp).
  [[nodiscard]] judge_scope with_checks(std::vector<check_result>& into) const {
    return {declared, config, pair_dir, into, references};
  }
};

void verify_small_sizes(const judge_scope& scope, std::vector<variant_slot>& slots, phase_timer& phases);

// Loads the benchmark size into every slot and records what setup() did there.
void load_benchmark(const judge_scope& scope, std::vector<variant_slot>& slots);

// Benchmark size: the timed path's outputs; each candidate against the baseline, and every
// verified timed call against the baseline at its probe positions.
// Laps "comparison" (the full-size calls) and "timed_calls" (the baseline's answers for them).
void verify_against_baseline(const judge_scope& scope, std::vector<variant_slot>& slots, phase_timer& phases);

}  // namespace aisp
