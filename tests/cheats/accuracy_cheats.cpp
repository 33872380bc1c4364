// Planted cheats of a candidate's accuracy and domain (Notes [accuracy against the baseline] and
// [wide inputs], src/runner/candidate_accuracy.cpp), and the honest pairs beside them that must
// pass: a declared precision change, an exp right on every range, a fast path taken after a look
// at every input, a pair whose baseline cannot take the wide inputs either, and a candidate that
// answers from a scaled e4m3 copy. Found by a red team that never saw these fixtures
// (2026-12-03): each cheat below passed every check before.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstddef>
#include <string>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"
#include "support/fp8_codec.hpp"

namespace aisp::cheats {
namespace {

// ---- O3: the pair's loose tolerance spent by the candidate, which declares nothing ----
// exp(x) as (1 + x/256)^256: eight squarings, ~x^2/512 relative error (2e-3 at |x| = 1), inside
// the pair's rtol of 5e-3, ~10^4 times the baseline's error.
void exp_by_squaring(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) {
    float v = 1.0f + x[i] / 256.0f;
    for (int s = 0; s < 8; ++s) v *= v;
    y[i] = v;
  }
}

pair loose_tolerance_pair() {
  pair declared = elementwise_declaration("cheats:o3_loose_tolerance_spent", "O3", exp_math);
  declared.tolerance_override({.rtol = 5e-3, .atol = 1e-6, .max_rel_l2 = 5e-3, .reason = "exp's last bits differ between libm builds"})
      .add_variant(honest_baseline(exp_math))
      .add_variant(cheating_variant("exp(x) as (1 + x/256)^256 inside the pair's loose tolerance, declaring no precision change",
                                    exp_by_squaring));
  return declared;
}

// ---- O3 behind a math-unit label: nothing checks a host pair's declared unit, and a candidate
// declaring tf32_tensor there once escaped the baseline's accuracy to spend the pair's tolerance
// (red team six, 2026-12-04: 4.7x) ----
pair host_math_label_pair() {
  pair declared = elementwise_declaration("cheats:o3_host_math_label_spends_the_tolerance", "O3", exp_math);
  variant labelled = cheating_variant("exp(x) as (1 + x/256)^256, declaring tf32_tensor math on the host and no precision change",
                                      exp_by_squaring);
  labelled.math = math_unit::tf32_tensor;
  declared.tolerance_override({.rtol = 5e-3, .atol = 1e-6, .max_rel_l2 = 5e-3, .reason = "exp's last bits differ between libm builds"})
      .add_variant(honest_baseline(exp_math))
      .add_variant(std::move(labelled));
  return declared;
}

// ---- O3 at the benchmark size only (Note [accuracy at the benchmark size]): exact at every small
// size, and at the benchmark size y rounded to bf16's 8 bits (~2e-3 relative), inside the pair's
// declared 5%: the small sizes' accuracy rule never sees it ----
void exact_except_at_the_benchmark_size(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  const std::size_t n = elements_of(ctx, "x");
  const bool shortcut = n == static_cast<std::size_t>(benchmark_elements);
  for (std::size_t i = 0; i < n; ++i) {
    const float exact = 2.0f * x[i] + 1.0f;
    y[i] = shortcut && exact != 0.0f ? std::ldexp(std::nearbyint(std::ldexp(exact, 7 - std::ilogb(exact))), std::ilogb(exact) - 7) : exact;
  }
}

pair benchmark_size_shortcut_pair() {
  pair declared = elementwise_declaration("cheats:o3_benchmark_size_shortcut", "O3");
  declared.tolerance_override({.rtol = 5e-2, .atol = 1e-3, .max_rel_l2 = 5e-2, .reason = "planted: a loose declared bound"})
      .add_variant(honest_baseline())
      .add_variant(cheating_variant("y = 2x + 1 to 8 bits at the benchmark size only, inside the pair's 5%", exact_except_at_the_benchmark_size));
  return declared;
}

// ---- V5: right only on the range the harness draws ----
// exp(x) by its degree-9 Taylor polynomial, no range reduction: 7.5e-7 relative at x = -1, but
// exp(8) comes out 40% low and exp(-8) negative.
void exp_taylor9(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) {
    float term = 1.0f;
    float sum = 1.0f;
    for (int k = 1; k <= 9; ++k) {
      term *= x[i] / static_cast<float>(k);
      sum += term;
    }
    y[i] = sum;
  }
}

