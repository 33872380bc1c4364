// Note [input reuse] (src/runner/call_reuse.cpp): a pair that fixes its inputs, an optimized
// variant that keeps its last answer under a hash of them (found by a red team, 2026-12-03: 45x
// faster on the host, every output check passed), and the same pair with an honest optimized
// variant, which must pass; one that tells input-reuse's fresh samples apart and answers them
// wrong, fast (timed-call: each of them is verified); one beside a baseline slowed on fresh inputs
// (Note [baseline reuse bound]). Note [batch reuse]: in --mode hot, a variant that does the work once
// a batch (the red team's: 3.6x), and the honest one; batch_reuse_test.cpp runs them.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// A heavy elementwise function, so that a kept answer is far cheaper than the work: 32 sines.
double harmonics(double x) {
  double sum = 0;
  for (int k = 1; k <= 32; ++k) sum += std::sin(k * x) / k;
  return sum;
}

float harmonics_f(float x) { return static_cast<float>(harmonics(x)); }  // double inside: fp32's default tolerance near zeros

constexpr elementwise_math harmonics_math{harmonics, harmonics_f, "y = sum_k sin(k x) / k, k = 1..32"};
constexpr std::int64_t fixed_benchmark_elements = 4096;

// ---- O2: the answer kept under an FNV-1a hash of x, in a buffer setup() made ----
struct kept_answer {
  std::uint64_t hash = 0;
  std::vector<float> y;
};
kept_answer kept;

void make_room(run_context& ctx) {
  kept.hash = 0;
  kept.y.assign(elements_of(ctx, "x"), 0.0f);
}

std::uint64_t hash_of_x(run_context& ctx) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(ctx.as<const float>("x"));
  std::uint64_t hash = 1469598103934665603ULL;
  for (std::size_t i = 0; i < elements_of(ctx, "x") * sizeof(float); ++i) hash = (hash ^ bytes[i]) * 1099511628211ULL;
  return hash;
}

// The kept answer into y, where x hashes as it did when the answer was kept.
bool copied_kept_answer(run_context& ctx, std::uint64_t hash) {
  const std::size_t n = elements_of(ctx, "x");
  if (hash != kept.hash || kept.y.size() != n) return false;
  std::memcpy(ctx.as<float>("y"), kept.y.data(), n * sizeof(float));
  return true;
}

void reuse_by_hash(run_context& ctx) {
  const std::uint64_t hash = hash_of_x(ctx);
  if (copied_kept_answer(ctx, hash)) return;
  const std::size_t n = elements_of(ctx, "x");
  float* y = ctx.as<float>("y");
  apply(harmonics_math, ctx.as<const float>("x"), y, 0, n);
  if (kept.y.size() == n) {
    std::memcpy(kept.y.data(), y, n * sizeof(float));
    kept.hash = hash;
  }
}

// ---- O2 with the fresh samples told apart (a red team's, 2026-12-03: 62x): the same kept
// answer, and on the first run of changed inputs after many kept calls at the benchmark size
// (input-reuse's extra samples) a cheap wrong answer, fast, then honest work again ----
struct dodge_state {
  int kept_calls = 0;
  int dodged = 0;
};
dodge_state dodging;

void reuse_and_dodge(run_context& ctx) {
  if (copied_kept_answer(ctx, hash_of_x(ctx))) {
    ++dodging.kept_calls;
    dodging.dodged = 0;
    return;
  }
  const std::size_t n = elements_of(ctx, "x");
  float* y = ctx.as<float>("y");
  if (n == static_cast<std::size_t>(fixed_benchmark_elements) && dodging.kept_calls >= 8 && dodging.dodged < 9) {
    ++dodging.dodged;
    std::memcpy(y, ctx.as<const float>("x"), n * sizeof(float));  // written, and wrong
    return;
  }
  dodging.kept_calls = 0;
  reuse_by_hash(ctx);
}

