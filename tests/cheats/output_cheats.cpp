// Planted cheats of the output rows (O1-O10): each optimized variant lies about its outputs in
// one way, and each must fail with its row's code. O6 is the exception: there the reference lies.
// Run: aisp_cheats bench run --targets cheats
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"
#include "support/fp8_codec.hpp"

namespace aisp::cheats {
namespace {

// ---- O1: a constant, whatever the input ----
void write_constant(run_context& ctx) {
  float* y = ctx.as<float>("y");
  std::fill_n(y, elements_of(ctx, "y"), 1.0f);
}

// ---- O2: the result cached under the value of x[0]: a change anywhere else goes unseen ----
void cache_by_first_element(run_context& ctx) {
  static std::map<std::pair<std::size_t, float>, std::vector<float>> cache;
  const std::size_t n = elements_of(ctx, "x");
  const float* x = ctx.as<const float>("x");
  auto [entry, inserted] = cache.try_emplace(std::pair{n, x[0]});
  if (inserted) {
    entry->second.resize(n);
    affine(x, entry->second.data(), n);
  }
  std::copy(entry->second.begin(), entry->second.end(), ctx.as<float>("y"));
}

// ---- O3: exp(x) by its second-order Taylor polynomial: off by 0.22 at x = 1 ----
void exp_taylor2(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) y[i] = 1.0f + x[i] + 0.5f * x[i] * x[i];
}

// ---- O4 / O5: one bad element in an otherwise right output ----
void one_nan(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), n);
  ctx.as<float>("y")[n / 2] = std::numeric_limits<float>::quiet_NaN();
}

void one_inf(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), n);
  ctx.as<float>("y")[n / 2] = std::numeric_limits<float>::infinity();
}

// ---- O6: both variants transpose correctly; the reference forgets to transpose ----
// x: (rows, cols) fp32 row-major; y: (cols, rows).
void transpose_row_walk(run_context& ctx) {
  const auto rows = static_cast<std::size_t>(ctx.param("rows"));
  const auto cols = static_cast<std::size_t>(ctx.param("cols"));
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) y[c * rows + r] = x[r * cols + c];
  }
}

void transpose_column_walk(run_context& ctx) {
  const auto rows = static_cast<std::size_t>(ctx.param("rows"));
  const auto cols = static_cast<std::size_t>(ctx.param("cols"));
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t c = 0; c < cols; ++c) {
    for (std::size_t r = 0; r < rows; ++r) y[c * rows + r] = x[r * cols + c];
  }
}

[[nodiscard]] std::int64_t matrix_elements(const workload& w) { return w.get("rows") * w.get("cols"); }

// ---- O6: the reference was edited together with the code (y = 2x + 1.001 in both), so every
// variant agrees with it; only the golden stored from the reference as it was (y = 2x + 1 at
// seed 42, planted_cheats_test's golden file) sees the drift ----
constexpr elementwise_math drifted_math{[](double x) { return 2.0 * x + 1.001; },
                                        [](float x) { return 2.0f * x + 1.001f; }, "y = 2x + 1.001"};

[[nodiscard]] pair drifted_reference_pair() {
  return elementwise_pair("cheats:o6_reference_drifted_from_golden", "O6",
                          cheating_variant("computes y = 2x + 1.001, as the edited reference does", honest_run(drifted_math)),
                          drifted_math);
}

[[nodiscard]] pair wrong_reference_pair() {
  return pair("cheats:o6_wrong_reference")
      .summary(cheat_summary("O6", "the reference copies where the math transposes"))
      .on(backend::host)
      .tag("cheat:O6")
      .benchmark_size({{"rows", 256}, {"cols", 256}})
      .validation_size({{"rows", 7}, {"cols", 65}})
      .validation_size({{"rows", 65}, {"cols", 7}})
      .validation_size({{"rows", 2}, {"cols", 3}})
      .held_out_size({{"rows", 9}, {"cols", 33}})
      .input("x", dtype::f32, matrix_elements)
      .output("y", dtype::f32, matrix_elements)
      .work([](const workload& w) {
        return work_amount{.bytes = 8.0 * static_cast<double>(matrix_elements(w)), .flops = 0.0};
      })
      .reference([](reference_io& io) {
        const auto x = io.input("x");
        const auto y = io.output("y");
        std::copy(x.begin(), x.end(), y.begin());  // the planted bug: no transpose
      })
      .add_variant("baseline", "transpose, walking x in row order", transpose_row_walk)
      .add_variant("optimized", "transpose, walking y in row order", transpose_column_walk);
}

