// Planted cheats of issue 15's classes, host side: each tells one call from another and uses it.
// Class 1: inputs fixed at the benchmark size (a result precomputed, stashed, cached or read from
// disk there). Class 2: work only when watched. Class 3: reading which call it is in. Class 4:
// a precision downgrade that is exact on small integers. Each must fail with its row's code.
// Run: aisp_cheats bench run --targets cheats
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

bool at_benchmark_size(const run_context& ctx) {
  return static_cast<std::int64_t>(elements_of(ctx, "x")) == benchmark_elements;
}

// ---- Class 1, L3: the benchmark-size result computed in setup(), copied by every call ----
std::vector<float>& precomputed() {
  static std::vector<float> result;
  return result;
}

void precompute_in_setup(run_context& ctx) {
  precomputed().clear();
  if (!at_benchmark_size(ctx)) return;
  precomputed().resize(elements_of(ctx, "x"));
  affine(ctx.as<const float>("x"), precomputed().data(), precomputed().size());
}

void copy_precomputed(run_context& ctx) {
  if (precomputed().empty()) {
    affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
    return;
  }
  std::copy(precomputed().begin(), precomputed().end(), ctx.as<float>("y"));
}

// ---- Class 1, T5: the first benchmark-size result (a warmup call's) replayed ----
void replay_first_result(run_context& ctx) {
  static std::vector<float> stash;
  const std::size_t n = elements_of(ctx, "x");
  if (!at_benchmark_size(ctx)) {
    affine(ctx.as<const float>("x"), ctx.as<float>("y"), n);
    return;
  }
  if (stash.empty()) {
    stash.resize(n);
    affine(ctx.as<const float>("x"), stash.data(), n);
  }
  std::copy(stash.begin(), stash.end(), ctx.as<float>("y"));
}

// ---- Class 1, K1: the benchmark-size result kept on disk, read back by later calls and runs ----
void result_on_disk(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  float* y = ctx.as<float>("y");
  if (!at_benchmark_size(ctx)) {
    affine(ctx.as<const float>("x"), y, n);
    return;
  }
  const std::string path = "/tmp/aisp_cheat_fresh_k1_" + std::to_string(n) + ".bin";
  if (std::FILE* in = std::fopen(path.c_str(), "rb")) {
    const std::size_t read = std::fread(y, sizeof(float), n, in);
    std::fclose(in);
    if (read == n) return;
  }
  affine(ctx.as<const float>("x"), y, n);
  if (std::FILE* out = std::fopen(path.c_str(), "wb")) {
    std::fwrite(y, sizeof(float), n, out);
    std::fclose(out);
  }
}

// ---- Class 1, O2: benchmark-size results cached under the input's address ----
void cache_by_address_at_benchmark_size(run_context& ctx) {
  static std::map<const void*, std::vector<float>> cache;
  const std::size_t n = elements_of(ctx, "x");
  const float* x = ctx.as<const float>("x");
  if (!at_benchmark_size(ctx)) {
    affine(x, ctx.as<float>("y"), n);
    return;
  }
  auto [entry, inserted] = cache.try_emplace(x);
  if (inserted) {
    entry->second.resize(n);
    affine(x, entry->second.data(), n);
  }
  std::copy(entry->second.begin(), entry->second.end(), ctx.as<float>("y"));
}

// ---- Class 2, X1: at the benchmark size, the work is done on every 4th call only ----
void every_fourth_call(run_context& ctx) {
  static unsigned long calls = 0;
  if (at_benchmark_size(ctx) && ++calls % 4 != 0) return;
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

// ---- Class 2, W4: at the benchmark size, only the first call after setup() does the work ----
struct early_exit_state {
  bool worked = false;
};
early_exit_state& early_exit() {
  static early_exit_state state;
  return state;
}
void reset_early_exit(run_context&) { early_exit().worked = false; }
void exit_early_after_one_call(run_context& ctx) {
  if (at_benchmark_size(ctx) && early_exit().worked) return;
  early_exit().worked = true;
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

// ---- Class 3, K3: reads the workload's kind and skips half the work in benchmark calls ----
void half_the_work_when_benchmarked(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  const bool benchmarked = ctx.work().kind == workload_kind::benchmark;
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), benchmarked && n > 1 ? n / 2 : n);
}

