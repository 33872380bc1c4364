// The judge's reading of the device audit: every timed sample's window (from the worker's
// CUPTI recorder) turned into checks with their VALIDITY.md codes, and a summary per variant.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "aisp/pair.hpp"
#include "results/pair_result.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

// `work`: the benchmark workload the audited samples ran (D5 reads the variant's declared collectives of it).
void check_device_timeline(const pair& declared, const workload& work, const variant_slot& slot, std::vector<check_result>& checks);

// Note [audit tampering]: fails the pair when a worker the judge asked to audit could not be
// audited (CUPTI unavailable, switched off by the pair's code, windows without activity).
void check_audit_coverage(const variant_slot& slot, std::vector<check_result>& checks);

// State, samples audited, kernels per call, busy fraction, kernel names (and their library).
[[nodiscard]] nlohmann::json summarize_device_audit(const variant_slot& slot);

}  // namespace aisp
