// labs/attention: the forward pass of attention, O = softmax(Q K^T / sqrt(d)) V, bf16 in and out,
// fp32 softmax and accumulation: the lab's worklog of FlashAttention's ideas, one variant per step,
// on four pairs (head dims 128 and 64, causal, grouped-query). Issue 18; README.md.
// Baseline (naive_attention.cuh): cuBLASLt batched GEMMs around a softmax kernel, S and P through
// HBM. Steps 2-3 (fused_mma.cuh): one fused kernel, online softmax, mma.sync, FA2 partitioning.
// Steps 4-5 (wgmma_attention.cuh): wgmma fed by TMA from a producer warpgroup; then the softmax
// overlapped with the GEMMs. Step 6 (persistent_attention.cuh): step 5 on persistent CTAs where
// every block costs the same. Peer (cudnn_sdpa.cpp): cuDNN's fused flash attention, in process
// through its backend graph API, autotuned over the heuristic's plans.
// Run: aisp bench run --targets labs/attention
#include <cuda_bf16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "aisp/attention_reference.hpp"
#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "attention_problem.cuh"
#include "attention_pair_parts.hpp"
#include "cudnn_sdpa.hpp"
#include "fused_mma.cuh"
#include "naive_attention.cuh"
#include "persistent_attention.cuh"
#include "wgmma_attention.cuh"

