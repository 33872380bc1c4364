// One worker of a pair run: which variant it runs, under which label, and what it collected.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "aisp/pair.hpp"
#include "audit/nvml_reader.hpp"
#include "audit/window_audit.hpp"
#include "results/pair_result.hpp"
#include "runner/worker_process.hpp"
#include "stats/stopping_rule.hpp"

namespace aisp {

// NVML's clock-event reasons and energy counter, read by the judge around each visit.
// Reads the clock-event reasons, and the energy counter when asked (only the energy window needs it).
using telemetry_fn = std::function<std::optional<visit_telemetry>(bool with_energy)>;

enum class slot_role { baseline, candidate, noise_twin };

// Note [worker CPU time]: summed over a worker's timed (not audited) visits and the waits before them.
struct worker_cpu_time {
  double visit_wall_s = 0;
  double other_threads_cpu_s = 0;
  int busy_other_threads = 0;  // the most other threads that ran in one timed sample (host pairs)
  double process_cpu_s = 0;  // Note [host idle]: the whole worker's, children included (host pairs)
  // Note [executable pair threads]: the child processes' threads beside their busiest one, and the
  // most of their threads that ran in one timed sample (an executable pair's program).
  double child_helpers_cpu_s = 0;
  int busy_child_threads = 0;
  double idle_wall_s = 0;
  double idle_cpu_s = 0;  // the worker's and its child processes'
  double before_window_cpu_s = 0;  // Note [work before the window] (host_sampler.cpp)
  int continued = 0;  // Note [stopped workers] (worker_main.cpp): times the worker was continued while sampling
};

// Note [contended visits] (runner/contention_check.cpp): what else the machine ran during the
// worker's timed visits, on the judge's readings.
struct visit_load {
  int visits = 0;
  double wall_s = 0;
  double others_cpu_s = 0;  // the machine's busy CPU less the worker's and the visiting judge thread's
  // Note [waiting visits]: the worker's threads (its programs' too) running, and runnable but
  // waiting for a CPU, over the same visits.
  double ran_s = 0;
  double waited_s = 0;
};

// Where a worker's sampling wall time went, on the judge's clock: the requests of timed and of
// audited visits, the worker's own sample costs inside the timed ones, and the NVML reads.
struct visit_costs {
  int timed_visits = 0;
  double timed_request_s = 0;
  double timed_sample_s = 0;
  int audited_visits = 0;
  double audited_request_s = 0;
  double telemetry_s = 0;
};

// Note [two clocks]: audited samples whose reported span was set against the audit's timestamps.
struct clock_agreement {
  std::size_t checked = 0;
  std::size_t off = 0;
  std::string example;  // the first sample that disagreed
};

struct variant_slot {
  std::string label;  // the name in the results: baseline, optimized, ..., baseline_twin
  const variant* runs = nullptr;
  slot_role role = slot_role::candidate;
  std::unique_ptr<worker_link> worker;  // one process, or one per rank (rank_group)
  variant_result result;
  stats::stopping_rule rule;
  stats::stop_reason stopped = stats::stop_reason::keep_going;
  double sample_wall_estimate_s = 0;
  int visits = 0;
  std::size_t audited_samples = 0;                   // taken under the CUPTI audit, not timed
  std::vector<nlohmann::json> timed_fingerprints;    // verified timed calls, with their probes (X1, X7)
  // Note [interleaved truths] (sampling_rounds.cpp): the baseline's truth calls taken between the
  // rounds, each call's seconds (a uniform reservoir over the rounds).
  std::vector<double> interleaved_truth_s;
  std::vector<double> late_look_s;  // Note [late look]: per-call times of the samples taken after sampling
  double soak_call_s = 0;  // Note [soaked mean] (mean_check.cpp): the late look's back-to-back calls' wall time a call; 0: none
  // Note [verified reservoir] (sampling_rounds.cpp): the sampled calls to verify, uniform over all
  // of the worker's samples; joins timed_fingerprints when sampling ends.
  std::vector<nlohmann::json> verified_reservoir;
  std::size_t reservoir_offers = 0;                  // samples offered to it so far
  std::string access_policy;                         // an undeclared L2 window/set-aside seen after a visit (X4)
  std::vector<std::string> library_precision;        // reduced-precision cuBLAS policies asked for in a visit (W2)
  std::vector<unsigned> fp_modes;                    // Note [floating-point environment]: each mode seen after setup() or a visit
  struct {
    std::uint64_t taken = 0;
    std::uint64_t armed_windows = 0;
  } fp_sampled;                                      // Note [sampled fp mode]: the samples inside the calls, summed
  std::map<std::string, double> small_size_errors;   // the baseline's: Note [accuracy at the benchmark size]
  std::map<std::string, double> small_size_rounded_errors;  // the baseline's: Note [error under the rounding]
  std::vector<bool> wide_levels_passed;              // the baseline's, at the small size: Note [wide inputs at the benchmark size]
  std::vector<double> wide_levels_error;             // the baseline's relative L2 error at each: Note [honest reorders]
  bool scattered_during_sampling = false;            // the baseline's: Note [challenges during sampling] asked at least one
  int armed_timers = 0;                              // Note [armed timers]: the most seen after setup() or a visit
  std::vector<nlohmann::json> worker_states;         // Note [worker state]: each one seen after setup() or a visit
  nlohmann::json last_worker_state;                  // the latest of them, as the worker ended
  worker_cpu_time cpu;                               // Note [worker CPU time], timed visits only
  visit_load load;                                   // Note [contended visits], timed visits only
  visit_costs costs;                                 // reported as visit_cost in results.json
  // Note [slow worker clock]: each timed host sample's span on the worker's clock, and the
  // timestamp counter's ticks across it.
  std::vector<std::pair<double, std::uint64_t>> clocked_spans;
  std::vector<double> faults_per_call;               // minor page faults per timed call, per visit
  std::vector<double> rank_skews;                    // per timed sample of a multi-GPU pair: slowest / fastest rank
  std::vector<std::vector<double>> rank_busy;        // per audited sample of one: each rank's busy share of the window (D7)
  std::string audit_state = "off";                   // the CUPTI audit: on | off | unavailable: why
  nlohmann::json init_reply;                         // the worker's answer to init: sandbox and start-up state
  std::vector<window_audit> audits;                  // one per timed sample, when the audit is on
  clock_agreement reported_vs_audit;                 // over every audited visit
  std::uint64_t clock_event_reasons = 0;             // every NVML reason seen around its visits
  std::size_t throttled_samples = 0;                 // samples in visits with a throttling reason (E7, E8)
  std::size_t thermal_samples = 0;                   // ... with a thermal reason (E7)
};

}  // namespace aisp