// ---- O2 with the baseline's help (a red team's, 2026-12-04: 136x): a baseline that burns many
// times its work on inputs that changed since its last call at the benchmark size, so its own
// fresh-input ratio (~60x) would have lent the kept answer beside it its limit. Note [baseline
// reuse bound]: it counts up to input_reuse_baseline_bound, and the baseline fails ----
std::uint64_t baseline_last_hash = 0;

void burns_on_fresh_inputs(run_context& ctx) {
  const std::uint64_t hash = hash_of_x(ctx);
  const std::size_t n = elements_of(ctx, "x");
  const bool changed = hash != baseline_last_hash && n == static_cast<std::size_t>(fixed_benchmark_elements);
  baseline_last_hash = hash;
  for (int pass = 0; pass < (changed ? 60 : 1); ++pass) apply(harmonics_math, ctx.as<const float>("x"), ctx.as<float>("y"), 0, n);
}

pair fixed_inputs_pair(std::string target, variant optimized, variant baseline = honest_baseline(harmonics_math)) {
  pair declared = honest_elementwise_declaration(std::move(target), harmonics_math, dtype::f32, fixed_benchmark_elements);
  declared.fixed_inputs("a table the pair's meaning reads as given")
      .add_variant(std::move(baseline))
      .add_variant(std::move(optimized));
  return declared;
}

// ---- Honest: the same sums, eight elements a loop iteration ----
void harmonics_unrolled(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  const std::size_t n = elements_of(ctx, "x");
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    double sums[8] = {};
    for (int k = 1; k <= 32; ++k) {
      for (int e = 0; e < 8; ++e) sums[e] += std::sin(k * static_cast<double>(x[i + e])) / k;
    }
    for (int e = 0; e < 8; ++e) y[i + e] = static_cast<float>(sums[e]);
  }
  apply(harmonics_math, x, y, i, n);
}

// ---- X2 in a batch: the work skipped while the inputs and the outputs are as this variant left
// them (a few sampled elements of each, as the red team's did): every call of a hot batch after
// the first. One call on fresh inputs, as cold mode times it, always does the work ----
struct left_behind {
  const float* x = nullptr;
  float* y = nullptr;
  std::array<float, 8> seen{};  // x and y at the sampled elements after the last call
};
left_behind last_call;

std::array<float, 8> sampled(const float* x, const float* y, std::size_t n) {
  std::array<float, 8> values{};
  std::size_t k = 0;
  for (const std::size_t at : {std::size_t{0}, n / 3, n / 2, n - 1}) {
    values[k++] = x[at];
    values[k++] = y[at];
  }
  return values;
}

void work_once_a_batch(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  if (x == last_call.x && y == last_call.y && sampled(x, y, n) == last_call.seen) return;
  apply(harmonics_math, x, y, 0, n);
  last_call = {x, y, sampled(x, y, n)};
}

// ---- X2 lent by the baseline (red team six, 2026-12-04): a baseline that redoes its work three
// times on inputs that changed since its last call reads ~2x one call at a time, which lent a
// candidate that recomputes a sixth of a repeated call (the rest still holds the batch's answer;
// an eighth here, see batched_benchmark_elements)
// 2x more room. On the host a baseline lends at most 1.25x (Note [baseline reuse bound]) ----
left_behind baseline_last_call;

void burns_on_changed_inputs(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  const bool unchanged = x == baseline_last_call.x && y == baseline_last_call.y && sampled(x, y, n) == baseline_last_call.seen;
  for (int pass = 0; pass < (unchanged ? 1 : 4); ++pass) apply(harmonics_math, x, y, 0, n);
  baseline_last_call = {x, y, sampled(x, y, n)};
}

void an_eighth_of_a_repeated_call(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  const bool repeated = x == last_call.x && y == last_call.y && sampled(x, y, n) == last_call.seen;
  apply(harmonics_math, x, y, 0, repeated ? std::max<std::size_t>(n / 8, 1) : n);  // an eighth: one element of the 8 it once had
  last_call = {x, y, sampled(x, y, n)};
}

