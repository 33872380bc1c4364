// Two profiles of a kernel (two variants, or one variant in two runs), metric by metric, and the
// changes that explain the time (Note [what explains a speedup] in profile_diff.cpp).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/ncu_report.hpp"

namespace aisp::profile {

struct metric_change {
  std::string metric;
  double before = 0;
  double after = 0;
};

struct profile_comparison {
  double speedup = 0;                       // before's duration over after's
  std::vector<metric_change> changes;       // every metric both profiles have
  std::vector<std::string> explanations;    // the changes that account for the time, strongest first
};

[[nodiscard]] profile_comparison compare_profiles(const kernel_metrics& before, const kernel_metrics& after);
[[nodiscard]] nlohmann::json to_json(const profile_comparison& comparison);

}  // namespace aisp::profile
