// Planted cheats of the statistical rows (S2, S5, S7, S8) and of timer granularity (T4): the
// outputs are right; the samples lie. Outliers planted in the baseline, a baseline that sleeps
// in every call, calls too slow for the minimum sample count, an allocator in the timed call,
// calls too short for the clock, a baseline that runs at two speeds in its two workers. Each must
// fail with its row's code (S8: its verdict is inconclusive, with the reason). S1, S3, S4 and S6
// are rules of the statistics themselves.
// Run: aisp_cheats bench run --targets cheats
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <string>
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

// ---- S2: the baseline does its work, then sleeps 1 ms on every call: every sample is slow
// alike, so no sample is an outlier, and the honest optimized variant looks 20x faster. Its
// process is off the CPU through most of each timed span (Note [host idle]) ----
void baseline_that_sleeps(run_context& ctx) {
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// ---- S8: the baseline takes eight times as long in whichever of its two workers reaches setup()
// second (an abstract socket name, held for the process's life, decides): the baseline and its
// twin, the same code, are measured 8x apart, and the noise floor is a fact of the run, not of
// the code (Note [disturbed noise floor]). A twin much slower than the baseline is the case the
// rule once missed (read linearly, a 4x slower twin's floor stayed under 100% while the slow
// worker's CI widened; the rule now reads the gap in log space, and 8x slower reads 87.5%
// linearly). The slow worker adds seven times its fastest call, not a multiple of each call: a
// call the machine's load slowed would be slowed eightfold, and on a loaded 2-core machine the
// twin's CI then grew past the rule's reach (inconclusive for want of samples, not for the
// disturbance, in 2 of ~20 local suite runs, 2026-12-03) ----
bool slow_worker = false;
int held_name = -1;

void claim_the_fast_worker(run_context&) {
  if (held_name >= 0) return;
  held_name = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string name = "aisp_s8_" + std::to_string(getppid());
  std::memcpy(address.sun_path + 1, name.data(), name.size());  // abstract: sun_path[0] == 0
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  slow_worker = bind(held_name, reinterpret_cast<const sockaddr*>(&address), length) != 0;
}

void two_speed_baseline(run_context& ctx) {
  static auto fastest = std::chrono::steady_clock::duration::max();
  const auto start = std::chrono::steady_clock::now();
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
  if (!slow_worker) return;
  const auto took = std::chrono::steady_clock::now() - start;
  fastest = std::min(fastest, took);
  const auto until = start + took + 7 * fastest;  // then spinning
  while (std::chrono::steady_clock::now() < until) {
  }
}

[[nodiscard]] pair unalike_workers_pair() {
  return elementwise_declaration("cheats:s8_baseline_at_two_speeds", "S8")
      .summary(cheat_summary("S8", "the baseline runs 8x slower in one of its two workers"))
      .add_variant(variant{"baseline", "planted cheat: 8x slower in the worker that reaches setup() second",
                           two_speed_baseline, claim_the_fast_worker, {}, {}, {}, {}, {}, {}})
      .add_variant("optimized", "honest loop", honest_run(affine_math));
}

[[nodiscard]] pair injected_outliers_pair() {
  return elementwise_declaration("cheats:s2_baseline_outliers", "S2")
      .summary(cheat_summary("S2", "the baseline sleeps 20 ms on every 4th call"))
      .add_variant("baseline", "planted cheat: sleeps 20 ms on every 4th call",
                   baseline_with_outliers)
      .add_variant("optimized", "honest loop: y = 2x + 1", honest_run(affine_math));
}

// ---- S2 x X7: a baseline Tenths / 10 times as long in its timed samples (its pass, then
// spinning), honest in the judge's other requests (it reads which one it serves from its worker's
// stdin buffer). Five times: over the 3x bound of truths taken after sampling; 2.5 times: under
// it, over the 1.5x of truths interleaved with the rounds (Note [interleaved truths]). Twice read
// 1.46-1.91x on the loaded CI machine (2026-12-04): too near the bound for a fixture ----
template <int Tenths>
void baseline_busier_when_timed(run_context& ctx) {
  const auto start = std::chrono::steady_clock::now();
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
  if (buffered_request().find("\"op\":\"sample\"") == std::string_view::npos) return;
  const auto until = start + Tenths * (std::chrono::steady_clock::now() - start) / 10;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// ---- S2, a cost the median hides (Note [hidden mean]): the candidate's call is a unit (16 passes,
// then a spin to at least 0.3 ms from its start), and in a third of its calls (a hash of a call
// counter) it spins to 4.5 units: under the outliers check's 5x the median, and a mean (each
// variant's fastest 95%: about 2.0 units) ~1.4 times the baseline's 1.5 units, over the twin's
// margin (at most 15%). History: 40% of calls 4.5x slow against 1.7x, the unit the passes alone,
// read 1.00-1.54x by the median on a loaded 2-core machine (2026-12-06): calls of ~0.1 ms, at the
// batching floor (100 us a sample), whose fast calls' spread under load put the median, the fast
// calls' 83rd percentile, near the baseline's; a CI run missed. The spin's absolute floor keeps a
// call one sample and the fast calls tight (a preemption inside a spin ends with it); a third slow
// puts the median at their 75th percentile. And the judge now samples on until each variant's mean
// is known within 5% (Note [the mean known too]), where its median's CI stopped it at ~30
// samples. At 45% slow calls the median sat near the slow ones (2026-12-05); where the median
// claim fails, outliers (S2) often fires ----
constexpr int candidate_passes = 16;
constexpr auto least_unit = std::chrono::microseconds(300);

void passes_of_affine(run_context& ctx, int passes) {
  for (int pass = 0; pass < passes; ++pass) affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

// The passes, then a spin to `tenths` tenths of a unit from the call's start: the passes' time,
// or least_unit where they took less.
void passes_then_spin_to(run_context& ctx, int tenths) {
  const auto start = std::chrono::steady_clock::now();
  passes_of_affine(ctx, candidate_passes);
  const auto unit = std::max<std::chrono::steady_clock::duration>(std::chrono::steady_clock::now() - start, least_unit);
  const auto until = start + tenths * unit / 10;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Whether a variant's call number `call` is one of `one_in`, by a hash of it: a fixed pattern
// aliased with the judge's own cadence of calls between samples, and one run sampled few of its
// slow calls.
bool hashed_one_in(std::uint64_t call, std::uint64_t one_in) {
  std::uint64_t mixed = call * 0x9e3779b97f4a7c15ULL;
  mixed ^= mixed >> 31;
  return mixed % one_in == 0;
}

// A unit a call, and SlowTenths tenths of one in one call of OneIn.
template <std::uint64_t OneIn, int SlowTenths>
void slow_in_some_calls(run_context& ctx) {
  static std::uint64_t calls = 0;
  passes_then_spin_to(ctx, hashed_one_in(++calls, OneIn) ? SlowTenths : 10);
}

// The pair of these fixtures: a baseline of 1.5 units against `candidate`.
[[nodiscard]] pair against_a_baseline_of_one_and_a_half_units(std::string target, std::string_view summary, std::string what,
                                                             stage_fn candidate) {
  return elementwise_declaration(std::move(target), "S2")
      .summary(cheat_summary("S2", summary))
      .add_variant("baseline", "16 passes of y = 2x + 1, then a spin to 1.5 units (a unit: the passes' time, at least 0.3 ms)",
                   [](run_context& ctx) { passes_then_spin_to(ctx, 15); })
      .add_variant("optimized", std::move(what), std::move(candidate));
}

[[nodiscard]] pair hidden_mean_pair() {
  return against_a_baseline_of_one_and_a_half_units(
      "cheats:s2_fast_median_slow_mean", "the candidate is fast in most calls and 4.5x slower in a third of them: a fast median, a slow mean",
      "planted cheat: 16 passes, a spin to a unit, and to 4.5 units in a third of calls", slow_in_some_calls<3, 45>);
}

// ---- S2, a cost in fewer calls than the means trim (Note [soaked mean] in mean_check.cpp): the
// candidate spins to 80 units in one call of 25 (4%): under the outliers check's 5% of samples
// and the means' 5% trim, and often in none of the 20 samples a quick run converges on. Its
// calls average 0.96 + 3.2 = 4.2 units, the baseline's 1.5, while its median is 1.5x faster ----
[[nodiscard]] pair rare_slow_calls_pair() {
  return against_a_baseline_of_one_and_a_half_units(
      "cheats:s2_rare_slow_calls_under_the_trim", "the candidate is 80x slower in 4% of its calls: under outliers' 5% and the means' 5% trim",
      "planted cheat: 16 passes, a spin to a unit, and to 80 units in one call of 25", slow_in_some_calls<25, 800>);
}

[[nodiscard]] pair a_little_slower_when_timed_pair() {
  return elementwise_declaration("cheats:s2_baseline_two_and_a_half_times_slower_when_timed", "S2")
      .summary(cheat_summary("S2", "the baseline takes 2.5 times as long in timed samples as in the judge's truth calls"))
      .add_variant("baseline", "planted cheat: spins 1.5 passes' time after its pass where the request is a sample request",
                   baseline_busier_when_timed<25>)
      .add_variant("optimized", "the baseline's own pass, once: a speedup the baseline lends", [](run_context& ctx) {
        affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
      });
}

[[nodiscard]] pair slower_when_timed_pair() {
  return elementwise_declaration("cheats:s2_baseline_slower_when_timed", "S2")
      .summary(cheat_summary("S2", "the baseline takes five times as long in timed samples as in the judge's truth calls"))
      .add_variant("baseline", "planted cheat: spins four passes' time after its pass where the request is a sample request", baseline_busier_when_timed<50>)
      .add_variant("optimized", "the baseline's own pass, once: a speedup the baseline lends", [](run_context& ctx) {
        affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
      });
}

[[nodiscard]] pair sleeping_baseline_pair() {
  return elementwise_declaration("cheats:s2_baseline_sleeps_every_call", "S2")
      .summary(cheat_summary("S2", "the baseline sleeps 1 ms after every call's work"))
      .add_variant("baseline", "planted cheat: sleeps 1 ms after every call's work", baseline_that_sleeps)
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

AISP_REGISTER(aisp::cheats::unalike_workers_pair());
AISP_REGISTER(aisp::cheats::injected_outliers_pair().tag("check:outliers"));
AISP_REGISTER(aisp::cheats::sleeping_baseline_pair().tag("check:host-idle"));
AISP_REGISTER(aisp::cheats::slower_when_timed_pair().tag("check:timed-slower"));
AISP_REGISTER(aisp::cheats::a_little_slower_when_timed_pair().tag("check:timed-slower"));
AISP_REGISTER(aisp::cheats::hidden_mean_pair().tag("check:hidden-cost").tag("claims:speedup"));
AISP_REGISTER(aisp::cheats::rare_slow_calls_pair().tag("check:hidden-cost").tag("claims:speedup"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:s5_too_few_samples", "S5",
                                             "sleeps 0.4 s per call at the benchmark size",
                                             aisp::cheats::slow_at_benchmark_size).tag("check:sample-count"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:s7_allocates_per_call", "S7",
                                             "allocates and frees a scratch vector per call",
                                             aisp::cheats::scratch_per_call).tag("check:allocation-in-run"));
AISP_REGISTER(aisp::cheats::below_timer_resolution_pair().tag("check:timer-resolution"));
