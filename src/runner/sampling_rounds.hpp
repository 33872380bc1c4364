// Interleaved sampling: every worker takes a short visit of samples in turn, forward on even
// rounds and backward on odd ones (A B B A ...), so that neither variant always goes first and
// drift or heat hit all of them. It ends when every worker's stopping rule has decided.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runner/run_config.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

// `telemetry` (may be empty) is read before and after every visit: throttled visits and the
// energy per call (E7, E8). `interleave_truths`: the baseline answers truth requests between the
// rounds, timed for the timed-slower check (Note [interleaved truths], host pairs).
// "15 s in: baseline 412 samples (median's CI ±0.6%), optimized 390 samples (±0.4%, stopped), ...":
// the heartbeat's line on a sampling in progress.
[[nodiscard]] std::string sampling_state(const std::vector<variant_slot>& slots, double elapsed_s, double confidence);

// `heartbeat` (may be empty) gets a line on the sampling's state every sampling_heartbeat_s;
// `between_rounds` (may be empty) runs after each round's visits, with the round's number.
inline constexpr double sampling_heartbeat_s = 15.0;
void run_sampling_rounds(std::vector<variant_slot>& slots, const run_config& config, const telemetry_fn& telemetry,
                         std::vector<check_result>& checks, bool interleave_truths = false,
                         const std::function<void(const std::string&)>& heartbeat = {},
                         const std::function<void(int)>& between_rounds = {});

// Which slots visit in the next round: every one still sampling, and a stopped one only while its
// sampling time is not ahead of the busiest one still sampling (Note [paced stopped variants]).
[[nodiscard]] std::vector<bool> slots_to_visit(const std::vector<variant_slot>& slots);

// One uninterrupted window per worker after sampling, for the energy per call (Note [energy window]).
void measure_energy(std::vector<variant_slot>& slots, const run_config& config, const telemetry_fn& telemetry);

// The per-call durations of a slot's samples, in order.
[[nodiscard]] std::vector<double> durations_of(const variant_slot& slot);

// Note [host excess] (battery.hpp): the median of host span minus event span per sample.
[[nodiscard]] double median_host_excess_s(const std::vector<sample_record>& samples);

// Note [worker CPU time]: other threads busy in timed visits, or the worker busy while idle (L5, S8).
// Note [declared threads]: a pair on `declared_threads` threads lets the others use that many
// timed spans less one.
// The verified samples' fingerprints of a sample reply ("verified": each probed by the worker
// after its call, Note [verified after the call]), kept for check_timed_calls. `fresh_inputs`:
// the samples' inputs were fresh where the pair fixes them, so their truths' must be too.
void keep_verified_samples(variant_slot& slot, const nlohmann::json& reply, bool fresh_inputs = false);
void check_worker_cpu(const variant_slot& slot, bool on_gpu, std::vector<check_result>& checks, int declared_threads);
void check_worker_cpu(const variant_slot& slot, bool on_gpu, std::vector<check_result>& checks);
// Note [declared threads used]: a host variant on fewer CPUs than the threads it declares (E3).
// Host pairs run in the worker only (an executable pair's program is another process).
// Note [slow worker clock]: a host worker's timed spans against the CPU's timestamp counter.
void check_worker_clock(const variant_slot& slot, std::vector<check_result>& checks);
void check_threads_used(const worker_cpu_time& cpu, int declared_threads, bool executable, const std::string& label,
                        std::vector<check_result>& checks);
// Note [host idle]: a host variant's worker off the CPU through most of its timed spans (S2, L1).
void check_host_idle(const variant_slot& slot, bool on_gpu, std::vector<check_result>& checks);
// After summarize_slot: timer resolution (T4), outliers (S2), sample count (S5), faults (M6),
// work escaped past the stop event (T1, T2, C4; GPU only), and the two checks above.
void check_sampling(const variant_slot& slot, const run_config& config, bool on_gpu, std::vector<check_result>& checks,
                    bool tail_is_measured = false, int declared_threads = 1);
// Note [two clocks]: wall-clock when most of the worker's audited samples disagree with the audit.
void check_reported_clock(const variant_slot& slot, std::vector<check_result>& checks);

// Note [visit order]: the slots' indexes in the order round `round` visits them.
std::vector<std::size_t> visit_order(std::size_t slots, int round);

// Fills the slot's summary, CI, clock statistics and achieved rates from its samples.
void summarize_slot(variant_slot& slot, const work_amount& work, double default_sm_clock_mhz,
                    double confidence);

}  // namespace aisp
