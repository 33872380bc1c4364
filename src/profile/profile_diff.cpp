#include "profile/profile_diff.hpp"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "profile/bottleneck.hpp"

namespace aisp::profile {
namespace {

// Note [what explains a speedup]: a kernel gets faster by doing less work or by doing it at a
// higher rate. Nsight Compute's section metrics show both:
//  - less work: instructions issued are proportional to issue-slot busy x elapsed SM cycles, so
//    their ratio between the two profiles says how much less the SMs had to issue (clock-free,
//    unlike issue-slot % x duration);
//  - a higher rate: the busiest memory level (DRAM, L2, L1/TEX) running closer to its peak, or a
//    memory level whose load fell away (an L1-bound loop turned into register reuse);
//  - more warps to hide latency: achieved occupancy, eligible warps per scheduler.
// A change counts when it moves by 10 points of peak (or 1.25x for counts); the bottleneck class
// of each side is stated first, since a class change is the shortest summary.
constexpr double points = 10;
constexpr double ratio = 1.25;

std::string pct(double v) { return fmt::format("{:.1f}%", v); }

std::optional<double> instructions(const kernel_metrics& m) {
  if (!m.issue_busy_pct || !m.elapsed_cycles) return std::nullopt;
  return *m.issue_busy_pct * *m.elapsed_cycles;
}

void add_change(profile_comparison& out, const char* metric, const std::optional<double>& a, const std::optional<double>& b) {
  if (a && b) out.changes.push_back({metric, *a, *b});
}

}  // namespace

profile_comparison compare_profiles(const kernel_metrics& before, const kernel_metrics& after) {
  AISP_EXPECTS(before.duration_s && after.duration_s && *after.duration_s > 0, "both profiles need a kernel duration");
  profile_comparison out;
  out.speedup = *before.duration_s / *after.duration_s;
  add_change(out, "duration_s", before.duration_s, after.duration_s);
  add_change(out, "dram_pct", before.dram_pct, after.dram_pct);
  add_change(out, "l2_pct", before.l2_pct, after.l2_pct);
  add_change(out, "l1_pct", before.l1_pct, after.l1_pct);
  add_change(out, "sm_pct", before.sm_pct, after.sm_pct);
  add_change(out, "issue_busy_pct", before.issue_busy_pct, after.issue_busy_pct);
  add_change(out, "achieved_occupancy_pct", before.achieved_occupancy_pct, after.achieved_occupancy_pct);
  add_change(out, "registers_per_thread", before.registers_per_thread, after.registers_per_thread);
  add_change(out, "eligible_warps_per_scheduler", before.eligible_warps_per_scheduler, after.eligible_warps_per_scheduler);

  const auto class_a = classify(before);
  const auto class_b = classify(after);
  out.explanations.push_back(fmt::format("{:.2f}x the speed; bottleneck {} ({}) -> {} ({})", out.speedup, name_of(class_a.kind),
                                         class_a.detail, name_of(class_b.kind), class_b.detail));
  const auto ia = instructions(before);
  const auto ib = instructions(after);
  if (ia && ib && *ib > 0 && (*ia / *ib >= ratio || *ib / *ia >= ratio)) {
    out.explanations.push_back(*ia > *ib ? fmt::format("{:.1f}x fewer instructions issued (issue slots busy x SM cycles)", *ia / *ib)
                                         : fmt::format("{:.1f}x more instructions issued (issue slots busy x SM cycles)", *ib / *ia));
  }
  const auto la = busiest_memory_level(before);
  const auto lb = busiest_memory_level(after);
  if (la.name == lb.name && std::abs(lb.pct - la.pct) >= points) {
    out.explanations.push_back(fmt::format("{} runs {} its peak: {} -> {}", la.name, lb.pct > la.pct ? "closer to" : "further from",
                                           pct(la.pct), pct(lb.pct)));
  } else if (la.name != lb.name) {
    out.explanations.push_back(fmt::format("the busiest memory level moved from {} ({}) to {} ({})", la.name, pct(la.pct), lb.name,
                                           pct(lb.pct)));
  }
  if (before.dram_pct && after.dram_pct && la.name != "DRAM" && std::abs(*after.dram_pct - *before.dram_pct) >= points) {
    out.explanations.push_back(fmt::format("DRAM throughput {} -> {} of peak", pct(*before.dram_pct), pct(*after.dram_pct)));
  }
  if (before.achieved_occupancy_pct && after.achieved_occupancy_pct &&
      std::abs(*after.achieved_occupancy_pct - *before.achieved_occupancy_pct) >= points) {
    out.explanations.push_back(fmt::format("achieved occupancy {} -> {}", pct(*before.achieved_occupancy_pct),
                                           pct(*after.achieved_occupancy_pct)));
  }
  if (before.registers_per_thread && after.registers_per_thread && *before.registers_per_thread != *after.registers_per_thread) {
    out.explanations.push_back(fmt::format("registers per thread {:.0f} -> {:.0f}", *before.registers_per_thread, *after.registers_per_thread));
  }
  return out;
}

nlohmann::json to_json(const profile_comparison& comparison) {
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : comparison.changes) changes.push_back({{"metric", c.metric}, {"before", c.before}, {"after", c.after}});
  return {{"speedup", comparison.speedup}, {"changes", changes}, {"explanations", comparison.explanations}};
}

}  // namespace aisp::profile