namespace aisp::labs_attention {
namespace {

// Napkin math at b = 4, h = 16, s = 4096, d = 128: 4 b h s^2 d = 550 GFLOP (the two GEMMs);
// Q, K, V and O are 4 x 67 MB = 268 MB, 90 us at 3.0 TB/s: at the ~800 TFLOP/s of the bf16
// tensor peak, 0.69 ms, so the fused kernel is compute-bound. The baseline's scores are
// b h s^2 = 1.07 G values: 4.3 GB of fp32 S written and read, 2.1 GB of bf16 P written and read,
// 13 GB of HBM traffic, ~4.3 ms at 3.0 TB/s: it is bound by memory, not math.
//
[[nodiscard]] attention_problem problem_of(run_context& ctx) {
  attention_problem p = with_attention_buffers(ctx);
  p.batch = static_cast<int>(ctx.param("b"));
  p.kv_heads = static_cast<int>(ctx.param("hkv"));
  p.group = static_cast<int>(ctx.param("group"));
  p.seq = static_cast<int>(ctx.param("s"));
  p.dim = static_cast<int>(ctx.param("d"));
  p.causal = ctx.param("causal") != 0;
  p.scale = 1.0f / std::sqrt(static_cast<float>(p.dim));
  AISP_EXPECTS(p.dim == 64 || p.dim == 128, "labs/attention kernels take head dims 64 and 128");
  return p;
}

// Runs `action(head_dim<D>{})` with D the problem's head dim (64 or 128: problem_of checks); the
// action reads D back as decltype(dim)::value.
template <int D>
using head_dim = std::integral_constant<int, D>;
template <class Action>
void with_head_dim(int dim, Action&& action) {
  if (dim == 64) {
    action(head_dim<64>{});
  } else {
    action(head_dim<128>{});
  }
}

// Every variant of the lab runs on the bf16 tensor cores (the baseline and the peer through a library).
[[nodiscard]] variant tensor_variant(std::string name, std::string summary, stage_fn run, stage_fn setup, stage_fn teardown,
                                     std::string library = "") {
  variant v = kit::with_state(std::move(name), std::move(summary), std::move(run), std::move(setup), std::move(teardown));
  v.library = std::move(library);
  v.math = math_unit::bf16_tensor;
  return v;
}

// ---- Step 1: the baseline ----
void setup_naive(run_context& ctx) {
  const auto p = problem_of(ctx);
  plan_naive_attention(make_state<naive_attention_state>(ctx, score_elements(p)), p);
}
void run_naive(run_context& ctx) { run_naive_attention(state_of<naive_attention_state>(ctx), problem_of(ctx), ctx.stream()); }
void teardown_naive(run_context& ctx) { release_state<naive_attention_state>(ctx); }

[[nodiscard]] variant naive_step() {
  return tensor_variant("baseline",
                        "naive: S = Q K^T (fp32) to HBM by cuBLASLt's batched bf16 GEMM, a softmax kernel writes P (bf16), "
                        "cuBLASLt's P V",
                        run_naive, setup_naive, teardown_naive, "cuBLAS");
}

// ---- Steps 2-3: fused, online softmax, mma.sync, FA2 partitioning ----
void setup_fused(run_context& ctx) {
  with_head_dim(problem_of(ctx).dim, [](auto dim) { prepare_fused_attention<decltype(dim)::value>(); });
}

void run_fused(run_context& ctx) {
  const auto p = problem_of(ctx);
  with_head_dim(p.dim, [&](auto dim) { launch_fused_attention<decltype(dim)::value>(p, ctx.stream()); });
}

[[nodiscard]] variant fused_step() {
  return tensor_variant("optimized_fused_mma",
                        "fused: online softmax in registers, mma.sync m16n8k16 bf16 for Q K^T and P V, 64 query rows a "
                        "block and 16 a warp (FA2 partitioning), 64-key K/V tiles double-buffered by cp.async",
                        run_fused, setup_fused, {});
}

// ---- Steps 4 and 5: wgmma fed by TMA from a producer warpgroup; then the softmax overlapped ----
template <bool Overlap>
void setup_wgmma(run_context& ctx) {
  with_head_dim(problem_of(ctx).dim, [](auto dim) { prepare_wgmma_attention<decltype(dim)::value, Overlap>(); });
}

template <bool Overlap>
void run_wgmma(run_context& ctx) {
  const auto p = problem_of(ctx);
  with_head_dim(p.dim, [&](auto dim) { launch_wgmma_attention<decltype(dim)::value, Overlap>(p, ctx.stream()); });
}

[[nodiscard]] variant wgmma_step() {
  return tensor_variant("optimized_wgmma_tma",
                        "wgmma: Q K^T as m64n128k16 from shared memory, P V with P in registers and V N-major; TMA loads Q "
                        "and a 3-stage ring of 128-key K/V tiles from a producer warpgroup; 64 query rows for each of two "
                        "consumer warpgroups (three at d 64)",
                        run_wgmma<false>, setup_wgmma<false>, {});
}

[[nodiscard]] variant overlap_step() {
  return tensor_variant("optimized_wgmma_overlap",
                        "softmax overlapped: each consumer issues the next tile's Q K^T and the previous tile's P V before "
                        "its softmax, and waits for P V only to rescale the output; the consumers take turns to issue "
                        "(ping-pong)",
                        run_wgmma<true>, setup_wgmma<true>, {});
}

// ---- Step 6: step 5 on persistent CTAs where every block costs the same (persistent_attention.cuh) ----
// Causal blocks and head dim 64 keep step 5's launch (Note [persistent attention]).
[[nodiscard]] bool persistent_applies(const attention_problem& p) { return !p.causal && p.dim == 128; }

void setup_persistent(run_context& ctx) {
  setup_wgmma<true>(ctx);
  if (persistent_applies(problem_of(ctx))) prepare_persistent_attention<128>();
}

void run_persistent(run_context& ctx) {
  const auto p = problem_of(ctx);
  if (persistent_applies(p)) {
    launch_persistent_attention<128>(p, ctx.stream());
  } else {
    run_wgmma<true>(ctx);
  }
}

[[nodiscard]] variant persistent_step() {
  return tensor_variant("optimized_wgmma_persistent",
                        "step 5 on one CTA an SM walking the blocks of query rows: the producer runs on into the next "
                        "block's K/V tiles and Q rows while the consumers finish, and the output is staged in the last K "
                        "tile; causal attention and head dim 64 keep step 5's launch",
                        run_persistent, setup_persistent, {});
}

// ---- The peer: cuDNN's fused flash attention forward (cudnn_sdpa.cpp) ----
[[nodiscard]] cudnn_sdpa_tensors cudnn_tensors(const attention_problem& p) { return {p.q, p.k, p.v, p.o}; }

void setup_cudnn(run_context& ctx) {
  const auto p = problem_of(ctx);
  const cudnn_sdpa_shape shape{.batch = p.batch, .heads = p.heads(), .kv_heads = p.kv_heads, .seq = p.seq,
                               .dim = p.dim, .causal = p.causal, .scale = p.scale};
  make_state<cudnn_sdpa>(ctx, ctx, shape, cudnn_tensors(p));
}
// Only the pointers: the plan holds the shape.
void run_cudnn(run_context& ctx) { state_of<cudnn_sdpa>(ctx).run(cudnn_tensors(with_attention_buffers(ctx)), ctx.stream()); }
void teardown_cudnn(run_context& ctx) { release_state<cudnn_sdpa>(ctx); }

[[nodiscard]] variant cudnn_peer() {
  return tensor_variant("peer_cudnn",
                        "cuDNN's fused flash attention forward (backend graph: Q K^T, scale, the causal mask where asked, "
                        "softmax, P V as one engine), autotuned over up to 8 of the heuristic's plans, the winner replayed "
                        "from a CUDA graph",
                        run_cudnn, setup_cudnn, teardown_cudnn, "cuDNN");
}

// The fp64 reference: per (batch, head, query) the scores, their softmax and the weighted sum of V.
void attention_reference(reference_io& io) {
  const auto batch = static_cast<std::size_t>(io.param("b"));
  const auto kv_heads = static_cast<std::size_t>(io.param("hkv"));
  const auto group = static_cast<std::size_t>(io.param("group"));
  const auto seq = static_cast<std::size_t>(io.param("s"));
  const auto dim = static_cast<std::size_t>(io.param("d"));
  const bool causal = io.param("causal") != 0;
  const attention_io buffers(io);
  const auto& [q, k, v, o, scale] = buffers;
  std::vector<double> weights;
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t h = 0; h < kv_heads * group; ++h) {
      const std::size_t kv = b * kv_heads + h / group;
      for (std::size_t i = 0; i < seq; ++i) {
        const std::size_t row = ((b * kv_heads * group + h) * seq + i) * dim;
        attention_row_reference(
            &q[row], causal ? i + 1 : seq, dim, scale, [&](std::size_t j) { return &k[(kv * seq + j) * dim]; },
            [&](std::size_t j) { return &v[(kv * seq + j) * dim]; }, weights, &o[row]);
      }
    }
  }
}

