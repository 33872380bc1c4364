// Timing modes and what one sample records. See Note [cold L2 flush] in device_probes.hpp.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <cuda_runtime_api.h>

namespace aisp {

// cold:  per sample, reset persisting L2, flush L2, device sync, events around the calls.
// hot:   no flush; a batch of back-to-back calls per sample, for microsecond kernels.
// graph: the batch of calls is captured once into a CUDA graph and replayed, after a flush.
enum class timing_mode { cold, hot, graph };

[[nodiscard]] std::string_view timing_mode_name(timing_mode mode);
[[nodiscard]] std::optional<timing_mode> parse_timing_mode(std::string_view text);

struct sample_record {
  double duration_s = 0;     // per call: event (or steady-clock, on host) time / calls
  double host_wall_s = 0;    // host clock around the calls, sync included
  double cost_s = 0;         // everything the sample took: flush, sync, calls, clock probe
  double sm_clock_mhz = 0;   // 0 on host
  int calls = 1;
  // Note [worker CPU time]: CPU time of the worker's other threads across the timed span (the
  // harness's own fill threads have finished before it opens); stays in the worker.
  double other_threads_cpu_s = 0;
  // Note [declared threads]: how many other threads ran (10 us or more) across the same span.
  int busy_other_threads = 0;
  // Note [host idle]: the whole process's CPU time across the same span, its child processes'
  // included; host sampler only (the device sampler leaves it 0).
  double process_cpu_s = 0;
  // Note [executable pair threads]: the child processes' CPU across the same span beyond their
  // busiest thread's, and how many of their threads ran 10 us or more (host sampler only).
  double child_helpers_cpu_s = 0;
  int busy_child_threads = 0;
  // M6: the process's minor page faults across the same span. The harness's own work before it
  // (input fills on every core, whose thread stacks fault on a 16-core machine) stays out.
  long long minor_faults = 0;
  // Note [work before the window] (host sampler): the CPU of the process's other threads and of
  // its child processes between the inputs' fill and the timed span (the cold flush's time).
  double before_window_cpu_s = 0;
  bool gated = false;        // queued behind the launch gate (Note [launch gate])
  // Note [slow worker clock]: the timestamp counter's ticks across the host sampler's timed span
  // (host_wall_s on the worker's clock); 0 where it has none.
  std::uint64_t counter_ticks = 0;
};

// The worker's CPU time beyond the calling thread's, so far (Note [worker CPU time]).
[[nodiscard]] double other_threads_cpu_s();
// The process's minor page faults so far (getrusage).
[[nodiscard]] long long minor_faults_so_far();

// Watches each sample from the inside (the CUPTI audit): told just before the start and stop
// events are recorded, while run() executes, and when the sample is complete. Also told of the
// session's phases (setup, warmup, samples, verify) for the trace.
class timing_observer {
 public:
  virtual ~timing_observer() = default;
  virtual void before_start_event() = 0;
  virtual void run_begins() = 0;
  virtual void run_ends() = 0;
  virtual void before_stop_event() = 0;
  virtual void sample_taken(int calls) = 0;
  virtual void phase_begins(std::string_view name) = 0;
  virtual void phase_ends() = 0;
};

// A timing mode this pair's run() cannot be timed in (graph mode, when run() does something a
// stream capture refuses, such as launching a graph itself): the pair is skipped with the reason.
class unsupported_mode : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Takes samples of `calls_per_sample` back-to-back calls of `one_call`.
class sampler {
 public:
  virtual ~sampler() = default;
  virtual void prepare(std::function<void()> one_call, int calls_per_sample) = 0;
  // `before` (may be empty) runs first, untimed and before the cold-mode flush: the fresh
  // inputs and output fill of Note [fresh calls].
  virtual sample_record take(const std::function<void()>& before = {}) = 0;
  // Note [batch reuse]: `call` once, after `before`, timed as a hot sample of one call: no flush,
  // no capture, whatever the mode (an empty `call` times the window alone).
  virtual sample_record take_one(const std::function<void()>& before, const std::function<void()>& call) = 0;
  // Runs the prepared batch once, untimed, on the timed path (graph replay in graph mode).
  virtual void run_prepared_once() = 0;
};

using stream_step = std::function<void(cudaStream_t)>;

// `observer` may be null (no audit); it must outlive the sampler. `read_flush`: the cold flush
// reads (the default) rather than writes (l2_flush_kind in device_probes.hpp). `align`, when
// set, is enqueued just before each start event (Note [ranks]: the barrier of every rank).
// `launch_gate`: each sample's work is queued behind a held kernel (Note [launch gate]; not with
// `align`).
[[nodiscard]] std::unique_ptr<sampler> make_device_sampler(timing_mode mode, cudaStream_t stream,
                                                           timing_observer* observer = nullptr, bool read_flush = true,
                                                           stream_step align = {}, bool launch_gate = false);
// Cold mode writes past the CPU caches before each sample; hot (and graph, which a host pair
// times as hot) does not.
[[nodiscard]] std::unique_ptr<sampler> make_host_sampler(timing_mode mode);

}  // namespace aisp
