// The result of one suite run, in SI units. Every view (terminal table, JSON, Markdown) formats
// this one struct; none of them computes anything.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "aisp/pair.hpp"
#include "harness/timing.hpp"
#include "stats/bootstrap.hpp"
#include "stats/median_ci.hpp"
#include "stats/summary.hpp"

namespace aisp {

inline constexpr int result_schema_version = 1;

// One validity check: which, its VALIDITY.md code, whether it passed, and the evidence.
struct check_result {
  std::string check;               // e.g. "reference validation n=7", "jitter"
  std::vector<std::string> codes;  // VALIDITY.md reason codes when failed; empty when passed
  bool passed = true;
  std::string variant;
  std::string detail;              // which element, expected vs got, which buffer
};

struct variant_result {
  std::string name;
  std::string summary;
  std::string precision;  // declared precision change against the baseline ("" = same as baseline)
  std::string library;    // declared vendor library ("" = own kernels)
  math_unit math = math_unit::fp32_simt;  // the unit whose peak bounds its FLOP/s
  int host_threads = 1;  // the threads its calls run on, as declared (Note [declared threads used])
  std::vector<sample_record> samples;
  // How many samples the launch gate held (Note [launch gate]).
  [[nodiscard]] std::size_t gated_samples() const;
  stats::sample_summary stats;
  stats::interval median_ci;
  std::string stop_reason;
  double sampling_s = 0;
  int calls_per_sample = 1;
  double setup_s = 0;
  double warmup_s = 0;
  std::size_t buffer_bytes = 0;  // the harness-owned buffers at the benchmark size (its memory footprint)
  double sm_clock_median_mhz = 0;
  std::size_t low_clock_samples = 0;  // below 75% of the default SM clock (E2, E7)
  double achieved_bytes_per_s = 0;
  double achieved_flops_per_s = 0;
  double sol_memory = 0;    // achieved bytes/s over the memory ceiling (0 when no ceiling is known)
  // sol_memory at the ends of the median's 95% CI (SOL scales with 1 / time), so that a target
  // like ">= 85%" is judged against the measurement's spread; {0, 0} without a ceiling or a CI.
  stats::interval sol_memory_ci;
  double sol_compute = 0;   // achieved FLOP/s over the compute ceiling
  double achieved_special_function_ops_per_s = 0;
  double sol_special_function = 0;  // over the MUFU peak; 0 when the pair declares none
  bool verified = false;
  std::size_t throttled_samples = 0;              // in visits where NVML showed a throttling reason
  std::vector<std::string> clock_event_reasons;   // every NVML reason seen around its visits
  double energy_per_call_j = 0;                   // NVML over one window after sampling: Note [energy window]
  double energy_window_power_w = 0;               // the window's mean power
  double energy_window_s = 0;
  // Note [contended visits]: CPUs other work kept busy beside its timed visits (the machine's
  // busy time less this worker's and the judge's); absent where too few visits were read.
  std::optional<double> other_work_cpus;
  nlohmann::json worker_cpu;   // Note [worker CPU time]: CPU of other threads in timed visits, and while idle
  nlohmann::json visit_cost;   // the sampling phase's wall time by kind of visit (variant_slot.hpp)
  std::string sandbox = "off";  // the worker's seccomp sandbox: on | unavailable: why (Note [worker sandbox])
  nlohmann::json device_audit;  // the CUPTI audit's summary (state, kernels, busy fraction); null when off
  nlohmann::json traffic;       // W3: one call's bytes by hardware counters vs declared; null when not measured
  // What the benchmark-size setup() noted (run_context::note()), e.g. the algorithm a cuBLASLt
  // peer autotuned to; shown in results.json, never in the table.
  std::map<std::string, std::string> notes;
  // peer median over this variant's median, with its CI: 1.0 = as fast as the pair's peer
  // variant (a vendor library, measured in the same run, interleaved); absent without a peer.
  std::optional<stats::ratio_estimate> vs_peer;
  // Note [goals]: a latency pair's p50_s and p99_s, a throughput pair's calls_per_s, each
  // {point, low, high} with a bootstrap CI; null for a speed pair.
  nlohmann::json goal_metrics;
  // Note [recorded metrics]: each metric's values over the timed calls at the benchmark size (in
  // memory only: results.json keeps their p50 and p99 in goal_metrics.recorded).
  std::map<std::string, std::vector<double>> recorded;
};

struct speedup_result {
  std::string variant;  // against the baseline
  stats::ratio_estimate speedup;
  std::string verdict;  // faster | slower | no-difference | inconclusive | invalid
  std::string verdict_reason;  // why inconclusive when the CI alone does not say (Note [disturbed noise floor])
  std::string expectation;  // met | regressed | improved | new; "" without an expectations file
};

struct pair_result {
  std::string target;
  std::string status = "pass";   // pass | fail | skip
  std::string failure_kind;      // verify | cuda | timeout | crash | exception | contract
  std::string message;           // why it failed or was skipped
  std::string backend;
  std::string mode;
  bool launch_gate = false;       // samples queued behind the launch gate (Note [launch gate])
  std::string launch_gate_reason;  // why the run's --launch-gate does not hold this pair; "" where it does or was off
  std::string mode_reason;  // why not the run's --mode (Note [short calls]); "" when it is
  int host_threads = 1;            // the threads a call runs on, as declared (Note [declared threads])
  std::string host_threads_reason;  // why, where more than one
  std::vector<std::string> tags;  // the pair's declared tags (techniques; cheat:<code> on fixtures)
  workload benchmark;
  work_amount work;
  std::vector<variant_result> variants;
  std::string goal = "speed";          // what the pair pursues: speed | memory | throughput | latency
  std::string verdict_statistic = "median";  // what speedups compare: median, or p99 for a latency pair
  std::string verdict_statistic_why;         // Note [judged by a recorded metric]: the pair's reason
  std::vector<latency_trade> latency_trades;  // Note [declared latency trade]: what W12 allows, and why
  std::string data_dependent_launches;       // Note [data-dependent launches]: the pair's reason, or ""
  std::optional<stats::ratio_estimate> noise;  // baseline vs itself
  double noise_floor = 0;
  std::vector<speedup_result> speedups;
  std::vector<check_result> checks;
  double wall_s = 0;
  // Where the pair's wall time went, by phase of run_pair (workers, small_sizes, load, sampling,
  // energy, comparison, traffic, checks, verdicts, trace): seconds, in the order they ran.
  std::vector<std::pair<std::string, double>> phase_s;
  nlohmann::json roofline;  // arithmetic intensity, bound kind, the ceilings used and their source
  // Note [ranks]: a multi-GPU pair's world size, its GPUs and their peer-access matrix (D3); null
  // for a single-GPU pair.
  nlohmann::json ranks;
  int gpu = -1;  // the GPU it ran on under --gpus (Note [gpu lanes]); -1: the run's --device
  bool aa_test = false;  // the optimized slot ran the baseline again
  bool flagged = false;  // a check failed (under detect or quarantine the pair still passes)
};

struct suite_result {
  std::string aisp_version;
  std::string started_at;  // ISO 8601, UTC
  std::string command;
  std::string artifacts_dir;
  nlohmann::json config;
  nlohmann::json device;
  nlohmann::json environment;  // the environment gate's report
  nlohmann::json telemetry_end;  // NVML at the end of the run (the start is in `device`)
  std::vector<pair_result> pairs;
  // Note [interrupted runs] (suite_runner.cpp): the signal (SIGINT, SIGTERM) that ended the run
  // early, 0 when it ran to its end.
  int interrupted_by = 0;
  // Note [resumed runs] (cli/resumed_run.hpp): the pairs an interrupted run finished, as its
  // results.json held them, ahead of this part's; and its parts (null for a run not resumed).
  nlohmann::json carried_pairs = nlohmann::json::array();
  nlohmann::json resumed_from;
  [[nodiscard]] bool any_failed() const;
  // Every pair was skipped (no GPU for GPU pairs): the run measured nothing, and `bench run` says
  // so with exit code 3 (Note [nothing measured]).
  [[nodiscard]] bool nothing_measured() const;
};

}  // namespace aisp