// ---- O7: only the leading half of y is written ----
void leading_half(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), n - n / 2);
}

// ---- O8: y is declared bf16; the variant stores the right values as fp16 bit patterns ----
void bf16_honest(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  auto* y = ctx.as<std::uint16_t>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) y[i] = bf16_bits(2.0f * x[i] + 1.0f);
}

void fp16_into_bf16(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  auto* y = ctx.as<std::uint16_t>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) y[i] = half_bits(2.0f * x[i] + 1.0f);
}

[[nodiscard]] pair fp16_in_bf16_pair() {
  return elementwise_declaration("cheats:o8_fp16_in_bf16_output", "O8", affine_math, dtype::bf16)
      .summary(cheat_summary("O8", "writes fp16 bit patterns into a bf16 output"))
      .add_variant("baseline", "honest loop: y = 2x + 1 rounded to bf16", bf16_honest)
      .add_variant("optimized", "stores fp16 encodings in the bf16 output", fp16_into_bf16);
}

// ---- O8, 8-bit: y is declared e4m3; the variant stores the right values as e5m2 codes ----
void e4m3_honest(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  auto* y = ctx.as<std::uint8_t>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i)
    y[i] = float_to_fp8_bits(2.0f * x[i] + 1.0f, fp8_format::e4m3);
}

void e5m2_into_e4m3(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  auto* y = ctx.as<std::uint8_t>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i)
    y[i] = float_to_fp8_bits(2.0f * x[i] + 1.0f, fp8_format::e5m2);
}

[[nodiscard]] pair e5m2_in_e4m3_pair() {
  return elementwise_declaration("cheats:o8_e5m2_in_e4m3_output", "O8", affine_math, dtype::e4m3)
      .summary(cheat_summary("O8", "writes e5m2 codes into an e4m3 output"))
      .add_variant("baseline", "honest loop: y = 2x + 1 rounded to e4m3", e4m3_honest)
      .add_variant("optimized", "stores e5m2 encodings in the e4m3 output", e5m2_into_e4m3);
}

// ---- O9: setup() plants a subnormal in the input, which slows every later call ----
void plant_subnormal(run_context& ctx) {
  float* x = ctx.as<float>("x");
  x[elements_of(ctx, "x") / 2] = 1e-40f;
}

// ---- O10: scattered elements are never written ----
void skip_scattered(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) {
    if (i % 97 != 3) y[i] = 2.0f * x[i] + 1.0f;
  }
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:o1_constant_output", "O1",
                                             "writes 1.0 everywhere", aisp::cheats::write_constant).tag("check:jitter"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:o2_cached_by_first_element", "O2",
                                             "caches the result under the value of x[0]",
                                             aisp::cheats::cache_by_first_element).tag("check:jitter"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:o3_low_order_exp", "O3",
                                             "exp(x) as 1 + x + x^2/2", aisp::cheats::exp_taylor2,
                                             aisp::cheats::exp_math).tag("check:reference").tag("check:jitter-wrong"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:o4_nan_element", "O4",
                                             "one NaN in the middle of y", aisp::cheats::one_nan).tag("check:reference"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:o5_inf_element", "O5",
                                             "one +Inf in the middle of y", aisp::cheats::one_inf).tag("check:reference"));
AISP_REGISTER(aisp::cheats::drifted_reference_pair().tag("check:golden"));
AISP_REGISTER(aisp::cheats::wrong_reference_pair().tag("check:ground-truth"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:o7_leading_region_only", "O7",
                                             "writes only the leading half of y",
                                             aisp::cheats::leading_half).tag("check:reference"));
AISP_REGISTER(aisp::cheats::fp16_in_bf16_pair().tag("check:reference"));
AISP_REGISTER(aisp::cheats::e5m2_in_e4m3_pair().tag("check:reference"));
AISP_REGISTER(aisp::cheats::elementwise_pair(
    "cheats:o9_subnormal_input", "O9",
    aisp::cheats::cheating_variant("setup() writes a subnormal into x",
                                   aisp::cheats::honest_run(aisp::cheats::affine_math),
                                   aisp::cheats::plant_subnormal)).tag("check:subnormal-inputs"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:o10_scattered_unwritten", "O10",
                                             "skips every element with i % 97 == 3",
                                             aisp::cheats::skip_scattered).tag("check:reference"));
