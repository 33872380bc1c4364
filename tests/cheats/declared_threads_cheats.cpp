// Note [declared threads]: a pair that declares host_threads(2) may run its calls on a pool of
// one helper beside the calling thread; a variant that runs them on more threads than declared
// is a helper working outside the declaration and fails worker-cpu (L5). The honest pair, in a
// group of its own (declared_pools), passes every check (declared_threads_test.cpp). Note
// [declared threads used]: a baseline that runs serially under the pair's 2 threads, not
// declaring its own count, reads as serial code the pool beats and fails threads-used (E3).
// Run: aisp_cheats bench run --targets cheats
#include <atomic>
#include <cstddef>
#include <thread>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// Large enough that a slice's work outlasts a helper's wake-up (~1 ms a slice), so the threads'
// CPU reads as the share of the span they worked.
constexpr std::int64_t pool_benchmark_elements = std::int64_t{1} << 22;
constexpr const char* declared_pool_reason = "the call splits y = 2x + 1 over a pool of one helper started in setup()";

// A pool of `helpers` threads started in setup(): run() splits the call into helpers + 1
// slices, computes the first, and returns once every helper finished its own.
class slice_pool {
 public:
  explicit slice_pool(int helpers) : parts_(helpers + 1) {
    for (int h = 1; h <= helpers; ++h) std::thread([this, h] { serve(h); }).detach();
  }

  void run(const float* x, float* y, std::size_t n) {
    x_ = x;
    y_ = y;
    n_ = n;
    done_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    compute(0);
    const unsigned helpers = static_cast<unsigned>(parts_ - 1);
    for (unsigned seen = done_.load(std::memory_order_acquire); seen != helpers; seen = done_.load(std::memory_order_acquire))
      done_.wait(seen, std::memory_order_acquire);
  }

 private:
  void compute(int part) const {
    const std::size_t begin = n_ * static_cast<std::size_t>(part) / static_cast<std::size_t>(parts_);
    const std::size_t end = n_ * static_cast<std::size_t>(part + 1) / static_cast<std::size_t>(parts_);
    affine(x_ + begin, y_ + begin, end - begin);
  }

  void serve(int part) {
    for (unsigned seen = 0;;) {  // blocked in a futex between calls: no CPU while idle
      generation_.wait(seen, std::memory_order_acquire);
      seen = generation_.load(std::memory_order_acquire);
      compute(part);
      done_.fetch_add(1, std::memory_order_acq_rel);
      done_.notify_one();
    }
  }

  int parts_;
  std::atomic<unsigned> generation_{0};
  std::atomic<unsigned> done_{0};
  const float* x_ = nullptr;
  float* y_ = nullptr;
  std::size_t n_ = 0;
};

slice_pool* one_helper = nullptr;
slice_pool* three_helpers = nullptr;

void start_one_helper(run_context&) {
  if (one_helper == nullptr) one_helper = new slice_pool(1);
}
void start_three_helpers(run_context&) {
  if (three_helpers == nullptr) three_helpers = new slice_pool(3);
}
void on_one_helper(run_context& ctx) { one_helper->run(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x")); }
void on_three_helpers(run_context& ctx) {
  three_helpers->run(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

// `baseline_threads`: the serial baseline's own declared count (0: the pair's 2, undeclared).
[[nodiscard]] pair pool_pair(std::string target, variant optimized, int baseline_threads = 1) {
  pair declared = honest_elementwise_declaration(std::move(target), affine_math, dtype::f32, pool_benchmark_elements);
  variant serial = honest_baseline();
  serial.host_threads = baseline_threads;  // Note [declared threads used]: the serial baseline says it runs on one
  declared.host_threads(2, declared_pool_reason).add_variant(std::move(serial)).add_variant(std::move(optimized));
  return declared;
}

}  // namespace
}  // namespace aisp::cheats

namespace cheats = aisp::cheats;

AISP_REGISTER(cheats::pool_pair("declared_pools:one_helper",
                                cheats::cheating_variant("splits each call with the one helper it declared",
                                                         cheats::on_one_helper, cheats::start_one_helper)));
AISP_REGISTER(cheats::pool_pair("cheats:l5_helper_beyond_declared_threads",
                                cheats::cheating_variant("declares 2 threads and splits each call over 4",
                                                         cheats::on_three_helpers, cheats::start_three_helpers))
                  .summary(cheats::cheat_summary("L5", "declares 2 threads and splits each call over 4"))
                  .tag("cheat:L5")
                  .tag("check:worker-cpu"));
AISP_REGISTER(cheats::pool_pair("cheats:e3_baseline_on_fewer_threads_than_declared",
                                cheats::cheating_variant("splits each call with the one helper the pair declares",
                                                         cheats::on_one_helper, cheats::start_one_helper),
                                0)
                  .summary(cheats::cheat_summary("E3", "the pair declares 2 threads; the baseline runs on 1, undeclared"))
                  .tag("cheat:E3")
                  .tag("check:threads-used"));
