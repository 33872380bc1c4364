// The benchmark contract: a pair declares its workload, buffers, work, reference and variants.
// See docs/architecture.md §4. A pair file builds one `pair` and registers it with AISP_REGISTER.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "aisp/buffer_spec.hpp"
#include "aisp/run_context.hpp"
#include "aisp/workload.hpp"

namespace aisp {

enum class backend : std::uint8_t { cuda, host };
enum class goal : std::uint8_t { speed, memory, throughput, latency };
// Where the declared bytes move: the GPU's own memory (the default), or across PCIe between host
// and device. pcie_both_directions: copies overlap in both directions (full duplex), so the
// ceiling is both directions' measured pinned bandwidth together. pcie_one_direction: one copy
// at a time (H2D, D2H or a serial round trip), so the ceiling is one direction's bandwidth
// (the harmonic mean of H2D and D2H: exact for a round trip of equal halves).
// gpu_interconnect: the bytes each rank of a multi-GPU pair sends to its peers (NCCL's "bus
// bytes"), against one GPU's link bandwidth in one direction (NVLink on the lent machines).
enum class data_path : std::uint8_t { device_memory, pcie_both_directions, pcie_one_direction, gpu_interconnect };
[[nodiscard]] constexpr bool crosses_pcie(data_path path) {
  return path == data_path::pcie_both_directions || path == data_path::pcie_one_direction;
}

// The work one iteration must do: the fewest bytes through memory and the FLOPs.
struct work_amount {
  double bytes = 0;
  double flops = 0;
  // Special-function (MUFU) results per iteration: exp2, log2, rcp, rsqrt, sin, cos, tanh. A kernel
  // bound by them is judged against that unit's peak as well as the FMA peak (both are reported).
  double special_function_ops = 0;
};

// A tolerance looser than the dtype default must say why; the reason is recorded.
struct tolerance {
  double rtol = 0;
  double atol = 0;
  double max_rel_l2 = 0;  // 0: rtol, at least the dtype's default, at most max_declared_rel_l2
  std::string reason;
};

// Note [declared tolerance ceiling]: a declared tolerance (a pair's override, a variant's
// precision change) bounds the relative L2 error by at most this, e5m2's default and the
// loosest of any dtype (verify/tolerance.cpp: one left 0 takes its rtol). Element-wise bounds alone pass
// anything once atol is large, and a red team's "fp32 polynomial sine" declared 5 and returned
// the series' first term, 0.62-0.96 from the reference, verified (2026-12-04). The loosest
// declared in the lab is 8e-2 (ch16's fp8 weights).
inline constexpr double max_declared_rel_l2 = 0.16;

// The reference sees inputs and writes outputs as fp64, whatever the buffers' dtypes.
class reference_io {
 public:
  virtual ~reference_io() = default;
  [[nodiscard]] virtual const workload& work() const = 0;
  [[nodiscard]] virtual std::span<const double> input(std::string_view name) const = 0;
  [[nodiscard]] virtual std::span<double> output(std::string_view name) = 0;
  [[nodiscard]] std::int64_t param(std::string_view name) const { return work().get(name); }
  // Note [ranks]: with world size N, input() and output() hold every rank's buffer one after
  // another, rank 0 first (N times the declared count); each rank's inputs are its own draw.
  [[nodiscard]] virtual int world_size() const { return 1; }
};

// The unit whose peak bounds a variant's FLOP rate: SOL % and the physics gate (V3) judge its
// FLOP/s against this ceiling, so a tensor-core variant is not held to the FP32 SIMT peak.
enum class math_unit : std::uint8_t { fp32_simt, tf32_tensor, fp16_tensor, bf16_tensor, fp8_tensor };
[[nodiscard]] std::string_view math_unit_name(math_unit unit);
// As results.json names it: device_memory, pcie_both_directions, pcie_one_direction.
[[nodiscard]] std::string_view data_path_name(data_path path);

using stage_fn = std::function<void(run_context&)>;
using reference_fn = std::function<void(reference_io&)>;
using work_fn = std::function<work_amount(const workload&)>;

struct variant {
  std::string name;     // baseline, optimized, optimized_<step>
  std::string summary;  // one line: what changed against the previous variant
  stage_fn run;         // timed: one iteration on ctx.stream()
  stage_fn setup;       // untimed, optional: handles, plans; must not touch outputs
  stage_fn teardown;    // optional: releases what setup made
  std::string library;  // the vendor library whose kernels it runs ("cuBLAS"); "" = own kernels (X6)
  // A variant that computes in another precision than the baseline declares it ("bf16 inputs,
  // fp32 accumulate") and the tolerance its outputs are held to, with the reason. Reports show
  // the change; verification of this variant uses this tolerance instead of the pair's.
  std::string precision;
  std::optional<tolerance> precision_tolerance;
  math_unit math = math_unit::fp32_simt;  // what bounds its FLOP/s (tensor-core variants declare theirs)
  // D5, multi-GPU pairs: the NCCL collectives one call of run() launches, as the workload fixes
  // them (a bucketed all-reduce: its `buckets`). The judge checks that every audited call ran that
  // many NCCL kernels, so the bucket layout measured is the one the workload names. Unset: unchecked.
  std::function<std::int64_t(const workload&)> collectives;
  // Note [declared threads used]: the threads this variant's calls run on where fewer than the
  // pair's host_threads (a serial baseline beside a pooled candidate); 0: the pair's count.
  int host_threads = 0;
};

using param_map = std::map<std::string, std::int64_t, std::less<>>;

// The most ranks a pair may declare: one host's GPUs.
inline constexpr int max_world_size = 8;

// Note [declared latency trade]: a recorded latency a pair gives up by design, W12's bound on it.
struct latency_trade {
  std::string metric;
  double worst_factor = 0;  // the variant's worst over the baseline's worst, at most
  std::string why;
};
// Note [witnessed deliveries]: where a serving pair's items' outputs are, so that the judge reads
// each as run_context::deliver() hands it over, and when each item arrives.
struct delivery_spec {
  std::string output;                                              // an output buffer
  std::function<int(const workload&)> items;                        // how many items a call serves
  std::function<int(const workload&, int item)> outputs;            // how many outputs an item has
  std::function<std::int64_t(const workload&, int item, int index)> element;  // where its index-th output is
  // When an item arrives, in seconds after run() begins; empty: no `ttft_s` is witnessed.
  std::function<double(const workload&, int item)> arrival_s;
};
// The metrics the judge records from deliveries, which a delivering pair's run() cannot record.
inline constexpr std::string_view witnessed_first_output = "ttft_s";
inline constexpr std::string_view witnessed_per_output = "tpot_s";
// The most a declared trade may allow.
inline constexpr double max_traded_latency_factor = 4.0;
// The most threads a pair may declare (Note [declared threads]).
inline constexpr int max_host_threads = 256;

class pair {
 public:
  explicit pair(std::string target);

