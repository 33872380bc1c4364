// Note [contended visits]: what else the machine ran while each variant was timed, and the
// check that it was about the same for the baseline and each candidate.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/process_probes.hpp"
#include "results/pair_result.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

// Other work, in CPUs kept busy on average, that may differ between the baseline's visits and a
// candidate's before they count as contended: a CPU at least, and a quarter of the lighter side's.
inline constexpr double contended_floor_cpus = 0.75;
inline constexpr double contended_share = 0.25;
inline constexpr int contended_min_visits = 3;
// Note [waiting visits]: how much more of their runnable time the baseline's threads may wait for
// a CPU than a candidate's.
inline constexpr double waited_share_margin = 0.2;

// The other work beside a slot's timed visits, in CPUs (nullopt: too few visits read).
[[nodiscard]] std::optional<double> others_cpus(const visit_load& load);

// The rule alone: a failure's detail, or nullopt.
[[nodiscard]] std::optional<std::string> contention_problem(double baseline_cpus, double candidate_cpus);

// Note [waiting visits]: one timed visit's worker schedule readings, added to the slot's load.
void add_worker_schedule(visit_load& load, const schedule_times& before, const schedule_times& after);
// The share of the worker's runnable time its threads waited for a CPU (nullopt: too few visits).
[[nodiscard]] std::optional<double> waited_share(const visit_load& load);
// The rule alone: a failure's detail, or nullopt.
[[nodiscard]] std::optional<std::string> waiting_problem(double baseline_share, double candidate_share);

// Each candidate against the baseline (not `bench verify`, which times nothing).
void check_contention(const std::vector<variant_slot>& slots, std::vector<check_result>& checks);

}  // namespace aisp
