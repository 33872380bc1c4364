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

// Note [waiting visits]
// The machine's busy CPU cannot grow past the CPUs it has: on a machine already full (a build,
// another lane's pair, a busy loop), work aimed at the baseline's visits adds little to it that
// can be seen while it still takes the baseline's CPUs (the judge-side hog beside one busy loop on
// this 2-core machine: 1.50 CPUs of other work beside the baseline, 1.27 beside the candidate,
// `contended` passed, 2026-12-05). What such work does to the worker shows in the worker's own
// threads, its programs' included: the time they spent runnable on a run queue waiting for a CPU,
// against the time they ran (schedstat, read by the judge around each timed visit). A baseline
// whose threads waited for a CPU over a fifth more of their runnable time than a candidate's (and
// over twice its share) fails `contended`: something kept the CPUs from the baseline. The other
// way is not failed: a candidate with more threads than the baseline waits more on any busy
// machine, and that only understates it.
void add_worker_schedule(visit_load& load, const schedule_times& before, const schedule_times& after) {
  // A thread that exited between the readings takes its time out of the later sum: never negative.
  const auto since = [](std::uint64_t first, std::uint64_t second) { return second > first ? 1e-9 * static_cast<double>(second - first) : 0.0; };
  load.ran_s += since(before.ran_ns, after.ran_ns);
  load.waited_s += since(before.waited_ns, after.waited_ns);
}

std::optional<double> waited_share(const visit_load& load) {
  const double runnable_s = load.ran_s + load.waited_s;
  if (load.visits < contended_min_visits || runnable_s <= 0) return std::nullopt;
  return load.waited_s / runnable_s;
}

std::optional<std::string> waiting_problem(double baseline_share, double candidate_share) {
  if (baseline_share - candidate_share <= waited_share_margin || baseline_share <= 2 * candidate_share) return std::nullopt;
  return fmt::format("the baseline's threads waited for a CPU {:.0f}% of the time they were runnable in its timed visits, this "
                     "variant's {:.0f}% (at most {:.0f} points more): something kept the CPUs from the baseline",
                     100 * baseline_share, 100 * candidate_share, 100 * waited_share_margin);
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
    auto problem = contention_problem(*base_cpus, *cpus);
    const auto base_waited = waited_share(baseline->load);
    const auto waited = waited_share(slot.load);
    if (!problem && base_waited && waited) problem = waiting_problem(*base_waited, *waited);
    add_check(checks, verify::checks::contended, slot.label, !problem,
              problem.value_or(fmt::format("other work beside the timed visits: {:.2f} CPUs (baseline {:.2f}); threads waiting for a "
                                           "CPU {:.0f}% of their runnable time (baseline {:.0f}%)",
                                           *cpus, *base_cpus, 100 * waited.value_or(0), 100 * base_waited.value_or(0))));
  }
}

}  // namespace aisp
