// W3 (undeclared shortcuts): the bytes one call really moved, read from the memory system's
// hardware counters (L2 requests from the SMs and TMA, so independent of what L2 already held),
// against the bytes the pair declared as the fewest any variant must move. A variant that skips
// every other row, or a scratch pass the outputs never show, moves less than the declaration.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "aisp/pair.hpp"
#include "results/pair_result.hpp"
#include "runner/run_config.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

// A variant may move fewer bytes than declared only by what the counters' grain and a kernel's
// own rounding explain; a quarter less is a skipped part of the work.
inline constexpr double traffic_floor = 0.75;

// The worker's counter reading per call, with the declared bytes: "" when it holds the floor.
// `copy_engine_bytes`: the part of `measured_bytes_per_call` that copy engines moved (named in the message).
[[nodiscard]] std::string traffic_shortfall(double declared_bytes, double measured_bytes_per_call, double copy_engine_bytes = 0);

// Asks every CUDA worker for one measured batch (outside every sample window), records it in the
// variant's result and fails `traffic` where a variant moved less than the floor. Pairs whose
// declared bytes cross PCIe or migrate as managed memory are recorded, not compared: those
// bytes do not all pass through L2 from the SMs.
void check_traffic(const pair& declared, const work_amount& work, std::vector<variant_slot>& slots, const run_config& config,
                   std::vector<check_result>& checks);

}  // namespace aisp
