#include "results/time_breakdown.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace aisp {

time_breakdown break_down(const std::vector<pair_result>& pairs) {
  time_breakdown out;
  std::map<std::string, double> by_phase;
  std::vector<double> walls;
  for (const auto& p : pairs) {
    if (p.status == "skip") continue;
    walls.push_back(p.wall_s);
    out.total_s += p.wall_s;
    for (const auto& [phase, seconds] : p.phase_s) by_phase[phase] += seconds;
  }
  out.pairs = static_cast<int>(walls.size());
  out.phases.assign(by_phase.begin(), by_phase.end());
  std::sort(out.phases.begin(), out.phases.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (!walls.empty()) {
    std::sort(walls.begin(), walls.end());
    const std::size_t middle = walls.size() / 2;
    out.median_pair_s = walls.size() % 2 == 1 ? walls[middle] : 0.5 * (walls[middle - 1] + walls[middle]);
  }
  return out;
}

std::string describe(const time_breakdown& b) {
  if (b.pairs == 0) return "time by phase: no pair ran";
  std::string text = "time by phase:";
  int small = 0;  // phases under 1% of the total: counted, not listed
  for (const auto& [phase, seconds] : b.phases) {
    const double share = b.total_s > 0 ? seconds / b.total_s : 0.0;
    if (share < 0.01) {
      ++small;
      continue;
    }
    text += fmt::format("{} {} {:.1f} s ({:.0f}%)", text.back() == ':' ? "" : ",", phase, seconds, 100 * share);
  }
  if (small > 0) text += fmt::format(", {} more under 1% each", small);
  return text + fmt::format("; median pair {:.1f} s over {} pair{}, {} in all", b.median_pair_s, b.pairs, b.pairs == 1 ? "" : "s",
                            short_duration(b.total_s));
}

nlohmann::json to_json(const time_breakdown& b) {
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& [phase, seconds] : b.phases) phases[phase] = seconds;
  return {{"pairs", b.pairs}, {"total_s", b.total_s}, {"median_pair_s", b.median_pair_s}, {"phase_s", phases}};
}

std::string short_duration(double seconds) {
  const auto whole = static_cast<long>(std::lround(std::max(0.0, seconds)));
  if (whole < 60) return fmt::format("{}s", whole);
  if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02}m", whole / 3600, (whole % 3600) / 60);
}

}  // namespace aisp
