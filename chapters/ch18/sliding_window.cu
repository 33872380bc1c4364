// sliding_window: causal attention where each query sees only the last `window` keys (Mistral's
// and Gemma's local layers), b 2, h 16, s 8192, window 1024, d 128, bf16, forward.
// Baseline: the fused FlashAttention-style kernel of labs/attention (fused_mma.cuh) with the window
// as a mask: every key tile up to the diagonal is loaded and multiplied, and the mask zeroes the
// scores outside the window. Optimized: the same kernel starting each block at the first tile of
// its first query's window: tiles wholly outside every window of the block are skipped.
// Why faster: per 64-query block the baseline walks about s / 2 / 64 = 64 key tiles on average,
// the optimized (window + 64) / 64 = 17; the declared work is the in-window scores only.
// Run: aisp bench run --targets ch18:sliding_window
#include <cuda_bf16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../../labs/attention/attention_pair_parts.hpp"
#include "../../labs/attention/fused_mma.cuh"  // the lab's kernel, with its window option
#include "aisp/attention_reference.hpp"
#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"

namespace aisp::ch18 {
namespace {

using labs_attention::attention_problem;

[[nodiscard]] attention_problem window_problem_of(run_context& ctx, bool skip_outside_window) {
  attention_problem p = labs_attention::with_attention_buffers(ctx);
  p.batch = static_cast<int>(ctx.param("b"));
  p.kv_heads = static_cast<int>(ctx.param("h"));
  p.group = 1;
  p.seq = static_cast<int>(ctx.param("s"));
  p.dim = static_cast<int>(ctx.param("d"));
  p.causal = true;
  p.window = static_cast<int>(ctx.param("window"));
  p.skip_outside_window = skip_outside_window;
  p.scale = 1.0f / std::sqrt(static_cast<float>(p.dim));
  AISP_EXPECTS(p.dim == 128 && p.window > 0, "ch18:sliding_window takes head dim 128 and a window of at least 1");
  return p;
}

void prepare(run_context& /*ctx*/) { labs_attention::prepare_fused_attention<128>(); }
void run_masked(run_context& ctx) { labs_attention::launch_fused_attention<128>(window_problem_of(ctx, false), ctx.stream()); }
void run_skipping(run_context& ctx) { labs_attention::launch_fused_attention<128>(window_problem_of(ctx, true), ctx.stream()); }

// Scores inside the window: query i has min(i + 1, window) keys.
[[nodiscard]] double windowed_scores(double seq, double window) {
  if (seq <= window) return seq * (seq + 1) / 2;
  return window * (window + 1) / 2 + (seq - window) * window;
}

void window_reference(reference_io& io) {
  const auto batch = static_cast<std::size_t>(io.param("b"));
  const auto heads = static_cast<std::size_t>(io.param("h"));
  const auto seq = static_cast<std::size_t>(io.param("s"));
  const auto dim = static_cast<std::size_t>(io.param("d"));
  const auto window = static_cast<std::size_t>(io.param("window"));
  const labs_attention::attention_io buffers(io);
  const auto& [q, k, v, o, scale] = buffers;
  std::vector<double> weights;
  for (std::size_t head = 0; head < batch * heads; ++head) {
    for (std::size_t i = 0; i < seq; ++i) {
      const std::size_t first = i + 1 > window ? i + 1 - window : 0;
      const std::size_t row = (head * seq + i) * dim;
      attention_row_reference(
          &q[row], i + 1 - first, dim, scale, [&](std::size_t j) { return &k[(head * seq + first + j) * dim]; },
          [&](std::size_t j) { return &v[(head * seq + first + j) * dim]; }, weights, &o[row]);
    }
  }
}

[[nodiscard]] variant window_variant(std::string name, std::string summary, stage_fn run) {
  variant v = kit::with_state(std::move(name), std::move(summary), std::move(run), prepare, {});
  v.math = math_unit::bf16_tensor;
  return v;
}

[[nodiscard]] pair sliding_window_pair() {
  const auto size = [](std::int64_t batch, std::int64_t heads, std::int64_t seq, std::int64_t window) {
    return param_map{{"b", batch}, {"h", heads}, {"s", seq}, {"d", 128}, {"window", window}};
  };
  return pair("ch18:sliding_window")
      .summary("causal sliding-window attention (window 1024 of 8192 keys): masked tiles skipped, not computed and masked")
      .needs_compute_capability(9, 0, "built for sm_90a")
      .benchmark_size(size(2, 16, 8192, 1024))
      // A window of 70 crosses the 64-key tiles: blocks start mid-tile, some tiles are wholly
      // outside, and queries under 70 see fewer keys than the window.
      .validation_size(size(1, 1, 1, 70))
      .validation_size(size(1, 2, 7, 70))
      .validation_size(size(2, 1, 130, 70))
      .validation_size(size(1, 2, 200, 70))
      .held_out_size(size(1, 3, 257, 70))
      .input("q", dtype::bf16, {"b", "h", "s", "d"})
      .input("k", dtype::bf16, {"b", "h", "s", "d"})
      .input("v", dtype::bf16, {"b", "h", "s", "d"})
      .output("o", dtype::bf16, {"b", "h", "s", "d"})
      .work([](const workload& w) {
        const auto bh = static_cast<double>(w.get("b") * w.get("h"));
        const auto s = static_cast<double>(w.get("s"));
        const auto d = static_cast<double>(w.get("d"));
        return work_amount{.bytes = 2.0 * 4 * bh * s * d,
                           .flops = 4.0 * bh * d * windowed_scores(s, static_cast<double>(w.get("window")))};
      })
      .reference(window_reference)
      .tolerance_override(labs_attention::attention_tolerance())
      .tag("attention")
      .tag("sliding-window")
      .tag("tensor-cores")
      .tag("mma-sync")
      .add_variant(window_variant("baseline", "the fused kernel computes every key tile up to the diagonal and masks the window",
                                  run_masked))
      .add_variant(window_variant("optimized", "the same kernel starts each block at its first query's window: tiles wholly "
                                               "outside every window of the block are never loaded or multiplied",
                                  run_skipping));
}

}  // namespace
}  // namespace aisp::ch18

AISP_REGISTER(aisp::ch18::sliding_window_pair());
