// ch19:block_scaled_fp8_gemm's library peer: cuBLASLt's block-scaled fp8 GEMM (cuBLAS 12.9+ on
// Hopper), the same e4m3 operands and the same scales, 1 x 128 of A and 128 x 128 of B, bf16 out.
#pragma once

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "aisp/cublas_check.hpp"
#include "aisp/cublaslt_plan.hpp"
#include "aisp/device_scratch.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "block_dequantize.cuh"
#include "cublaslt_scale_layout.cuh"

namespace aisp::ch19 {
namespace {

// Note [cuBLASLt block scales]: the TN mapping of labs/gemm (Note [fp8 through cuBLASLt]):
// cuBLASLt's A is our B as (k, n) with TRANSA = T, its B our A as (k, m), D (n, m). So B's 128 x
// 128 scales are cuBLASLt's A scales (CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F) and A's 1 x
// 128 scales its B scales (VEC128_32F); FAST_ACCUM must stay off. cuBLASLt reads A's 1 x 128
// scales with the row fastest (m x k-blocks, column-major) and B's 128 x 128 scales with the k
// block fastest, each row of k blocks padded to a multiple of 4: tests/gpu/cublaslt_block_scales_test.cu
// ran all 16 candidates at 3 x 3 blocks of B and only these two (A padded or not: m % 16 == 0)
// matched the fp64 product (rel-L2 0.0017; every other 0.27-0.83; H200, 2026-12-02). The pair
// stores both row-major, so each call rewrites A's scales (relayout_scales: 2 MB at 8192^3, a
// few us against a ~0.8 ms GEMM) and B's where k/128 % 4 != 0, in the peer's time: its inputs
// are the pair's, as every variant's.
inline constexpr scale_layout cublaslt_vec128_scales{.outer_fastest = true, .padded_to_4 = false};
inline constexpr scale_layout cublaslt_blk128_scales{.outer_fastest = false, .padded_to_4 = true};

// cuBLASLt's fp8 kernels need 16-byte rows (m, n, k multiples of 16); whole 128-k blocks are
// asked as well, not knowing what its block-scaled kernels do with a partial one. Other shapes
// (validation sizes) run cuBLASLt's bf16 GEMM on the dequantized operands, as the baseline's
// first step: the peer is cuBLASLt at every size, and the note `cublaslt_operands` says which.
[[nodiscard]] inline bool cublaslt_takes_block_scales(std::int64_t m, std::int64_t n, std::int64_t k) {
  return m % 16 == 0 && n % 16 == 0 && k % scale_block == 0;
}

constexpr std::size_t block_scaled_peer_workspace_bytes = std::size_t{32} << 20;

struct block_scaled_peer_state {
  cublaslt_plan plan{CUBLAS_COMPUTE_32F, CUDA_R_32F};
  bool block_scaled = false;
  std::unique_ptr<device_scratch> scale_a, scale_b;  // in cuBLASLt's layouts; null: the pair's layout is cuBLASLt's
};

// cuBLASLt's block-scaled fp8 GEMM on a TN plan (Note [cuBLASLt block scales]): its A (our B)
// with 128 x 128 scales, its B (our A) with 1 x 128 scales, FAST_ACCUM off. The scale pointers
// are set per call (set_block_scales).
inline void use_block_scales(cublaslt_plan& plan) {
  const std::int8_t fast_accumulation = 0;
  const cublasLtMatmulMatrixScale_t a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;  // our B
  const cublasLtMatmulMatrixScale_t b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;      // our A
  AISP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accumulation, sizeof(fast_accumulation)));
  AISP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &a_mode, sizeof(a_mode)));
  AISP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &b_mode, sizeof(b_mode)));
}

// The scale pointers cuBLASLt reads: our B's as its A's, our A's as its B's.
inline void point_at_scales(cublaslt_plan& plan, const float* a_scales, const float* b_scales) {
  AISP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &b_scales, sizeof(b_scales)));
  AISP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a_scales, sizeof(a_scales)));
}

// The scales of an operand of `rows` rows (or row blocks) for cuBLASLt: the pair's buffer where
// the layouts agree, else `relaid` rewritten on the stream.
inline const float* scales_for_cublaslt(const float* pair_scales, device_scratch* relaid, std::int64_t rows, std::int64_t k_blocks,
                                        scale_layout layout, cudaStream_t stream) {
  if (relaid == nullptr) return pair_scales;
  relayout_scales(pair_scales, static_cast<float*>(relaid->data()), rows, k_blocks, layout, stream);
  return static_cast<const float*>(relaid->data());
}

