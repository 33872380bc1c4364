// The challenge battery: every check that `aisp bench run` applies to every pair, and the
// VALIDITY.md reason codes each one reports when it fails. A failed check lists all the codes
// of the rows it protects (one mechanism often guards several rows); docs/validity.md maps each
// row to its check and its planted fixture.
#pragma once

#include <string_view>
#include <vector>

namespace aisp::verify {

struct check_kind {
  std::string_view name;
  std::vector<std::string_view> codes;
  std::string_view what;
};

namespace checks {
// Outputs against the fp64 reference, poisoned before the call. The comparison's own code
// (O10 unwritten, O4 NaN, O5 Inf, O3 beyond tolerance) comes first; pattern codes follow:
// W4 (nothing written), O7 (only a leading region written), W5/W6 (a tail of the batch/sequence
// dimension wrong), W7 (odd indices of a spatial dimension wrong), O8 (right values in another
// dtype's encoding), W1 (values carry only fp16/bf16 precision), M2 (written into an input).
inline const check_kind reference{"reference", {"O3"}, "outputs vs the fp64 reference"};
// Held-out size: a failure here, with validation passing, is overfitting.
inline const check_kind held_out{"held-out", {"O3", "V5", "K7"}, "outputs vs the reference on a held-out size"};
// Every variant fails the reference the same way, and they agree with each other.
inline const check_kind ground_truth{"ground-truth", {"O6"}, "the reference itself looks wrong"};
inline const check_kind golden{"golden", {"O6"}, "the reference drifted from its stored golden"};
// Benchmark size: candidate vs baseline. Failing here while every small size passes means the
// candidate special-cases the benchmark size.
// Note [fresh calls]: on inputs drawn after every timed call, from the judge's own entropy, so a
// result precomputed, stashed, cached or read from disk at the benchmark size is stale here.
inline const check_kind baseline_match{"baseline-match",
                                       {"K7", "V5", "O2", "T5", "L3", "L4", "W11", "C3", "K1", "V4", "V7", "X2"},
                                       "candidate vs baseline at the benchmark size, on fresh inputs"};
// One input element perturbed in place: the output must change where the reference does.
// Unchanged everywhere: constant or cached output. Changed for some positions and not for
// others: part of the input ignored (sparsity assumption). A mask or KV-cache input: W9, W10.
inline const check_kind jitter{"jitter", {"O1", "O2"}, "perturbed input element must move the output"};
inline const check_kind jitter_wrong{"jitter-wrong", {"O3"}, "output moved, but not to the reference"};
inline const check_kind jitter_partial{"jitter-partial", {"W8"}, "output ignores part of its input"};
inline const check_kind jitter_mask{"jitter-mask", {"W9"}, "output ignores the attention mask"};
inline const check_kind jitter_cache{"jitter-kv-cache", {"W10"}, "output ignores part of the KV cache"};
// Fresh inputs (a seed the candidate never saw) at the same addresses, right after setup,
// before any run(): memorized at setup or cached on disk across runs.
// A graph that replays a result computed in setup fails here too (L3).
inline const check_kind fresh_after_setup{"fresh-after-setup", {"W11", "K1", "V4", "L3"}, "new data after setup"};
// Fresh inputs at the same addresses after warmup and timed calls: cached or lagging results.
inline const check_kind fresh_after_warmup{"fresh-after-warmup", {"O2", "X2", "T5", "L4", "L6"}, "new data after warmup"};
// The same data at new addresses (setup re-run): results keyed by address.
inline const check_kind new_address{"new-address", {"X2"}, "same data, new addresses"};
// Exact-integer inputs, bitwise comparison, for pairs that declare exact math.
inline const check_kind exact_integers{"exact-integers", {"X5"}, "exact-integer challenge, bitwise"};
// Note [non-integer challenge] (challenge_battery.cpp): a downgrade exact on small integers.
inline const check_kind non_integers{"non-integers", {"X5", "W1", "W2"}, "exact-math pair on non-integer inputs"};
// Note [accuracy against the baseline] (runner/candidate_accuracy.cpp): a candidate that declares
// no precision change, far less accurate than the baseline on the same inputs.
inline const check_kind accuracy{"accuracy", {"O3", "W1", "X5"}, "a candidate far less accurate than the baseline, undeclared"};
// Note [wide inputs] (runner/candidate_accuracy.cpp): the inputs scaled past the declared range,
// which the baseline takes.
inline const check_kind wide_inputs{"wide-inputs", {"O3", "V5"}, "right only on the range the harness usually draws"};
// Note [stopped workers] (runner/worker_main.cpp): a worker paused by a signal while sampled.
inline const check_kind stopped{"stopped", {"V1", "S8"}, "the worker was stopped by a signal while it was timed"};
// Note [contended visits] (runner/contention_check.cpp): other work beside one variant's timed
// visits and not the other's: the baseline slowed from outside, or a candidate helped from outside.
inline const check_kind contended{"contended", {"S8", "V1", "L5"}, "other work ran beside one variant's timed samples and not the other's"};
// Note [input reuse] (runner/call_reuse.cpp): a fixed-inputs pair's candidate, much slower on fresh inputs.
inline const check_kind input_reuse{"input-reuse", {"O2", "X2"}, "a fixed-inputs pair's variant reused results across calls"};
// Note [batch reuse] (runner/call_reuse.cpp): a hot or graph batch's candidate, much slower one call at a time.
inline const check_kind batch_reuse{"batch-reuse", {"X2", "O2"}, "a batched call reused the batch's earlier call's work"};
// Outputs poisoned before setup must be untouched after it.
inline const check_kind setup_touches_outputs{"setup-touches-outputs", {"L2"}, "setup() wrote to outputs"};
// Inputs hashed before and after setup() and run().
inline const check_kind input_mutation{"input-mutation", {"X3"}, "an input changed"};
inline const check_kind subnormal_inputs{"subnormal-inputs", {"O9"}, "inputs hold subnormal values"};
// Random timed calls verified: outputs refilled with a random pattern before the sample, then
// checked for every element written and for agreement with the baseline at probe positions.
// Note [random timed calls]: a secret share of timed samples, each against the baseline on the
// same fresh inputs: work skipped, deferred or done only when watched shows (and stale results).
inline const check_kind timed_call{"timed-call", {"X1", "X7", "L6", "W4", "K3", "T5", "L3", "L4", "O2", "X2", "K1"},
                                   "a random timed call did its work, on its own fresh inputs"};
// Note [timed slower] (runner/challenge_battery.cpp): the baseline's timed samples against its
// truth calls for the others' verified samples, taken the same way.
inline const check_kind timed_slower{"timed-slower", {"S2", "X7"}, "the baseline ran slower in its timed samples than in the judge's truth calls"};
// Process-level probes around the verified call.
inline const check_kind launch_error{"launch-error", {"X8"}, "a launch failed and run() did not check it"};
// Note [late writes] (variant_session.cpp): outputs hashed as run() returned, as read, and after
// a pause; a helper thread or stream finishing the work after run() returned changes them.
inline const check_kind late_write{"late-write", {"L5", "T2"}, "outputs changed after run() returned"};
inline const check_kind background_thread{"background-thread", {"L5"}, "run() left a thread behind"};
// Note [compilers in the sandbox]: a pair allowed to start processes left one alive.
inline const check_kind child_process{"child-process", {"L5"}, "a process the variant started was alive after run() returned"};
inline const check_kind allocation_in_run{"allocation-in-run", {"S7", "M1", "M4"}, "run() allocated memory"};
inline const check_kind page_faults{"page-faults", {"M6"}, "timed calls take page faults"};
inline const check_kind stdout_write{"stdout-write", {"V1"}, "run() wrote to stdout, the judge's channel"};
inline const check_kind environment_change{"environment-change", {"V6"}, "run() changed the environment or config"};
inline const check_kind scheduling_change{"scheduling-change", {"E3"}, "the worker's scheduling policy or CPU affinity changed"};
// Note [worker sandbox]: a call the worker's seccomp filters denied (codes by what it tried).
// A worker killed by SIGSYS made its call with the signal blocked, which spawning functions do.
inline const check_kind sandbox{"sandbox", {}, "the worker tried a system call its sandbox forbids"};
// The same row when the sandbox killed the worker or could not be installed (it fails closed).
inline const check_kind sandbox_kill{"sandbox", {"L5", "V1"}, "the sandbox killed the worker, or could not confine it"};
// Note [worker CPU time]: threads other than the serving one busy during timed visits, or any
// thread busy while the worker waits between requests (helpers started in setup()).
inline const check_kind worker_cpu{"worker-cpu", {"L5", "S8"}, "the worker's other threads used CPU around its timed samples"};
// Note [host idle]: a host variant whose worker (child processes included) was off the CPU
// through most of its timed spans: a sleep or a blocking wait in every call, such as a
// handicapped baseline's, which `outliers` cannot see (S2); the host side of L1's CPU reading.
inline const check_kind host_idle{"host-idle", {"S2", "L1"},
                                  "the host variant's process was off the CPU through most of its timed spans (it slept or blocked)"};
inline const check_kind priority_change{"priority-change", {"E3"}, "run() changed the worker's priority"};
// Note [declared threads used] (sampling_rounds.cpp): a variant on fewer threads than it declares.
inline const check_kind threads_used{"threads-used", {"E3"}, "the variant ran on fewer CPUs than the threads it declares"};
// Judge-side statistics and declarations.
inline const check_kind timer_resolution{"timer-resolution", {"T4"}, "samples too short for the timer"};
inline const check_kind outliers{"outliers", {"S2"}, "injected outliers (samples over 5x the median)"};
inline const check_kind sample_count{"sample-count", {"S5"}, "fewer samples than the minimum"};
// Physics: achieved bandwidth or FLOP/s above 105% of the measured (else datasheet) ceiling.
inline const check_kind speed_of_light{"speed-of-light", {"V3"}, "faster than the hardware's ceiling"};
inline const check_kind declared_work{"declared-work", {"V3"}, "declared bytes exceed every buffer moved once"};
inline const check_kind worker_timeout{"worker-timeout", {"V2"}, "the worker overran the judge's deadline"};
// Note [two clocks] (audit/clock_interposition.hpp): reported time against the judge's clock
// and the device audit's timestamps, and clocks the worker's binary replaced.
inline const check_kind wall_clock{"wall-clock", {"T3", "V1", "T6"}, "the worker's reported time disagrees with a clock it does not own"};
inline const check_kind build_symmetry{"build-symmetry", {"K4"}, "a translation unit was built with value-changing math flags"};
// Note [late look] (sampling_rounds.cpp, late_look.cpp): a variant whose speed changed once the sampling was over.
inline const check_kind late_look{"late-look", {"X7"}, "the candidate's calls after sampling ran far slower than its sampled calls"};
// Note [hidden mean] (mean_check.cpp): a median faster than the baseline's over a mean that is slower.
inline const check_kind hidden_cost{"hidden-cost", {"S2"},
                                    "the candidate's median is faster but its mean time a call is slower: its samples' trimmed "
                                    "mean, or (on the host) its calls back to back"};
// Note [armed timers] (judge_checks.cpp): a timer's handler taxing a worker's timed thread.
inline const check_kind armed_timers{"armed-timers", {"S8"}, "a worker held an armed timer whose signals interrupted its timed thread"};
// Note [floating-point environment] (judge_checks.cpp): the run-time half of build symmetry.
inline const check_kind fp_environment{"fp-environment", {"K4"},
                                       "the variant's thread ran with another floating-point mode than the baseline's (flush-to-zero, "
                                       "denormals-are-zero, rounding)"};
// Note [worker state] (runner/worker_state_checks.cpp): a process-wide setting changed in a worker.
inline const check_kind worker_state{"worker-state", {"W2", "M6", "X7"},
                                     "a variant changed a process-wide setting in its worker: an allocator threshold or a PyTorch "
                                     "backend"};
// Note [shared state] (runner/worker_state_checks.cpp): two workers of one pair holding one writable file.
inline const check_kind shared_state{"shared-state", {"V1"},
                                     "a candidate's worker and the baseline's held the same file open for writing: a channel "
                                     "between the variant and the judge's answer key"};
inline const check_kind thermal_throttle{"thermal-throttle", {"E7", "E2"}, "samples ran while the GPU was thermally throttled"};
// The device audit (CUPTI), per timed sample: the activity window between the start and stop
// events, and the API calls made while run() executed (src/audit/window_audit.hpp).
// Note [host excess]: in every timed sample, CUPTI or not, the host's span (start event to the
// device-wide sync after the stop event) minus the event span is the sync's own latency (8-13 us
// on the H100) unless device work ran past the stop event. Audited visits cannot be the only
// ones where escapes show, or a variant that detects the audit escapes in the others.
inline const check_kind escaped_work{"escaped-work", {"T1", "T2", "C4"}, "the host waited for device work past the stop event"};
inline const check_kind escaped_kernel{"escaped-kernel", {"T1"}, "a kernel launched in run() ran past the stop event"};
inline const check_kind escaped_copy{"escaped-copy", {"T2", "M3", "C2"}, "a copy or memset was still in flight at the stop event"};
inline const check_kind foreign_activity{"foreign-activity", {"T3", "C4", "L5"}, "device work run() did not launch ran inside the sample"};
inline const check_kind undeclared_device{"undeclared-device", {"C5", "E1"}, "work ran on a device the pair did not declare"};
inline const check_kind device_idle{"device-idle", {"L1"}, "the device sat idle through most of the sample"};
inline const check_kind device_allocation{"device-allocation", {"M1", "M4", "S7"}, "run() allocated device or pinned memory"};
inline const check_kind module_load{"module-load", {"L7", "K5"}, "run() loaded or JIT-compiled a module"};
inline const check_kind child_kernels{"child-kernels", {"C9"}, "a kernel launched child grids from the device"};
inline const check_kind host_callback{"host-callback", {"C1"}, "run() enqueued a host function"};
inline const check_kind access_policy{"access-policy", {"X4"}, "an undeclared access-policy (persisting L2) window"};
inline const check_kind math_mode{"math-mode", {"W2"}, "run() changed the cuBLAS math mode"};
inline const check_kind math_unit{"math-unit", {"V3", "W1"}, "the declared math unit is not what the kernels run"};
inline const check_kind library_precision{"library-precision", {"W2", "W1"}, "a reduced-precision cuBLAS policy in an fp32 variant"};
inline const check_kind library_passthrough{"library-passthrough", {"X6"}, "library kernels in a variant that declares none"};
// Note [audit tampering]: the audit fails closed. A worker the judge asked to audit whose audit
// could not start, was switched off, or whose audited samples came back without device activity
// leaves every row below unchecked, so the pair fails (only --audit off, recorded, skips it).
inline const check_kind device_audit{"device-audit",
                                     {"T1", "T2", "C1", "C4", "C5", "C9", "L1", "L7", "K5", "M4", "W2", "W3", "X4", "X6"},
                                     "the device audit could not watch this worker"};
inline const check_kind traffic{"traffic", {"W3"}, "a call moved fewer bytes than the pair declares (hardware counters)"};
inline const check_kind memory_fit{"memory-fit", {"E4"}, "the workload does not fit in the memory that is free"};
inline const check_kind unified_memory{"unified-memory", {"C10"}, "undeclared managed memory, or its migrations inside the sample"};
inline const check_kind kernel_choice{"kernel-choice", {"K6"}, "the kernels chosen per call changed between samples (tuning while timed)"};
// Note [recorded metrics]: a served item (a request's first token) that waited far longer than
// the baseline's slowest: a scheduler that starves one request to speed up the rest.
inline const check_kind latency_tail{"latency-tail", {"W12"}, "a served item waited far longer than the baseline's slowest (starved)"};
// Note [ranks]: a sample is the slowest rank's; a variant whose ranks' times drift far apart
// (rank 0 fast, another slow) is flagged, since only the slowest rank's time says what it costs.
inline const check_kind rank_skew{"rank-skew", {"D4"}, "the ranks' sample times differ far more than the baseline's"};
inline const check_kind collective_missing{"collective-missing", {"D2"}, "a multi-GPU variant that declares NCCL ran no NCCL kernel"};
inline const check_kind collective_count{"collective-count", {"D5"},
                                         "a multi-GPU variant ran another number of collectives a call than its workload declares"};
inline const check_kind kernel_count{"kernel-count", {"W3", "X1"}, "the device work per call changed between samples"};
// Checks a busy machine can fail on honest code: samples preempted past 5x the median, a time
// limit reached before the minimum samples, a host ceiling measured while the CPUs were busy,
// a starved process's page faults, a host worker that waited for a CPU more than it ran, a
// burst of load in a late look's samples, a helper thread starved of its core (CI, 2-core
// machine, 2026-11-28 on), a baseline with more threads than a candidate waiting longer for a CPU
// (Note [waiting visits]). A run that fails one says how busy the machine was; `bench explain`
// says they can.
inline bool load_sensitive(std::string_view check) {
  for (const auto* kind : {&outliers, &sample_count, &speed_of_light, &page_faults, &host_idle, &timed_slower, &late_look, &threads_used,
                           &contended})
    if (kind->name == check) return true;
  return false;
}

}  // namespace checks

}  // namespace aisp::verify
