// Everything the user chose for a suite run. The benchmark code never sees or changes it (V6).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/timing.hpp"
#include "stats/stopping_rule.hpp"
#include "stats/verdict.hpp"

namespace aisp {

class launch_judge;

// What a failed check does: detect records it; quarantine records it and lists the target in
// the quarantine file; gate (the default) also fails the pair and voids its verdicts.
enum class verify_phase { detect, quarantine, gate };

struct run_config {
  timing_mode mode = timing_mode::cold;
  bool mode_chosen = false;  // --mode given: it overrides a pair's short_calls() (Note [short calls])
  std::uint64_t seed = 42;
  stats::stopping_config stopping;
  stats::verdict_config verdicts;
  double worker_timeout_s = 60;   // one request (load, one visit of samples, outputs)
  double visit_target_s = 0.01;   // how long one variant samples before the next takes over
  int device = 0;
  // --gpus: the GPUs single-GPU pairs run on side by side (Note [gpu lanes]); empty or one: --device alone.
  std::vector<int> gpu_lanes;
  bool aa_test = false;           // run the baseline in the optimized slot (noise check)
  std::string artifacts_dir;
  std::string executable;         // the aisp binary that workers run
  std::vector<std::string> plugins;  // loaded by every worker too (Note [plugins])
  std::string l2_flush = "read";  // the cold flush: read | write (Note [clean flush] in device_probes.cu)
  bool launch_gate = true;        // `--no-launch-gate` turns it off: hold the GPU until a sample is queued (Note [launch gate])
  bool progress = true;
  verify_phase phase = verify_phase::gate;
  bool verify_only = false;       // `bench verify`: checks, a token of sampling, no verdicts
  bool small_sizes_only = false;  // `bench verify --small-sizes-only`: validation/held-out sizes and the battery only
  bool skip_held_out = false;     // `bench verify --validation-sizes-only`: the above without the held-out sizes
  bool skip_battery = false;      // `bench verify --skip-battery` (with one of the two above): no challenge battery
  bool without_baseline = false;  // `bench verify --without-baseline` (with the two above): named variants against the reference alone
  std::string golden_file = "expectations/goldens.json";
  bool update_goldens = false;    // record missing goldens (never overwrites a drifted one)
  bool audit = true;              // the CUPTI device audit in GPU workers
  std::string trace_dir;          // one Chrome/Perfetto trace per pair, when set
  double energy_window_s = 0.5;   // per worker after sampling, edges on the counter's steps; 0 = none
  std::string expectations_file;  // each speedup is marked met/regressed/improved against it; "" = none
  std::map<std::string, std::int64_t> benchmark_override;
  // Issue 17: the judge verifies the slots concurrently and computes references on this many host
  // threads (0: one per core); 1 does everything one at a time (for a reference that is not reentrant).
  unsigned judge_threads = 0;  // --size n=...: replaces these benchmark parameters
  // Note [launch]: launch rank 0's link to the other launch ranks under mpirun/srun; null on one host.
  std::shared_ptr<launch_judge> launch;
};

}  // namespace aisp
