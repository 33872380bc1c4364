#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "aisp/check.hpp"
#include "harness/fp_mode_sampler.hpp"
#include "harness/process_probes.hpp"
#include "harness/timing.hpp"
#include "support/timestamp_counter.hpp"

namespace aisp {
namespace {

// Host pairs are timed with the steady clock (T6). In cold mode each sample starts from cold CPU
// caches: the sampler first writes a buffer larger than the last-level caches of the CI machines.
// Hot mode does not (until 2026-12-03 it did, so a hot batch's first call was a cold one: a
// variant that did its work once a batch then read only ~2x faster, not the batch's ~8x).
constexpr std::size_t cache_flush_bytes = std::size_t{64} << 20;
// Note [bracketed CPU reading]: under a microsecond a reading, two readings a sample.
constexpr double process_clock_slack_s = 5e-6;
// A thread that woke and slept again uses microseconds; one that shared the work, far more.
constexpr double busy_thread_s = 10e-6;

class host_sampler final : public sampler {
 public:
  explicit host_sampler(bool flush) : flush_(flush), flush_buffer_(flush ? cache_flush_bytes / sizeof(std::uint64_t) : 0) {}

  void prepare(std::function<void()> one_call, int calls_per_sample) override {
    AISP_EXPECTS(calls_per_sample >= 1, "a sample needs at least one call");
    one_call_ = std::move(one_call);
    calls_ = calls_per_sample;
  }

  sample_record take(const std::function<void()>& before) override {
    const auto begin = std::chrono::steady_clock::now();
    // Note [work before the window]: from the fill on, nothing but this thread's fill and flush
    // should run until the window opens; a helper that computes the answer from the fresh inputs
    // there (an executable pair's variant process did, 47x, 2026-12-03) works off every clock.
    // Note [work during the fill]: read before the inputs change, not after. They were drawn
    // front to back into pages a variant's helper thread or program can watch, over milliseconds,
    // and red team fifteen's followed the draws, computed up to 85% of the call from each chunk
    // as it was written, and stopped when the output fill began: its CPU fell between no two
    // readings (1.9-2.5x with every check passing, an executable program and a plugin's declared
    // pool, 2026-12-05). Now a host sample's inputs are drawn into private memory before the
    // sample (variant_session::stage_call) and only copied in here, inside the readings: the
    // pages change in one quick pass, and whatever works from then to the window is charged.
    // Reading before the draws instead charged an honest torch pool's spinning through them
    // (106 ms against 81 ms of spans).
    const auto others_at_fill = other_thread_runtimes();
    const double children_at_fill = children_cpu_s();
    const auto cpu_at_fill = take_cpu_reading();
    if (before) before();
    if (flush_) {
      ++generation_;
      for (auto& word : flush_buffer_) word = generation_;
    }
    // The children's walk of /proc stays outside the process clock's readings, so its own CPU
    // does not count as the span's (Note [host idle]); so do the other threads' runtimes.
    const auto others_before = other_thread_runtimes();
    const auto children_before = read_child_threads();
    open_fp_mode_window();  // Note [sampled fp mode]: the mode inside the calls; its timer calls outside the CPU readings
    const auto cpu_before = take_cpu_reading();
    const auto others_s = [](const cpu_reading& r) { return r.process_cpu_s - r.thread_cpu_s; };
    const long long faults_before = minor_faults_so_far();
    // Note [slow worker clock]: the counter read inside the clock's readings, so an honest clock
    // span holds the counter's span (and a clock read's cost more), never less.
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t ticks_before = timestamp_counter();
    for (int call = 0; call < calls_; ++call) one_call_();
    const std::uint64_t ticks_after = timestamp_counter();
    const auto stop = std::chrono::steady_clock::now();
    sample_record record;
    record.counter_ticks = ticks_after - ticks_before;
    record.minor_faults = minor_faults_so_far() - faults_before;
    const auto cpu_after = take_cpu_reading();
    close_fp_mode_window();
    const auto children_after = read_child_threads();
    const auto children = child_threads_between(children_before, children_after, busy_thread_s);
    // Note [program page faults]
    // An executable baseline program dropped its pages of the judge's shared buffers after every
    // call (madvise MADV_DONTNEED): the data stayed, and each call faulted 32 MiB back in, 5.44x
    // "faster" for the same loop, since the worker counted only its own faults (red team eleven,
    // 2026-12-05). The child processes' faults across the span count as the worker's (M6), read
    // outside the timed span as their CPU is.
    record.minor_faults += children_after.minor_faults - children_before.minor_faults;
    // Note [other threads' runtime]: each live thread's own runtime, not the process clock minus
    // the thread clock alone, so a worker with no other thread reads nothing and a helper's tens
    // of microseconds in a short run stand out (check_worker_cpu's host floor); the process clock
    // still counts a thread started and joined inside the span, past its reading noise.
    const auto others_after = other_thread_runtimes();
    record.other_threads_cpu_s = span_cpu_of_other_threads(others_before, others_after,
                                                           others_s(cpu_after) - others_s(cpu_before), process_clock_slack_s);
    record.busy_other_threads = threads_busy_between(others_before, others_after, busy_thread_s);
    record.process_cpu_s = cpu_after.process_cpu_s - cpu_before.process_cpu_s + children.cpu_s;
    // Note [executable pair threads]: the child program's threads beside its busiest one.
    record.child_helpers_cpu_s = std::max(0.0, children.cpu_s - children.busiest_thread_s);
    record.busy_child_threads = children.busy_threads;
    record.before_window_cpu_s = span_cpu_of_other_threads(others_at_fill, others_before, others_s(cpu_before) - others_s(cpu_at_fill),
                                                           process_clock_slack_s) +
                                 (children_before.cpu_s() - children_at_fill);
    record.calls = calls_;
    record.host_wall_s = std::chrono::duration<double>(stop - start).count();
    record.duration_s = record.host_wall_s / calls_;
    record.cost_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return record;
  }

  // Note [batch reuse]: the call alone, without a timed sample's CPU and thread probes: their
  // /proc reads just before it leave a call of microseconds 1.5x slower than its share of a
  // batch, which pays them once.
  sample_record take_one(const std::function<void()>& before, const std::function<void()>& call) override {
    const auto begin = std::chrono::steady_clock::now();
    if (before) before();
    const auto start = std::chrono::steady_clock::now();
    if (call) call();  // an empty call: the window alone
    const auto stop = std::chrono::steady_clock::now();
    sample_record record;
    record.host_wall_s = std::chrono::duration<double>(stop - start).count();
    record.duration_s = record.host_wall_s;
    record.cost_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return record;
  }

  void run_prepared_once() override {
    for (int call = 0; call < calls_; ++call) one_call_();
  }

 private:

  std::function<void()> one_call_;
  int calls_ = 1;
  bool flush_ = true;
  std::vector<std::uint64_t> flush_buffer_;
  std::uint64_t generation_ = 0;
};

}  // namespace

std::unique_ptr<sampler> make_host_sampler(timing_mode mode) { return std::make_unique<host_sampler>(mode == timing_mode::cold); }

}  // namespace aisp
