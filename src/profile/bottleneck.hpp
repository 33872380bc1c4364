// What bounds a kernel, from its Nsight Compute metrics (Note [bottleneck classes] in
// bottleneck.cpp), with the evidence and the lab pairs that teach the remedy.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/ncu_report.hpp"

namespace aisp::profile {

enum class bottleneck { memory_bound, compute_bound, latency_bound, occupancy_limited, launch_bound, unknown };

struct bottleneck_verdict {
  bottleneck kind = bottleneck::unknown;
  std::string detail;                 // e.g. "DRAM 86.9% of peak"
  std::vector<std::string> evidence;  // the metrics behind it, one line each
  std::vector<std::string> remedies;  // lab pairs that demonstrate what to do about it
};

// The busiest of DRAM, L2 and L1/TEX, in % of its peak (DRAM on ties): the level a memory-bound
// kernel is bound by.
struct memory_level {
  std::string name;
  double pct = 0;
};
[[nodiscard]] memory_level busiest_memory_level(const kernel_metrics& metrics);
// The level whose bytes bound the kernel: the busiest, except that L2 carrying DRAM's stream
// (few L2 hits, DRAM nearly as busy) names DRAM (Note [L2 as DRAM's pass-through]).
[[nodiscard]] memory_level limiting_memory_level(const kernel_metrics& metrics);

[[nodiscard]] std::string name_of(bottleneck kind);
[[nodiscard]] bottleneck_verdict classify(const kernel_metrics& metrics);
[[nodiscard]] nlohmann::json to_json(const bottleneck_verdict& verdict);

}  // namespace aisp::profile