// ---- Class 3, X7: honest for 50 ms after each setup() (the verified calls of a small size
// follow their setup at once), then skips half the work ----
std::chrono::steady_clock::time_point& set_up_at() {
  static std::chrono::steady_clock::time_point when;
  return when;
}
void note_setup_time(run_context&) { set_up_at() = std::chrono::steady_clock::now(); }
void honest_only_after_setup(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  const bool watched_phase = std::chrono::steady_clock::now() - set_up_at() < std::chrono::milliseconds(50);
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), watched_phase || n < 2 ? n : n / 2);
}

// ---- Class 4: exact integer row sums from inputs rounded to a narrower float (row_sums_of):
// exact on the small-integer inputs (and on the exact-integer challenge), wrong on any other ----
float through_bf16(float value) { return bf16_value(bf16_bits(value)); }

[[nodiscard]] pair rounded_inputs_pair(const std::string& target, std::string_view code, const std::string& what,
                                       stage_fn cheat) {
  return row_sum_declaration(target, code, init_distribution::small_integers)
      .summary(cheat_summary(code, what))
      .exact_math()
      .add_variant("baseline", "honest loop: fp64 sum of each whole row", row_sums)
      .add_variant("optimized", what, std::move(cheat));
}

}  // namespace
}  // namespace aisp::cheats

namespace cheats = aisp::cheats;

AISP_REGISTER(cheats::elementwise_pair("cheats:l3_benchmark_result_precomputed_in_setup", "L3",
                                       cheats::cheating_variant("computes the benchmark-size y in setup(), copies it in run()",
                                                                cheats::copy_precomputed, cheats::precompute_in_setup)).tag("check:baseline-match"));
AISP_REGISTER(cheats::elementwise_pair("cheats:t5_first_benchmark_result_replayed", "T5",
                                       "replays its first benchmark-size result (a warmup call's)",
                                       cheats::replay_first_result).tag("check:timed-call"));
AISP_REGISTER(cheats::elementwise_pair("cheats:k1_benchmark_result_on_disk", "K1",
                                       "reads the benchmark-size y from a file an earlier call wrote",
                                       cheats::result_on_disk).tag("check:baseline-match"));
AISP_REGISTER(cheats::elementwise_pair("cheats:o2_benchmark_result_cached_by_address", "O2",
                                       "caches benchmark-size results under the address of x",
                                       cheats::cache_by_address_at_benchmark_size).tag("check:timed-call"));
AISP_REGISTER(cheats::elementwise_pair("cheats:x1_every_fourth_benchmark_call", "X1",
                                       "at the benchmark size, works on every 4th call only",
                                       cheats::every_fourth_call).tag("check:timed-call"));
AISP_REGISTER(cheats::elementwise_pair("cheats:w4_one_benchmark_call_per_setup", "W4",
                                       cheats::cheating_variant("at the benchmark size, works in the first call after setup() only",
                                                                cheats::exit_early_after_one_call, cheats::reset_early_exit)).tag("check:baseline-match"));
AISP_REGISTER(cheats::elementwise_pair("cheats:k3_reads_the_workload_kind", "K3",
                                       "skips half the work when the context says the call is a benchmark one",
                                       cheats::half_the_work_when_benchmarked).tag("check:timed-call"));
AISP_REGISTER(cheats::elementwise_pair("cheats:x7_honest_just_after_setup", "X7",
                                       cheats::cheating_variant("honest for 50 ms after setup(), then skips half the work",
                                                                cheats::honest_only_after_setup, cheats::note_setup_time)).tag("check:timed-call"));
AISP_REGISTER(cheats::rounded_inputs_pair("cheats:x5_inputs_rounded_to_bf16_in_exact_pair", "X5",
                                          "sums inputs rounded to bf16 (exact on small integers)",
                                          cheats::row_sums_of<cheats::through_bf16>).tag("check:non-integers"));
AISP_REGISTER(cheats::rounded_inputs_pair("cheats:w1_inputs_rounded_to_fp16_in_exact_pair", "W1",
                                          "sums inputs rounded to fp16 (exact on small integers)",
                                          cheats::row_sums_of<cheats::round_through_half>).tag("check:non-integers"));
