#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "aisp/check.hpp"
#include "harness/process_probes.hpp"
#include "harness/timing.hpp"

namespace aisp {
namespace {

// Host pairs are timed with the steady clock (T6). Each sample starts from cold CPU caches:
// the sampler first writes a buffer larger than the last-level caches of the CI machines.
constexpr std::size_t cache_flush_bytes = std::size_t{64} << 20;

class host_sampler final : public sampler {
 public:
  host_sampler() : flush_buffer_(cache_flush_bytes / sizeof(std::uint64_t)) {}

  void prepare(std::function<void()> one_call, int calls_per_sample) override {
    AISP_EXPECTS(calls_per_sample >= 1, "a sample needs at least one call");
    one_call_ = std::move(one_call);
    calls_ = calls_per_sample;
  }

  sample_record take(const std::function<void()>& before) override {
    const auto begin = std::chrono::steady_clock::now();
    if (before) before();
    ++generation_;
    for (auto& word : flush_buffer_) word = generation_;
    // Note [work between calls]: a helper that finishes each call after run() returned works
    // between the spans, where the in-span reading never looks. Each live thread's own runtime
    // (schedstat) is exact; the process clock drifts by +-1 ms over a visit (2026-11-28), more
    // than a small helper's work. The fill threads of `before` have left /proc by now.
    const auto runtimes_before = other_thread_runtimes();
    const double others_before = other_threads_cpu_s();
    const long long faults_before = minor_faults_so_far();
    const auto start = std::chrono::steady_clock::now();
    for (int call = 0; call < calls_; ++call) one_call_();
    const auto stop = std::chrono::steady_clock::now();
    sample_record record;
    record.minor_faults = minor_faults_so_far() - faults_before;
    record.other_threads_cpu_s = other_threads_cpu_s() - others_before;
    if (runtimes_at_last_span_) record.other_threads_between_s = cpu_between(*runtimes_at_last_span_, runtimes_before, 0.0);
    runtimes_at_last_span_ = other_thread_runtimes();
    record.calls = calls_;
    record.host_wall_s = std::chrono::duration<double>(stop - start).count();
    record.duration_s = record.host_wall_s / calls_;
    record.cost_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return record;
  }

  void forget_last_span() override { runtimes_at_last_span_.reset(); }

  void run_prepared_once() override {
    for (int call = 0; call < calls_; ++call) one_call_();
  }

 private:
  std::function<void()> one_call_;
  int calls_ = 1;
  std::vector<std::uint64_t> flush_buffer_;
  std::uint64_t generation_ = 0;
  std::optional<thread_runtimes> runtimes_at_last_span_;
};

}  // namespace

std::unique_ptr<sampler> make_host_sampler() { return std::make_unique<host_sampler>(); }

}  // namespace aisp