// ~10 us a call: a hot sample (100 us at least) batches several, so the cheat's one call of work
// a batch is a small share of its batch's time. At 8 elements (a few us) the fixed cost of a
// one-call sample put the honest variant at 2.1-2.6x its hot median, against the host's 2.5x
// bound (CI machine, 2026-12-06); at 32 it reads 1.2-1.6x.
constexpr std::int64_t batched_benchmark_elements = 32;

pair batched_pair(std::string target, variant optimized, variant baseline = honest_baseline(harmonics_math)) {
  pair declared = honest_elementwise_declaration(std::move(target), harmonics_math, dtype::f32, batched_benchmark_elements);
  declared.add_variant(std::move(baseline)).add_variant(std::move(optimized));
  return declared;
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::fixed_inputs_pair("cheats:o2_fixed_inputs_answer_kept",
                                              aisp::cheats::cheating_variant("keeps its last answer under a hash of the fixed inputs",
                                                                             aisp::cheats::reuse_by_hash, aisp::cheats::make_room))
                  .summary(aisp::cheats::cheat_summary("O2", "keeps its last answer under a hash of the fixed inputs"))
                  .tag("cheat:O2")
                  .tag("check:input-reuse"));
AISP_REGISTER(aisp::cheats::fixed_inputs_pair("cheats:o2_fixed_inputs_dodges_the_fresh_samples",
                                              aisp::cheats::cheating_variant("keeps its last answer, and writes a fast wrong one in the first "
                                                                             "fresh-input calls after many kept ones",
                                                                             aisp::cheats::reuse_and_dodge, aisp::cheats::make_room))
                  .summary(aisp::cheats::cheat_summary("O2", "keeps its last answer and dodges input-reuse's fresh samples"))
                  .tag("cheat:O2")
                  .tag("check:timed-call"));
AISP_REGISTER(aisp::cheats::fixed_inputs_pair("cheats:o2_baseline_burns_on_fresh_inputs",
                                              aisp::cheats::cheating_variant("keeps its last answer under a hash of the fixed inputs",
                                                                             aisp::cheats::reuse_by_hash, aisp::cheats::make_room),
                                              aisp::variant{"baseline", "burns 60x its work on inputs that changed",
                                                            aisp::cheats::burns_on_fresh_inputs, {}, {}, {}, {}, {}, {}, {}})
                  .summary(aisp::cheats::cheat_summary("O2", "a baseline slowed on fresh inputs lends a kept answer its ratio"))
                  .tag("cheat:O2")
                  .tag("check:input-reuse"));
AISP_REGISTER(aisp::cheats::fixed_inputs_pair("accuracy_honest:fixed_inputs_unrolled",
                                              aisp::variant{"optimized", "eight elements a loop iteration", aisp::cheats::harmonics_unrolled,
                                                            {}, {}, {}, {}, {}, {}, {}}));
AISP_REGISTER(aisp::cheats::batched_pair("hot_mode:x2_work_once_a_batch",
                                          aisp::cheats::cheating_variant("skips the work while its inputs and outputs are as it left them",
                                                                         aisp::cheats::work_once_a_batch))
                  .tag("check:batch-reuse"));
AISP_REGISTER(aisp::cheats::batched_pair("hot_mode:x2_reuse_lent_by_the_baseline",
                                          aisp::cheats::cheating_variant("recomputes an eighth of a call whose inputs and outputs are "
                                                                         "as it left them",
                                                                         aisp::cheats::an_eighth_of_a_repeated_call),
                                          aisp::variant{"baseline", "redoes its work three times on inputs that changed",
                                                        aisp::cheats::burns_on_changed_inputs, {}, {}, {}, {}, {}, {}, {}})
                  .tag("check:batch-reuse"));
AISP_REGISTER(aisp::cheats::batched_pair("hot_mode:honest_unrolled",
                                          aisp::variant{"optimized", "eight elements a loop iteration", aisp::cheats::harmonics_unrolled,
                                                        {}, {}, {}, {}, {}, {}, {}}));