inline std::unique_ptr<device_scratch> relaid_buffer(scale_layout layout, std::int64_t rows, std::int64_t k_blocks) {
  if (same_places(layout, row_major_scales, rows, k_blocks)) return nullptr;
  auto buffer = std::make_unique<device_scratch>(static_cast<std::size_t>(scale_entries(layout, rows, k_blocks)) * sizeof(float));
  AISP_CUDA_CHECK(cudaMemset(buffer->data(), 0, buffer->bytes()));  // padding: never read as a scale
  return buffer;
}

// Points the descriptor at this call's scales (rewritten where cuBLASLt's layout differs).
inline void set_block_scales(run_context& ctx, block_scaled_peer_state& s) {
  const std::int64_t m = ctx.param("m"), n = ctx.param("n"), k_blocks = blocks_of(ctx.param("k"));
  const float* a_scales = scales_for_cublaslt(ctx.as<const float>("scale_a"), s.scale_a.get(), m, k_blocks, cublaslt_vec128_scales, ctx.stream());
  const float* b_scales =
      scales_for_cublaslt(ctx.as<const float>("scale_b"), s.scale_b.get(), blocks_of(n), k_blocks, cublaslt_blk128_scales, ctx.stream());
  point_at_scales(s.plan, a_scales, b_scales);
}

inline void setup_cublaslt_block_scaled(run_context& ctx) {
  const std::int64_t m = ctx.param("m"), n = ctx.param("n"), k = ctx.param("k");
  auto& s = make_state<block_scaled_peer_state>(ctx);
  s.block_scaled = cublaslt_takes_block_scales(m, n, k);
  s.plan.use_row_major_tn(s.block_scaled ? CUDA_R_8F_E4M3 : CUDA_R_16BF, CUDA_R_16BF, m, n, k);  // Note [cuBLASLt block scales]
  if (s.block_scaled) {
    use_block_scales(s.plan);
    s.scale_a = relaid_buffer(cublaslt_vec128_scales, m, blocks_of(k));
    s.scale_b = relaid_buffer(cublaslt_blk128_scales, blocks_of(n), blocks_of(k));
    set_block_scales(ctx, s);  // the tuning calls read real scales
  } else {
    dequantize_operands(ctx);  // the tuning calls read real operands
  }
  s.plan.allocate_workspace(block_scaled_peer_workspace_bytes);
  s.plan.autotune_algorithm(ctx,
                            {ctx.buffer(s.block_scaled ? "b" : "b_dequantized"), ctx.buffer(s.block_scaled ? "a" : "a_dequantized"),
                             s.plan.workspace, block_scaled_peer_workspace_bytes},
                            s.block_scaled ? "this block-scaled e4m3 TN shape" : "this bf16 TN shape", CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE);
  ctx.note("cublaslt_operands", s.block_scaled ? "e4m3 with 128x128 (B) and 1x128 (A) fp32 block scales, FAST_ACCUM 0"
                                               : "bf16 dequantized copies (block-scaled path needs m, n % 16 and k % 128 == 0)");
}

inline void run_cublaslt_block_scaled(run_context& ctx) {
  auto& s = state_of<block_scaled_peer_state>(ctx);
  if (s.block_scaled) {
    set_block_scales(ctx, s);
  } else {
    dequantize_operands(ctx);
  }
  const float alpha = 1.0f;
  const float beta = 0.0f;  // C is written, never read
  auto* const c = ctx.as<__nv_bfloat16>("c");
  AISP_CUBLAS_CHECK(cublasLtMatmul(s.plan.handle, s.plan.desc, &alpha, ctx.buffer(s.block_scaled ? "b" : "b_dequantized"), s.plan.layout_a,
                                   ctx.buffer(s.block_scaled ? "a" : "a_dequantized"), s.plan.layout_b, &beta, c, s.plan.layout_c, c,
                                   s.plan.layout_c, &s.plan.algo, s.plan.workspace, block_scaled_peer_workspace_bytes, ctx.stream()));
}

inline void teardown_cublaslt_block_scaled(run_context& ctx) { release_state<block_scaled_peer_state>(ctx); }

[[nodiscard]] inline variant cublaslt_block_scaled_peer(const tolerance& held_to) {
  variant peer = kit::with_state("peer_cublaslt",
                                 "cuBLASLt block-scaled e4m3 TN matmul (BLK128x128 scales for B, VEC128 for A), CUBLAS_COMPUTE_32F, "
                                 "bf16 D, autotuned over the top 16 heuristic algorithms; the scales rewritten to its layout in each call",
                                 run_cublaslt_block_scaled, setup_cublaslt_block_scaled, teardown_cublaslt_block_scaled);
  peer.library = "cuBLAS";
  peer.math = math_unit::fp8_tensor;
  peer.precision = "e4m3 products; cuBLASLt's block-scaled accumulation (each 128-k block's sum scaled in fp32)";
  peer.precision_tolerance = held_to;
  return peer;
}

}  // namespace
}  // namespace aisp::ch19
