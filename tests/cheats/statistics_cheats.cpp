// Planted cheats of the statistical rows (S2, S5, S7) and of timer granularity (T4): the outputs
// are right; the samples lie. Outliers planted in the baseline, calls too slow for the minimum
// sample count, an allocator in the timed call, calls too short for the clock. Each must fail with
// its row's code. S1, S3, S4, S6 and S8 are rules of the statistics themselves (docs/validity.md).
// Run: aisp_cheats bench run --targets cheats
#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// ---- S2: the baseline sleeps 20 ms on every 4th call: injected outliers that make the
// honest optimized variant look faster by any statistic that is not robust ----
void baseline_with_outliers(run_context& ctx) {
  static int calls = 0;
  if (++calls % 4 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

[[nodiscard]] pair injected_outliers_pair() {
  return elementwise_declaration("cheats:s2_baseline_outliers", "S2")
      .summary(cheat_summary("S2", "the baseline sleeps 20 ms on every 4th call"))
      .add_variant("baseline", "planted cheat: sleeps 20 ms on every 4th call",
                   baseline_with_outliers)
      .add_variant("optimized", "honest loop: y = 2x + 1", honest_run(affine_math));
}

// ---- S5: 0.4 s per call at the benchmark size: a 0.3 s budget holds one or two samples ----
// Only the timed size is slow, so the verification sizes stay quick.
void slow_at_benchmark_size(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  if (n == static_cast<std::size_t>(benchmark_elements)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
  }
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), n);
}

// ---- S7: a scratch vector allocated and freed on every call ----
void scratch_per_call(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  std::vector<double> doubled(n);
  for (std::size_t i = 0; i < n; ++i) doubled[i] = 2.0 * static_cast<double>(x[i]);
  keep_alive(doubled.data());
  for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<float>(doubled[i] + 1.0);
}

// ---- T4: one element per call (tens of nanoseconds), timed one call per sample ----
[[nodiscard]] pair below_timer_resolution_pair() {
  return elementwise_declaration("cheats:t4_one_call_per_sample", "T4", affine_math, dtype::f32, 1)
      .summary(cheat_summary("T4", "a single-element call timed one call per sample"))
      .add_variant(honest_baseline())
      .add_variant("optimized", "honest loop, timed at one element per call",
                   honest_run(affine_math));
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::injected_outliers_pair());
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:s5_too_few_samples", "S5",
                                             "sleeps 0.4 s per call at the benchmark size",
                                             aisp::cheats::slow_at_benchmark_size));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:s7_allocates_per_call", "S7",
                                             "allocates and frees a scratch vector per call",
                                             aisp::cheats::scratch_per_call));
AISP_REGISTER(aisp::cheats::below_timer_resolution_pair());