  pair& summary(std::string text);
  pair& on(backend where);
  pair& benchmark_size(param_map params);
  pair& validation_size(param_map params);
  pair& held_out_size(param_map params);
  pair& input(std::string name, dtype type, element_count_fn count,
              init_distribution init = init_distribution::uniform_signed);
  pair& output(std::string name, dtype type, element_count_fn count);
  pair& scratch(std::string name, dtype type, element_count_fn count);
  // Shaped buffers: the element count is the product of the named workload parameters.
  pair& input(std::string name, dtype type, std::vector<std::string> dims,
              init_distribution init = init_distribution::uniform_signed,
              buffer_meaning meaning = buffer_meaning::data);
  pair& output(std::string name, dtype type, std::vector<std::string> dims);
  // An input holding `source`'s values in `type` (Note [derived inputs] in aisp/buffer_spec.hpp):
  // `source` must be an input declared before it, and not derived itself. `scale` multiplies
  // the values before they are rounded: an i8 copy of values in [-1, 1) takes 127.
  pair& derived_input(std::string name, dtype type, std::string source, double scale = 1.0);
  // A buffer declared whole, as another process's pair declared it (Note [untrusted pairs] in
  // src/runner/pair_host.cpp: the judge's copy of a plugin's pair).
  pair& buffer(buffer_spec spec);
  // Note [ranks]: the named input (declared before) holds the same values on every rank (its
  // derived inputs follow); the challenges that change an element change it on every rank.
  pair& same_on_every_rank(const std::string& input);
  // The math is exact on small integers (copies, integer sums, permutations...): the harness
  // then also runs an exact-integer challenge with a bitwise comparison (X5).
  pair& exact_math();
  // Note [fresh calls]: every timed call gets new inputs. A pair whose meaning needs the same
  // inputs in every call declares it, with the reason; its calls are still verified.
  pair& fixed_inputs(std::string reason);
  // Note [short calls]: one call at the benchmark size lasts less than the timer floor (T4: 50 us
  // on a GPU), so a cold sample of one call cannot be timed. Unless the user picks --mode, the
  // judge times this pair in graph mode: batches of calls replayed from a CUDA graph, the L2
  // flushed before each batch (the batch's first call is cold, the rest find the L2 warm). The
  // reason says why the calls are short and why a warm L2 is fair (results: timing_mode_reason).
  pair& short_calls(std::string reason);
  // Note [data-dependent launches]: how many kernels a call launches depends on its inputs
  // (speculative decoding: the rounds depend on how many draft tokens are accepted). K6 then
  // asks every audited sample for the same kernels, not the same counts, and the count of
  // device operations a call may vary; the reason is recorded.
  pair& data_dependent_launches(std::string reason);
  // Note [launch gate] (src/harness/launch_gate.hpp): the judge queues each sample behind a kernel
  // that holds the GPU until the sample is queued, so the host's launch latency stays out of the
  // window. A pair that times the host's launches on purpose (launch overhead, CUDA graphs, a
  // serving loop that schedules from the GPU's answers) declares it, with the reason; its samples
  // are never gated (results: launch_gate_reason).
  pair& times_host_launches(std::string reason);
  // Note [declared threads]: a variant's work runs on `count` threads of its worker (a pool
  // started in setup(), torch's or OpenMP's intra-op threads), with the reason. Undeclared, a
  // worker's other threads are a helper working outside the timed thread (L5: worker-cpu,
  // late-write); declared, up to count - 1 other threads may work in a timed sample, using up to
  // count - 1 timed spans of CPU, and
  // their CPU after run() returned (pools spin before they sleep) is recorded, not failed: the
  // outputs' hashes around the call and the write barrier still catch a late write.
  pair& host_threads(int count, std::string reason);
  // A variant may set an access-policy (persisting-L2) window: the pair is about that (X4).
  pair& allow_access_policy_window();
  // Managed (unified) memory is refused unless declared: its migrations are work the timed
  // window hides or moves (C10). A pair about unified memory declares it.
  pair& allow_managed_memory();
  // The pair's kernels use instructions of exactly this compute capability (sm_90a's wgmma and
  // setmaxnreg exist on 9.0 only): elsewhere the judge skips it with `why` instead of failing it.
  pair& needs_compute_capability(int major, int minor, std::string why);
  // The declared bytes cross this path: SOL % and the physics gate use its ceiling.
  pair& moves_data_over(data_path path);
  pair& work(work_fn fn);
  // The fp64 truth, computed by the judge from the inputs it regenerates. It must be reentrant
  // (no shared mutable state): the judge computes several at once on other cores (issue 17);
  // `bench run --judge-threads 1` is the way out for one that is not.
  pair& reference(reference_fn fn);
  pair& tolerance_override(tolerance tol);
  pair& pursue(goal what);
  // Note [items]: what one call delivers, for a throughput pair's rate ("tokens": batch x new
  // tokens). Results then report items per second beside calls per second.
  pair& items_per_call(std::string item, std::function<double(const workload&)> count);
  // Note [sequential passes]: a job whose steps each need the previous step's result (a decode
  // loop: every token needs the last) must move a buffer once per step. The declared bytes may
  // then reach `passes` times every buffer moved once (V3), and the reason is recorded.
  pair& sequential_passes(std::function<double(const workload&)> passes, std::string reason);
  // Note [judged by a recorded metric]: the verdict compares the `quantile` of a value run()
  // records (run_context::record: a request's time per output token) instead of the call time:
  // the baseline's over the variant's, lower is better, with the baseline's twin as the noise
  // floor at the same quantile. `why` says what the pair is for, and is recorded.
  pair& judge_by_recorded(std::string metric, double quantile, std::string why);
  // Note [declared latency trade]: W12 takes a variant whose worst recorded latency is over 1.5x
  // the baseline's worst for one that starved an item. An optimization that trades one latency
  // for another by design (chunked prefill: a long prompt's first token later, every running
  // decode's tokens sooner) declares the trade: the recorded metric, how far its worst may go
  // (over 1.5x, at most max_traded_latency_factor: past that no trade is told from starvation)
  // and why. W12 then holds that metric to the declared factor, and its detail says so. The
  // metric the pair is judged by cannot be traded.
  pair& trades_latency(std::string metric, double worst_factor, std::string why);
  // Note [witnessed deliveries]: the items' outputs are timed by the judge as run() delivers them
  // (run_context::deliver), not by run()'s own clock: `tpot_s` and `ttft_s` are the judge's.
  pair& delivers(delivery_spec spec);
  // Note [ranks]: a multi-GPU pair. The harness starts one worker per rank, each on its own GPU
  // with its own buffers (each of the declared size), creates the NCCL communicator, starts every
  // sample of every rank together and takes the slowest rank's time; every rank's outputs are
  // verified (the reference sees all ranks' buffers, rank-major).
  pair& world_size(int gpus);
  pair& tag(std::string name);
  // K4: the value-changing math switches its translation unit was built with, as the build's
  // compiler launcher recorded them (scripts/record_math_flags): "none", or names joined by
  // "__". AISP_REGISTER sets it; a unit built without the launcher has no record.
  pair& built_with_math(std::string flags);
  pair& add_variant(variant v);
  pair& add_variant(std::string name, std::string what_changed, stage_fn run);