// ---- V5 at the benchmark size only (Note [wide inputs at the benchmark size]): the Taylor
// polynomial where the element count is the benchmark size's, std::exp at every other size, so
// the small size's wide challenge sees exact code (red team thirteen's i0 series, 24.2x) ----
void exp_taylor9_at_the_benchmark_size(run_context& ctx) {
  if (elements_of(ctx, "x") == static_cast<std::size_t>(benchmark_elements)) return exp_taylor9(ctx);
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) y[i] = std::exp(x[i]);
}

// ---- V5 behind a look at the inputs (Note [scattered challenge values]): std::exp when one of
// the first 64 inputs is past 1, as every element of a wide level is, the polynomial otherwise,
// at every size (red team seventeen's i0 series, 12.9x) ----
bool first_inputs_look_wide(const float* x, std::size_t n, std::size_t looked_at = 64) {
  return std::any_of(x, x + std::min(n, looked_at), [](float v) { return std::fabs(v) >= 1.0f; });
}

void exp_taylor9_unless_the_inputs_look_wide(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  if (!first_inputs_look_wide(x, elements_of(ctx, "x"))) return exp_taylor9(ctx);
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) y[i] = std::exp(x[i]);
}

// ---- V5 behind a look at the outputs (Note [challenge calls filled as timed ones]): std::exp
// where y holds the poison, as it did before every challenge call, the polynomial where it holds
// a random pattern, as before most timed calls ----
void exp_taylor9_unless_the_outputs_are_poisoned(run_context& ctx) {
  float* y = ctx.as<float>("y");
  if (!std::isnan(y[0])) return exp_taylor9(ctx);
  const float* x = ctx.as<const float>("x");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) y[i] = std::exp(x[i]);
}

// ---- V5 behind the order of the calls (Note [challenges during sampling]): at the benchmark
// size, the polynomial until the first wide inputs arrive there (the first challenge asked after
// the sampling), std::exp from then on; std::exp at every other size. It looks at the first 8
// inputs: a scattered challenge (16 wide values at secret places of 65,536) put one among the
// first 64 in ~1.5% of runs, the cheat switched before its first wrong answer, and a suite run
// missed it (2026-12-06); among the first 8, ~0.2% ----
bool wide_seen_at_the_benchmark_size = false;

