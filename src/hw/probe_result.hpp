// One measurement of `aisp hw`: what was measured, how, on what size, and the median with its
// spread over the repetitions. Rates are per second (B/s, FLOP/s); latencies in seconds.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace aisp {

struct probe_result {
  std::string name;    // copy, triad, fp32_fma, bf16_tensor, h2d_pinned, launch, ...
  std::string group;   // memory | cache | fp32 | tensor | pcie | launch | p2p | nccl
  std::string method;  // one line: how it was measured
  std::string size;    // e.g. "3 x 512 MiB", "8192^3"
  std::string unit;    // "B/s", "FLOP/s" or "s"
  double median = 0;
  double min = 0;
  double max = 0;
  int repetitions = 0;
  std::string error;   // why it could not be measured; "" when it was
};

// Median, min and max of `values` into `result` (values are per-repetition rates or times).
void summarize_into(probe_result& result, std::vector<double> values);

[[nodiscard]] nlohmann::json to_json(const probe_result& result);
[[nodiscard]] probe_result probe_result_from_json(const nlohmann::json& j);

}  // namespace aisp
