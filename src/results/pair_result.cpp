#include "results/pair_result.hpp"

#include <algorithm>

namespace aisp {

std::size_t variant_result::gated_samples() const {
  return static_cast<std::size_t>(std::count_if(samples.begin(), samples.end(), [](const sample_record& s) { return s.gated; }));
}

bool suite_result::any_failed() const {
  for (const auto& p : pairs) {
    if (p.status == "fail") return true;
  }
  return std::any_of(carried_pairs.begin(), carried_pairs.end(), [](const nlohmann::json& p) { return p.value("status", "") == "fail"; });
}

bool suite_result::nothing_measured() const {
  const auto skipped = [](const auto& status) { return status == "skip"; };
  return !pairs.empty() && std::all_of(pairs.begin(), pairs.end(), [&](const pair_result& p) { return skipped(p.status); }) &&
         std::all_of(carried_pairs.begin(), carried_pairs.end(), [&](const nlohmann::json& p) { return skipped(p.value("status", "")); });
}

}  // namespace aisp