void exp_taylor9_until_wide_inputs_arrive(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  const std::size_t n = elements_of(ctx, "x");
  const bool benchmark = n == static_cast<std::size_t>(benchmark_elements);
  wide_seen_at_the_benchmark_size = wide_seen_at_the_benchmark_size || (benchmark && first_inputs_look_wide(x, n, 8));
  if (benchmark && !wide_seen_at_the_benchmark_size) return exp_taylor9(ctx);
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

// ---- Honest: the same fast path, taken only after every input was seen in [-1, 1) ----
void exp_taylor9_when_every_input_is_in_range(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  const std::size_t n = elements_of(ctx, "x");
  if (std::all_of(x, x + n, [](float v) { return std::fabs(v) < 1.0f; })) return exp_taylor9(ctx);
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

pair range_checked_fast_path_pair() {
  pair declared = honest_elementwise_declaration("accuracy_honest:range_checked_fast_path", exp_math, dtype::f32, benchmark_elements);
  declared.add_variant(honest_baseline(exp_math))
      .add_variant(variant{"optimized", "the degree-9 polynomial when every input is in [-1, 1), std::exp otherwise",
                           exp_taylor9_when_every_input_is_in_range, {}, {}, {}, {}, {}, {}, {}});
  return declared;
}

// ---- V5 behind a declaration (Note [wide inputs]): the same polynomial beside a bf16 copy of x
// that nothing reads (a derived input switched the challenge off for the whole pair), or with x
// labelled a mask while drawn uniform in [-1, 1) (a mask was never widened): red team fourteen,
// 20.3x and 20.5x ----
pair beside_a_derived_input_pair() {
  pair declared = elementwise_pair("cheats:v5_range_shortcut_beside_a_derived_input", "V5",
                                   "exp(x) by a degree-9 Taylor polynomial; the pair declares a bf16 copy of x nothing reads",
                                   exp_taylor9, exp_math);
  declared.derived_input("x_bf16", dtype::bf16, "x");
  return declared;
}

// ---- V5 behind a scaled copy (Note [a copy's domain], src/runner/copy_domain.cpp): the same
// polynomial beside an e4m3 copy of x scaled by 448 that nothing reads; a level that would carry
// such a copy past 448 was waived for the whole pair, so x8, x128, x1024 and the offset level all
// were (2026-12-06) ----
constexpr double copy_scale = 448.0;

pair beside_a_scaled_copy_pair() {
  pair declared = elementwise_pair("cheats:v5_range_shortcut_beside_a_scaled_copy", "V5",
                                   "exp(x) by a degree-9 Taylor polynomial; the pair declares an e4m3 copy of x times 448 nothing reads",
                                   exp_taylor9, exp_math);
  declared.derived_input("x_e4m3", dtype::e4m3, "x", copy_scale);
  return declared;
}

// ---- V5 behind a copy it checks: the polynomial on x while the e4m3 copy agrees with x, exp of
// the copy once the copy disagrees (as it does when the copy alone is drawn again), so it seems
// to answer from the copy ----
float copy_value(std::uint8_t code) { return fp8_bits_to_float(code, fp8_format::e4m3) / static_cast<float>(copy_scale); }

void exp_taylor9_while_the_copy_agrees(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  const auto* codes = ctx.as<const std::uint8_t>("x_e4m3");
  const std::size_t n = elements_of(ctx, "x");
  bool agrees = true;  // every element of the copy inside e4m3's rounding of x
  for (std::size_t i = 0; i < n && agrees; ++i) agrees = std::fabs(copy_value(codes[i]) - x[i]) <= 0.07f * std::fabs(x[i]) + 1e-4f;
  if (agrees) return exp_taylor9(ctx);
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < n; ++i) y[i] = std::exp(copy_value(codes[i]));
}

pair beside_a_checked_copy_pair() {
  pair declared = elementwise_pair("cheats:v5_range_shortcut_beside_a_checked_copy", "V5",
                                   "exp(x) by a degree-9 Taylor polynomial while x's e4m3 copy (times 448) agrees with x, "
                                   "exp of the copy when it does not",
                                   exp_taylor9_while_the_copy_agrees, exp_math);
  declared.derived_input("x_e4m3", dtype::e4m3, "x", copy_scale);
  return declared;
}

// ---- Honest: exp of the e4m3 copy, as an fp8 kernel reads its scaled operand; the levels that
// overflow the copy are not this variant's domain, and it passes ----
void exp_of_the_scaled_copy(run_context& ctx) {
  const auto* codes = ctx.as<const std::uint8_t>("x_e4m3");
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) y[i] = std::exp(copy_value(codes[i]));
}

pair answers_from_a_scaled_copy_pair() {
  pair declared = honest_elementwise_declaration("accuracy_honest:answers_from_a_scaled_copy", exp_math, dtype::f32, benchmark_elements);
  declared.derived_input("x_e4m3", dtype::e4m3, "x", copy_scale);
  variant from_copy{"optimized", "exp of x's e4m3 copy (x times 448), divided back", exp_of_the_scaled_copy, {}, {}, {}, {}, {}, {}, {}};
  from_copy.precision = "x read from an e4m3 copy scaled by 448";
  // e4m3 rounds x by up to 2^-4 of itself, so exp(x) by up to e^(1/16) - 1 = 6.5% at |x| < 1.
  from_copy.precision_tolerance = tolerance{0.07, 1e-6, 0.05, "x in e4m3: up to 2^-4 of |x| < 1, exp off by up to 6.5%"};
  declared.add_variant(honest_baseline(exp_math)).add_variant(from_copy);
  return declared;
}

