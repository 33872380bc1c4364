#include "analysis/run_analysis.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace aisp {

using nlohmann::json;

std::vector<variant_point> points_of(const json& results) {
  std::vector<variant_point> points;
  for (const auto& p : results.value("pairs", json::array())) {
    if (p.value("status", "") != "pass") continue;
    std::vector<std::string> techniques;
    for (const auto& tag : p.value("tags", json::array())) {
      if (!tag.get<std::string>().starts_with("cheat:")) techniques.push_back(tag.get<std::string>());
    }
    for (const auto& v : p.value("variants", json::array())) {
      const auto name = v.value("name", "");
      if (name == "baseline_twin" || !v.value("verified", false)) continue;
      variant_point point;
      point.target = p.value("target", "");
      point.variant = name;
      point.median_s = v.value("median_s", 0.0);
      for (const auto& s : p.value("speedups", json::array())) {
        if (s.value("variant", "") == name) point.speedup = s["speedup"].value("point", 1.0);
      }
      point.footprint_bytes = v.value("buffer_bytes", 0.0);
      point.energy_per_call_j = v.value("energy_per_call_j", 0.0);
      point.sol_memory_pct = v.value("sol_memory_pct", 0.0);
      point.techniques = techniques;
      points.push_back(point);
    }
  }
  return points;
}

std::vector<variant_point> by_speed(std::vector<variant_point> points) {
  std::stable_sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.speedup > b.speedup; });
  return points;
}

std::vector<variant_point> by_memory(std::vector<variant_point> points) {
  std::stable_sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.footprint_bytes < b.footprint_bytes; });
  return points;
}

std::vector<variant_point> pareto_front(const std::vector<variant_point>& points) {
  std::vector<variant_point> front;
  for (const auto& p : points) {
    bool dominated = false;
    for (const auto& q : points) {
      if (q.target != p.target || (&q == &p)) continue;
      const bool no_worse = q.median_s <= p.median_s && q.footprint_bytes <= p.footprint_bytes;
      const bool better = q.median_s < p.median_s || q.footprint_bytes < p.footprint_bytes;
      dominated = dominated || (no_worse && better);
    }
    if (!dominated) front.push_back(p);
  }
  return front;
}

std::vector<variant_point> fitting(const std::vector<variant_point>& points, double vram_bytes, double latency_s) {
  std::vector<variant_point> fit;
  for (const auto& p : points) {
    if ((vram_bytes <= 0 || p.footprint_bytes <= vram_bytes) && (latency_s <= 0 || p.median_s <= latency_s)) fit.push_back(p);
  }
  return by_speed(fit);
}

json technique_stacks(const json& results) {
  std::map<std::string, std::set<std::string>> targets_of;
  std::map<std::string, std::set<std::string>> together;
  for (const auto& p : points_of(results)) {
    for (const auto& t : p.techniques) {
      targets_of[t].insert(p.target);
      for (const auto& other : p.techniques) {
        if (other != t) together[t].insert(other);
      }
    }
  }
  json out = json::array();
  for (const auto& [technique, targets] : targets_of) {
    out.push_back({{"technique", technique}, {"targets", targets}, {"composes_with", together[technique]}});
  }
  return out;
}

}  // namespace aisp
