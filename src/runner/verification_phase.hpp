// The judge's verification: each variant's outputs against the fp64 reference on every
// validation and held-out size, and each candidate against the baseline at the benchmark size.
#pragma once

#include <string>
#include <vector>

#include "runner/run_config.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

// Loads each small workload into every non-twin slot and compares outputs with the reference.
void verify_against_reference(const pair& declared, std::vector<variant_slot>& slots,
                              const run_config& config, const std::string& pair_dir,
                              std::vector<check_result>& checks);

// Benchmark size: dumps the timed path's outputs and compares every candidate with the baseline.
void verify_against_baseline(const pair& declared, std::vector<variant_slot>& slots,
                             const run_config& config, const std::string& pair_dir,
                             std::vector<check_result>& checks);

}  // namespace aisp