struct attention_shape {
  std::int64_t batch, kv_heads, group, seq, dim;
  bool causal;
};

// One definition for the four pairs. Validation sizes keep d, the group and the mask and vary
// the rest: 1, 7, 65 and 130 keys (a lone key, a ragged first tile, a tile and one more, two tiles
// and two rows: every tail of the 64-row query and key tiles); the held-out size, 257, puts a lone
// query in a fifth block.
[[nodiscard]] pair attention_pair(std::string target, const attention_shape& shape, std::string summary) {
  const auto size = [&shape](std::int64_t batch, std::int64_t kv_heads, std::int64_t seq) {
    return param_map{{"b", batch}, {"hkv", kv_heads}, {"group", shape.group}, {"s", seq}, {"d", shape.dim}, {"causal", shape.causal ? 1 : 0}};
  };
  return pair(std::move(target))
      .summary(std::move(summary))
      .needs_compute_capability(9, 0, "built for sm_90a; the later steps use wgmma and TMA")
      .benchmark_size(size(shape.batch, shape.kv_heads, shape.seq))
      .validation_size(size(1, 1, 1))
      .validation_size(size(1, 2, 7))
      .validation_size(size(2, 1, 65))
      .validation_size(size(1, 2, 130))
      .held_out_size(size(1, 3, 257))
      .input("q", dtype::bf16, {"b", "hkv", "group", "s", "d"})
      .input("k", dtype::bf16, {"b", "hkv", "s", "d"})
      .input("v", dtype::bf16, {"b", "hkv", "s", "d"})
      .output("o", dtype::bf16, {"b", "hkv", "group", "s", "d"})
      .work([](const workload& w) {
        const auto b = static_cast<double>(w.get("b"));
        const auto h = static_cast<double>(w.get("hkv") * w.get("group"));
        const auto hkv = static_cast<double>(w.get("hkv"));
        const auto s = static_cast<double>(w.get("s"));
        const auto d = static_cast<double>(w.get("d"));
        // Causal: the scores at or below the diagonal, s (s + 1) / 2 of the s^2, as FlashAttention counts.
        const double scored = w.get("causal") != 0 ? s * (s + 1) / 2 : s * s;
        return work_amount{.bytes = 2.0 * (2 * b * h * s * d + 2 * b * hkv * s * d), .flops = 4.0 * b * h * scored * d};
      })
      .reference(attention_reference)
      .tolerance_override(attention_tolerance())
      .tag("attention")
      .tag("tensor-cores")
      .tag("mma-sync")
      .tag("online-softmax")
      .tag("cp-async")
      .tag("wgmma")
      .tag("tma")
      .add_variant(naive_step())
      .add_variant(fused_step())
      .add_variant(wgmma_step())
      .add_variant(overlap_step())
      .add_variant(persistent_step())
      .add_variant(cudnn_peer());
}

}  // namespace
}  // namespace aisp::labs_attention

using aisp::labs_attention::attention_pair;
using aisp::labs_attention::attention_shape;
AISP_REGISTER(attention_pair("labs/attention:fwd_hd128", attention_shape{4, 16, 1, 4096, 128, false},
                             "attention forward, b 4, h 16, s 4096, d 128, bf16: naive (cuBLASLt + softmax) -> fused mma.sync"));
AISP_REGISTER(attention_pair("labs/attention:fwd_hd128_causal", attention_shape{4, 16, 1, 4096, 128, true},
                             "causal attention forward, b 4, h 16, s 4096, d 128, bf16: masked tiles skipped when fused"));
AISP_REGISTER(attention_pair("labs/attention:fwd_hd64", attention_shape{4, 16, 1, 4096, 64, false},
                             "attention forward, b 4, h 16, s 4096, d 64, bf16"));
AISP_REGISTER(attention_pair("labs/attention:fwd_gqa", attention_shape{1, 8, 4, 8192, 128, false},
                             "grouped-query attention forward: 32 query heads on 8 KV heads, s 8192, d 128, bf16"));