pair input_labelled_a_mask_pair() {
  pair declared = honest_elementwise_declaration("cheats:v5_range_shortcut_on_an_input_labelled_a_mask", exp_math, dtype::f32,
                                                 benchmark_elements, buffer_meaning::mask);
  declared.summary(cheat_summary("V5", "exp(x) by a degree-9 Taylor polynomial; x, drawn in [-1, 1), is declared a mask"))
      .tag("cheat:V5")
      .add_variant(honest_baseline(exp_math))
      .add_variant(cheating_variant("exp(x) by a degree-9 Taylor polynomial, no range reduction", exp_taylor9));
  return declared;
}

// ---- V5 at the second level: log-sum-exp without the max subtracted, right until exp overflows
// fp32 (inputs past 88: only the x128 level reaches it) ----
float lse_of(const float* row, std::size_t cols, bool subtract_max) {
  float top = 0.0f;
  if (subtract_max) top = *std::max_element(row, row + cols);
  float sum = 0.0f;
  for (std::size_t c = 0; c < cols; ++c) sum += std::exp(row[c] - top);
  return top + std::log(sum);
}

stage_fn lse_rows(bool subtract_max) {
  return [subtract_max](run_context& ctx) {
    const auto cols = static_cast<std::size_t>(ctx.param("cols"));
    const float* x = ctx.as<const float>("x");
    float* y = ctx.as<float>("y");
    for (std::size_t r = 0; r < elements_of(ctx, "y"); ++r) y[r] = lse_of(x + r * cols, cols, subtract_max);
  };
}

// The fixture kit's row-sum pair (its sizes, buffers and work) with log-sum-exp as the math.
pair lse_pair() {
  pair declared = row_sum_declaration("cheats:v5_log_sum_exp_without_the_max", "V5", init_distribution::uniform_signed);
  declared.summary(cheat_summary("V5", "log-sum-exp of each row without subtracting its max: right until exp overflows"))
      .reference([](reference_io& io) {
        const auto cols = static_cast<std::size_t>(io.param("cols"));
        const auto x = io.input("x");
        const auto y = io.output("y");
        for (std::size_t r = 0; r < y.size(); ++r) {
          double top = x[r * cols];
          for (std::size_t c = 1; c < cols; ++c) top = std::max(top, x[r * cols + c]);
          double sum = 0;
          for (std::size_t c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c] - top);
          y[r] = top + std::log(sum);
        }
      })
      .add_variant("baseline", "the max subtracted first", lse_rows(true))
      .add_variant(cheating_variant("exp summed as it is: one pass, no max", lse_rows(false)));
  return declared;
}

// ---- Honest: a declared precision change, held to its own tolerance and not to the baseline's error ----
// `value` rounded to bf16 (to nearest, ties to even) and back; NaN and Inf stay as they are.
[[nodiscard]] inline float round_through_bf16(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
  float rounded = 0.0f;
  std::memcpy(&rounded, &bits, sizeof rounded);
  return rounded;
}

void exp_through_bf16(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) y[i] = round_through_bf16(std::exp(x[i]));
}

pair declared_precision_pair() {
  // Through bf16, not fp16: fp16's range ends at 65504, so exp(x) of the offset level's inputs
  // (x + 64, Note [offset inputs]) overflowed where the baseline's fp32 did not, a range the
  // declared precision does not declare away (2026-12-06).
  variant rounded{"optimized", "exp(x) rounded through bf16, declared", exp_through_bf16, {}, {}, {}, {}, {}, {}, {}};
  rounded.precision = "exp(x) stored through bf16";
  rounded.precision_tolerance = tolerance{.rtol = 8e-3, .atol = 1e-6, .max_rel_l2 = 8e-3, .reason = "bf16 keeps 8 significant bits"};
  pair declared = honest_elementwise_declaration("accuracy_honest:declared_precision", exp_math, dtype::f32, benchmark_elements);
  declared.add_variant(honest_baseline(exp_math)).add_variant(std::move(rounded));
  return declared;
}

