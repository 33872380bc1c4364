#include "runner/contention_check.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "runner/judge_checks.hpp"
#include "verify/battery.hpp"

namespace aisp {

// Note [contended visits]
// A variant's time is only comparable with the baseline's if the machine did the same other
// work beside both. The judge interleaves their visits, so a background job, a build or another
// lane's pair lands beside each about equally. Work aimed at one of them does not: a pair's code
// runs unsandboxed in the judge (a plugin's static initializers, a Python pair file's module code,
// its fp64 reference), and from there it can keep every CPU busy while the baseline's worker is
// running and stand aside while the candidate's is, or compute for the candidate in another
// process while the candidate's worker waits (a red team's judge-side hog, 2026-12-03, was
// seen by nothing). Around each timed visit the judge reads the machine's busy CPU time
// (/proc/stat) and takes off the worker's own, children included, as the worker reports it for
// the request, and its own thread's: what is left is everything else, in CPUs kept busy over the
// visit's wall time. A candidate whose visits ran beside a CPU more (and a quarter more) of
// other work than the baseline's, or the baseline beside that much more than a candidate's,
// fails `contended`. /proc/stat counts in 10 ms ticks, so only the sums over at least three
// visits a side are read, never one visit.
std::optional<double> others_cpus(const visit_load& load) {
  if (load.visits < contended_min_visits || load.wall_s <= 0) return std::nullopt;
  return std::max(0.0, load.others_cpu_s / load.wall_s);
}

std::optional<std::string> contention_problem(double baseline_cpus, double candidate_cpus) {
  const double lighter = std::min(baseline_cpus, candidate_cpus);
  const double margin = std::max(contended_floor_cpus, contended_share * lighter);
  if (std::abs(baseline_cpus - candidate_cpus) <= margin) return std::nullopt;
  const bool baseline_heavier = baseline_cpus > candidate_cpus;
  return fmt::format("other work kept {:.2f} CPUs busy beside the baseline's timed visits and {:.2f} beside this variant's "
                     "(at most {:.2f} apart): {}",
                     baseline_cpus, candidate_cpus, margin,
                     baseline_heavier ? "something outside the workers slowed the baseline"
                                      : "something outside the worker ran beside this variant, perhaps its work");
}

void check_contention(const std::vector<variant_slot>& slots, std::vector<check_result>& checks) {
  const auto baseline = std::find_if(slots.begin(), slots.end(), [](const variant_slot& s) { return s.role == slot_role::baseline; });
  if (baseline == slots.end()) return;
  const auto base_cpus = others_cpus(baseline->load);
  if (!base_cpus) return;
  for (const auto& slot : slots) {
    if (slot.role != slot_role::candidate) continue;
    const auto cpus = others_cpus(slot.load);
    if (!cpus) continue;
    const auto problem = contention_problem(*base_cpus, *cpus);
    add_check(checks, verify::checks::contended, slot.label, !problem,
              problem.value_or(fmt::format("other work beside the timed visits: {:.2f} CPUs (baseline {:.2f})", *cpus, *base_cpus)));
  }
}

}  // namespace aisp
