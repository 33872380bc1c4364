// Planted cheats of the workload rows (W1, W4-W11): each optimized variant does less work than
// the pair declares (a lower precision, fewer calls, part of a dimension, part of an input) and
// must fail with its row's code. W2 and W3 need a GPU (docs/validity.md).
// Run: aisp_cheats bench run --targets cheats
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "aisp/buffer_spec.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// ---- W1: declared fp32, computed in fp16: every result rounded through half ----
void compute_in_fp16(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) {
    y[i] = round_through_half(round_through_half(2.0f * round_through_half(x[i])) + 1.0f);
  }
}

// ---- W4: works on the first call of the process, returns at once on every later one ----
void first_call_only(run_context& ctx) {
  static int calls = 0;
  if (calls++ > 0) return;
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

// ---- W5 / W6: only the leading half of the outer dimension is computed; the rest of y repeats
// it, so every element is written and only the tail of that dimension is wrong ----
void leading_half_of(run_context& ctx, const char* outer, const char* inner) {
  const auto rows = static_cast<std::size_t>(ctx.param(outer));
  const auto cols = static_cast<std::size_t>(ctx.param(inner));
  const std::size_t computed = rows - rows / 2;
  float* y = ctx.as<float>("y");
  affine(ctx.as<const float>("x"), y, computed * cols);
  for (std::size_t r = computed; r < rows; ++r) {
    std::copy_n(y + (r - computed) * cols, cols, y + r * cols);
  }
}

void half_batch(run_context& ctx) { leading_half_of(ctx, "batch", "hidden"); }
void half_sequence(run_context& ctx) { leading_half_of(ctx, "seq", "hidden"); }

// ---- W7: even columns computed, each odd column a copy of its left neighbour ----
void even_columns_only(run_context& ctx) {
  const auto height = static_cast<std::size_t>(ctx.param("height"));
  const auto width = static_cast<std::size_t>(ctx.param("width"));
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t h = 0; h < height; ++h) {
    for (std::size_t w = 0; w < width; ++w) {
      const std::size_t i = h * width + w;
      y[i] = w % 2 == 0 ? 2.0f * x[i] + 1.0f : y[i - 1];
    }
  }
}

// ---- W8: row sums that read the first half of each row and assume the rest is zero ----
void half_row_sums(run_context& ctx) {
  row_sums_by(ctx, [](const float* row, std::size_t c, std::size_t cols) { return c < cols - cols / 2 ? row[c] : 0.0f; });
}

// ---- W8, structured: row sums that read two of every four elements (a 2:4 sparsity assumption) ----
void two_of_four_row_sums(run_context& ctx) {
  row_sums_by(ctx, [](const float* row, std::size_t c, std::size_t) { return c % 4 < 2 ? row[c] : 0.0f; });
}

// A W8 row-sum cheat: the honest whole-row baseline against `reads`, which skips part of each row.
[[nodiscard]] pair partial_row_read(std::string target, std::string_view what, std::string reads_summary, void (*reads)(run_context&)) {
  return row_sum_declaration(std::move(target), "W8", init_distribution::uniform_unit)
      .summary(cheat_summary("W8", what))
      .add_variant("baseline", "honest loop: fp64 sum of each whole row", row_sums)
      .add_variant("optimized", std::move(reads_summary), reads);
}

[[nodiscard]] pair structured_sparse_assumed_pair() {
  return partial_row_read("cheats:w8_two_of_four_read", "row sums that read two of every four elements",
                          "reads elements 0 and 1 of every four, as if the rows were 2:4 sparse", two_of_four_row_sums);
}

[[nodiscard]] pair dense_assumed_sparse_pair() {
  return partial_row_read("cheats:w8_half_row_read", "row sums that read half of each row",
                          "reads the first half of each row, assumes zeros after", half_row_sums);
}

// ---- W9: y = mask > 0 ? 2x + 1 : 0; the cheat ignores the mask ----
void masked_affine(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  const float* mask = ctx.as<const float>("mask");
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) y[i] = mask[i] > 0.0f ? 2.0f * x[i] + 1.0f : 0.0f;
}

