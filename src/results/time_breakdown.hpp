// Where a suite's wall time went (issue 17): every pair's phases summed, largest first, and the
// median pair's wall time. Skipped pairs take no time and are not counted.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/pair_result.hpp"

namespace aisp {

struct time_breakdown {
  std::vector<std::pair<std::string, double>> phases;  // seconds summed over pairs, largest first
  double total_s = 0;                                  // the pairs' wall times summed
  double median_pair_s = 0;
  int pairs = 0;                                       // pairs that ran (not skipped)
};

[[nodiscard]] time_breakdown break_down(const std::vector<pair_result>& pairs);
// "time by phase: sampling 120.1 s (45%), battery 80.2 s (30%), ...; median pair 12.3 s over 39 pairs"
[[nodiscard]] std::string describe(const time_breakdown& breakdown);
[[nodiscard]] nlohmann::json to_json(const time_breakdown& breakdown);
// "1m05s" / "42s" / "2h03m": elapsed and remaining times in progress lines.
[[nodiscard]] std::string short_duration(double seconds);

}  // namespace aisp