// ---- Honest: exp on every range, two ways ----
void exp_in_double(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) y[i] = static_cast<float>(std::exp(static_cast<double>(x[i])));
}

pair exp_two_ways_pair() {
  pair declared = honest_elementwise_declaration("accuracy_honest:exp_two_ways", exp_math, dtype::f32, benchmark_elements);
  declared.add_variant(honest_baseline(exp_math))
      .add_variant(variant{"optimized", "exp in double, rounded once", exp_in_double, {}, {}, {}, {}, {}, {}, {}});
  return declared;
}

// ---- Honest: wide inputs outside the pair's domain: exp(16 x) overflows fp32 past x = 5.5 ----
constexpr elementwise_math steep_exp_math{[](double x) { return std::exp(16.0 * x); }, [](float x) { return std::exp(16.0f * x); },
                                          "y = exp(16 x)"};

pair narrow_domain_pair() {
  pair declared = honest_elementwise_declaration("accuracy_honest:narrow_domain", steep_exp_math, dtype::f32, benchmark_elements);
  declared.add_variant(honest_baseline(steep_exp_math))
      .add_variant(variant{"optimized", "the same loop, a second copy", honest_run(steep_exp_math), {}, {}, {}, {}, {}, {}, {}});
  return declared;
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::benchmark_size_shortcut_pair().tag("check:accuracy"));
AISP_REGISTER(aisp::cheats::loose_tolerance_pair().tag("check:accuracy"));
AISP_REGISTER(aisp::cheats::host_math_label_pair().tag("check:accuracy"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:v5_right_only_on_the_drawn_range", "V5",
                                             "exp(x) by a degree-9 Taylor polynomial, no range reduction", aisp::cheats::exp_taylor9,
                                             aisp::cheats::exp_math)
                  .tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::lse_pair().tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::beside_a_derived_input_pair().tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::beside_a_scaled_copy_pair().tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::beside_a_checked_copy_pair().tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::input_labelled_a_mask_pair().tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:v5_range_shortcut_at_the_benchmark_size", "V5",
                                             "exp(x) by a degree-9 Taylor polynomial at the benchmark size only, std::exp elsewhere",
                                             aisp::cheats::exp_taylor9_at_the_benchmark_size, aisp::cheats::exp_math)
                  .tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:v5_range_shortcut_unless_the_inputs_look_wide", "V5",
                                             "exp(x) by a degree-9 Taylor polynomial unless one of the first 64 inputs is past 1",
                                             aisp::cheats::exp_taylor9_unless_the_inputs_look_wide, aisp::cheats::exp_math)
                  .tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:v5_range_shortcut_unless_the_outputs_are_poisoned", "V5",
                                             "exp(x) by a degree-9 Taylor polynomial unless its output holds the poison",
                                             aisp::cheats::exp_taylor9_unless_the_outputs_are_poisoned, aisp::cheats::exp_math)
                  .tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:v5_range_shortcut_until_the_challenges_after_sampling", "V5",
                                             "exp(x) by a degree-9 Taylor polynomial at the benchmark size until wide inputs arrive there",
                                             aisp::cheats::exp_taylor9_until_wide_inputs_arrive, aisp::cheats::exp_math)
                  .tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::range_checked_fast_path_pair());
AISP_REGISTER(aisp::cheats::declared_precision_pair());
AISP_REGISTER(aisp::cheats::exp_two_ways_pair());
AISP_REGISTER(aisp::cheats::narrow_domain_pair());
AISP_REGISTER(aisp::cheats::answers_from_a_scaled_copy_pair());