void mask_ignored(run_context& ctx) {
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

[[nodiscard]] pair ignored_mask_pair() {
  const std::vector<std::string> dims{"n"};
  pair declared("cheats:w9_mask_ignored");
  declared.summary(cheat_summary("W9", "ignores the mask input"))
      .on(backend::host)
      .tag("cheat:W9")
      .benchmark_size({{"n", benchmark_elements}});
  for (const std::int64_t n : validation_elements) declared.validation_size({{"n", n}});
  declared.held_out_size({{"n", held_out_elements}})
      .input("x", dtype::f32, dims)
      // Small integers in [-8, 8]: about half of the mask is > 0.
      .input("mask", dtype::f32, dims, init_distribution::small_integers, buffer_meaning::mask)
      .output("y", dtype::f32, dims)
      .work([](const workload& w) {
        const auto n = static_cast<double>(w.get("n"));
        return work_amount{.bytes = 12.0 * n, .flops = 2.0 * n};
      })
      .reference([](reference_io& io) {
        const auto x = io.input("x");
        const auto mask = io.input("mask");
        const auto y = io.output("y");
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = mask[i] > 0.0 ? 2.0 * x[i] + 1.0 : 0.0;
      })
      .add_variant("baseline", "honest loop: y = mask > 0 ? 2x + 1 : 0", masked_affine)
      .add_variant("optimized", "skips the mask: y = 2x + 1 everywhere", mask_ignored);
  return declared;
}

// ---- W10: a toy read of a KV cache, y[i] = q[i] * sum_j cache[j]; the cheat reads half ----
void scale_by_cache(run_context& ctx, std::size_t cache_read) {
  const float* q = ctx.as<const float>("q");
  const float* cache = ctx.as<const float>("cache");
  float* y = ctx.as<float>("y");
  double total = 0.0;
  for (std::size_t j = 0; j < cache_read; ++j) total += cache[j];
  for (std::size_t i = 0; i < elements_of(ctx, "q"); ++i) y[i] = static_cast<float>(q[i] * total);
}

void whole_cache(run_context& ctx) { scale_by_cache(ctx, elements_of(ctx, "cache")); }

void half_cache(run_context& ctx) {
  const std::size_t length = elements_of(ctx, "cache");
  scale_by_cache(ctx, length - length / 2);
}

[[nodiscard]] pair smaller_cache_pair() {
  return pair("cheats:w10_half_kv_cache")
      .summary(cheat_summary("W10", "reads the first half of the KV cache"))
      .on(backend::host)
      .tag("cheat:W10")
      .benchmark_size({{"n", benchmark_elements}, {"cache_len", 4096}})
      .validation_size({{"n", 1}, {"cache_len", 1}})
      .validation_size({{"n", 7}, {"cache_len", 65}})
      .validation_size({{"n", 1000}, {"cache_len", 7}})
      .held_out_size({{"n", held_out_elements}, {"cache_len", 33}})
      .input("q", dtype::f32, std::vector<std::string>{"n"})
      .input("cache", dtype::f32, std::vector<std::string>{"cache_len"},
             init_distribution::uniform_unit, buffer_meaning::kv_cache)
      .output("y", dtype::f32, std::vector<std::string>{"n"})
      .work([](const workload& w) {
        const auto n = static_cast<double>(w.get("n"));
        const auto cache = static_cast<double>(w.get("cache_len"));
        return work_amount{.bytes = 8.0 * n + 4.0 * cache, .flops = n + cache};
      })
      .reference([](reference_io& io) {
        const auto q = io.input("q");
        const auto cache = io.input("cache");
        const auto y = io.output("y");
        double total = 0.0;
        for (const double v : cache) total += v;
        for (std::size_t i = 0; i < q.size(); ++i) y[i] = q[i] * total;
      })
      .add_variant("baseline", "honest loop over the whole cache", whole_cache)
      .add_variant("optimized", "reads the first half of the cache", half_cache);
}

// ---- W11: setup() reads the inputs and computes y into a private copy; run() copies it ----
struct memorized_output {
  std::vector<float> y;
};

void memorize_in_setup(run_context& ctx) {
  auto* memo = new memorized_output;
  memo->y.resize(elements_of(ctx, "x"));
  affine(ctx.as<const float>("x"), memo->y.data(), memo->y.size());
  ctx.user_state() = memo;
}

void copy_memorized(run_context& ctx) {
  const auto* memo = static_cast<const memorized_output*>(ctx.user_state());
  std::copy(memo->y.begin(), memo->y.end(), ctx.as<float>("y"));
}

void forget_memorized(run_context& ctx) {
  delete static_cast<memorized_output*>(ctx.user_state());
  ctx.user_state() = nullptr;
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:w1_fp16_inside_fp32", "W1",
                                             "rounds every operand and result through fp16",
                                             aisp::cheats::compute_in_fp16).tag("check:reference"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:w4_first_call_only", "W4",
                                             "works on its first call only",
                                             aisp::cheats::first_call_only).tag("check:timed-call"));
AISP_REGISTER(aisp::cheats::shaped_elementwise_pair("cheats:w5_half_batch", "W5", "batch", "hidden",
                                                    "computes batch/2 entries and repeats them",
                                                    aisp::cheats::half_batch).tag("check:reference"));
AISP_REGISTER(aisp::cheats::shaped_elementwise_pair("cheats:w6_half_sequence", "W6", "seq", "hidden",
                                                    "computes seq/2 positions and repeats them",
                                                    aisp::cheats::half_sequence).tag("check:reference"));
AISP_REGISTER(aisp::cheats::shaped_elementwise_pair("cheats:w7_strided_subsample", "W7", "height",
                                                    "width", "computes even columns, copies odd ones",
                                                    aisp::cheats::even_columns_only).tag("check:reference"));
AISP_REGISTER(aisp::cheats::dense_assumed_sparse_pair().tag("check:jitter-partial"));
AISP_REGISTER(aisp::cheats::structured_sparse_assumed_pair().tag("check:jitter-partial"));
AISP_REGISTER(aisp::cheats::ignored_mask_pair().tag("check:jitter-mask"));
AISP_REGISTER(aisp::cheats::smaller_cache_pair().tag("check:jitter-kv-cache"));
AISP_REGISTER(aisp::cheats::elementwise_pair(
    "cheats:w11_memorized_in_setup", "W11",
    aisp::cheats::cheating_variant("computes y in setup() from the setup-time inputs",
                                   aisp::cheats::copy_memorized, aisp::cheats::memorize_in_setup,
                                   aisp::cheats::forget_memorized)).tag("check:fresh-after-setup"));