  // Read side, used by the harness.
  [[nodiscard]] const std::string& target() const { return target_; }
  [[nodiscard]] const std::string& summary_text() const { return summary_; }
  [[nodiscard]] backend where() const { return backend_; }
  [[nodiscard]] const std::vector<workload>& workloads() const { return workloads_; }
  [[nodiscard]] const workload& benchmark_workload() const;
  [[nodiscard]] const std::vector<buffer_spec>& buffers() const { return buffers_; }
  [[nodiscard]] const work_fn& work_of() const { return work_; }
  [[nodiscard]] const reference_fn& reference_of() const { return reference_; }
  [[nodiscard]] const std::optional<tolerance>& tolerance_of() const { return tolerance_; }
  [[nodiscard]] goal goal_of() const { return goal_; }
  [[nodiscard]] const std::string& item_name() const { return item_name_; }
  // 0 where the pair declares no items.
  [[nodiscard]] double items_at(const workload& work) const { return items_ ? items_(work) : 0.0; }
  // 1 where the pair declares no sequential passes.
  [[nodiscard]] double passes_at(const workload& work) const { return passes_ ? passes_(work) : 1.0; }
  [[nodiscard]] const std::string& passes_reason() const { return passes_reason_; }
  // "" where the verdict is on the call time.
  [[nodiscard]] const std::string& judged_metric() const { return judged_metric_; }
  [[nodiscard]] double judged_quantile() const { return judged_quantile_; }
  [[nodiscard]] const std::string& judged_reason() const { return judged_reason_; }
  // The declared trade of a recorded latency (Note [declared latency trade]), or null.
  [[nodiscard]] const latency_trade* traded_latency(std::string_view metric) const;
  [[nodiscard]] const std::vector<latency_trade>& latency_trades() const { return latency_trades_; }
  [[nodiscard]] const std::optional<delivery_spec>& deliveries() const { return deliveries_; }
  [[nodiscard]] bool is_exact_math() const { return exact_math_; }
  [[nodiscard]] bool allows_access_policy_window() const { return access_policy_window_; }
  [[nodiscard]] bool allows_managed_memory() const { return managed_memory_; }
  // What needs_compute_capability declared: {0, 0, ""} for any GPU.
  struct compute_capability_need {
    int major = 0;
    int minor = 0;
    std::string why;
  };
  [[nodiscard]] compute_capability_need needed_compute_capability() const { return {needed_major_, needed_minor_, needed_why_}; }
  // "" where the pair runs on a GPU of compute capability major.minor; else why not, in one line.
  [[nodiscard]] std::string unsupported_on(int major, int minor) const;
  [[nodiscard]] bool has_fixed_inputs() const { return !fixed_inputs_reason_.empty(); }
  [[nodiscard]] const std::string& fixed_inputs_reason() const { return fixed_inputs_reason_; }
  [[nodiscard]] const std::string& short_calls_reason() const { return short_calls_reason_; }
  [[nodiscard]] const std::string& data_dependent_launches_reason() const { return data_dependent_launches_reason_; }
  [[nodiscard]] const std::string& host_launches_reason() const { return host_launches_reason_; }
  [[nodiscard]] int host_threads() const { return host_threads_; }
  [[nodiscard]] const std::string& host_threads_reason() const { return host_threads_reason_; }
  // The threads a variant's calls run on: its own count, else the pair's (Note [declared threads used]).
  [[nodiscard]] int threads_of(const variant& v) const { return v.host_threads > 0 ? v.host_threads : host_threads_; }
  [[nodiscard]] data_path path_of() const { return data_path_; }
  [[nodiscard]] int gpus() const { return world_size_; }
  [[nodiscard]] const std::vector<std::string>& tags() const { return tags_; }
  [[nodiscard]] const std::vector<variant>& variants() const { return variants_; }
  [[nodiscard]] const std::optional<std::string>& build_math_flags() const { return build_math_flags_; }
  // Throws contract_error when absent.
  [[nodiscard]] const variant& find_variant(std::string_view name) const;
  [[nodiscard]] const buffer_spec& find_buffer(std::string_view name) const;
  // Every declared buffer moved once at `work`: the most the declared minimum bytes may be (V3).
  [[nodiscard]] double buffer_bytes(const workload& work) const;
  // "ch07" for "ch07:copy", "labs/host" for "labs/host:sum".
  [[nodiscard]] std::string group() const;
  [[nodiscard]] std::string short_name() const;

