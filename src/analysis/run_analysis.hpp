// Analysis of one run's results: leaderboards by speed and by memory, the Pareto frontier of
// time against memory per target, what fits a VRAM and latency budget, cost per million calls
// from a price table, energy per call, and which declared techniques appear together.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace aisp {

// One verified variant of a passing pair.
struct variant_point {
  std::string target;
  std::string variant;
  double median_s = 0;
  double speedup = 1;               // over the pair's baseline (1 for the baseline)
  double footprint_bytes = 0;       // harness-owned buffers at the benchmark size
  double energy_per_call_j = 0;     // 0 when not measured
  double sol_memory_pct = 0;
  std::vector<std::string> techniques;  // the pair's tags, cheat tags excluded
};

[[nodiscard]] std::vector<variant_point> points_of(const nlohmann::json& results);
[[nodiscard]] std::vector<variant_point> by_speed(std::vector<variant_point> points);    // best speedup first
[[nodiscard]] std::vector<variant_point> by_memory(std::vector<variant_point> points);   // smallest footprint first
// Per target, the variants no other variant beats on both time and footprint.
[[nodiscard]] std::vector<variant_point> pareto_front(const std::vector<variant_point>& points);
[[nodiscard]] std::vector<variant_point> fitting(const std::vector<variant_point>& points, double vram_bytes, double latency_s);
// Techniques (tags) and the targets that declare each; pairs declaring several show they compose.
[[nodiscard]] nlohmann::json technique_stacks(const nlohmann::json& results);

}  // namespace aisp
