// Nothing is faster than physics (architecture §5): each variant's achieved bandwidth and FLOP/s
// as a fraction of the ceilings (SOL %), the pair's arithmetic intensity and roofline bound, and
// the gate: above 105% of a ceiling, the declared work or the timing is a lie.
#pragma once

#include <vector>

#include "hw/ceilings.hpp"
#include "results/pair_result.hpp"

namespace aisp {

inline constexpr double physics_margin = 1.05;

// Fills sol_memory / sol_compute of every variant and `roofline`; records a failed
// speed-of-light check (V3) for a variant above the margin. Nothing when no ceiling is known.
void assess_speed_of_light(const work_amount& work, const ceiling_set& ceilings, const std::vector<variant_result*>& variants,
                           nlohmann::json& roofline, std::vector<check_result>& checks,
                           data_path path = data_path::device_memory);

}  // namespace aisp