  // Throws contract_error listing every gap: no reference, no validation size, no baseline...
  void validate() const;

 private:
  pair& add_buffer(std::string name, dtype type, buffer_role role, element_count_fn count,
                   init_distribution init);
  // validate()'s buffers: dims that name a size every workload gives, and at least one element.
  void check_buffer_sizes(const std::function<void(const std::string&)>& gap) const;

  std::string target_;
  std::string summary_;
  backend backend_ = backend::cuda;
  std::vector<workload> workloads_;
  std::vector<buffer_spec> buffers_;
  work_fn work_;
  reference_fn reference_;
  std::optional<tolerance> tolerance_;
  goal goal_ = goal::speed;
  std::string item_name_;
  std::function<double(const workload&)> items_;
  std::function<double(const workload&)> passes_;
  std::string passes_reason_;
  std::string judged_metric_;
  double judged_quantile_ = 0.5;
  std::string judged_reason_;
  std::vector<latency_trade> latency_trades_;
  std::optional<delivery_spec> deliveries_;
  bool exact_math_ = false;
  bool access_policy_window_ = false;
  bool managed_memory_ = false;
  int needed_major_ = 0;  // 0: any compute capability
  int needed_minor_ = 0;
  std::string needed_why_;
  std::string fixed_inputs_reason_;
  std::string short_calls_reason_;
  std::string data_dependent_launches_reason_;
  std::string host_launches_reason_;
  int host_threads_ = 1;
  std::string host_threads_reason_;
  data_path data_path_ = data_path::device_memory;
  int world_size_ = 1;
  std::vector<std::string> tags_;
  std::vector<variant> variants_;
  std::optional<std::string> build_math_flags_;
};

// Registration happens at static-initialization time, one statement per pair file.
struct registrar {
  // `math_flags`: the unit's AISP_TU_MATH_FLAGS, or nullptr when the build did not record it.
  registrar(pair declared, const char* math_flags);
};

}  // namespace aisp

#define AISP_CONCAT_INNER(a, b) a##b
#define AISP_CONCAT(a, b) AISP_CONCAT_INNER(a, b)
#define AISP_STRINGIFY_INNER(x) #x
#define AISP_STRINGIFY(x) AISP_STRINGIFY_INNER(x)
#ifdef AISP_TU_MATH_FLAGS
#define AISP_TU_MATH_RECORD AISP_STRINGIFY(AISP_TU_MATH_FLAGS)
#else
#define AISP_TU_MATH_RECORD nullptr
#endif
#define AISP_REGISTER(pair_expression) \
  static const ::aisp::registrar AISP_CONCAT(aisp_registrar_, __LINE__){pair_expression, AISP_TU_MATH_RECORD}
