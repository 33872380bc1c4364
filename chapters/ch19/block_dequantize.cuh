// e4m3 values with fp32 block scales dequantized to bf16 (each value times its block's scale,
// rounded): the baseline of ch19:block_scaled_fp8_gemm, and the cuBLASLt peer's path at shapes
// its block-scaled kernels refuse (chapters/ch19/cublaslt_block_scaled_peer.cuh).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "../../labs/gemm/steps_hopper.cuh"
#include "aisp/check.hpp"
#include "aisp/run_context.hpp"

namespace aisp::ch19 {
namespace {

using labs_gemm::hopper::scale_block;

[[nodiscard]] std::int64_t blocks_of(std::int64_t extent) { return (extent + scale_block - 1) / scale_block; }

// One block a (row, span of k): row r of `values` (rows, k) times its scale, rounded to bf16.
// scale_of_row(r, kb) = scales[(r / row_block) * k_blocks + kb]: A's row_block is 1, B's 128.
__global__ void dequantize_kernel(const __nv_fp8_e4m3* __restrict__ values, const float* __restrict__ scales,
                                  __nv_bfloat16* __restrict__ out, int k, int row_block) {
  const auto row = static_cast<std::int64_t>(blockIdx.y);
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (col >= k) return;
  const int k_blocks = (k + scale_block - 1) / scale_block;
  const float scale = scales[(row / row_block) * k_blocks + col / scale_block];
  out[row * k + col] = __float2bfloat16_rn(static_cast<float>(values[row * k + col]) * scale);
}

inline void dequantize(const __nv_fp8_e4m3* values, const float* scales, __nv_bfloat16* out, std::int64_t rows, std::int64_t k,
                       int row_block, cudaStream_t stream) {
  constexpr int threads = 256;
  const dim3 grid(static_cast<unsigned>((k + threads - 1) / threads), static_cast<unsigned>(rows));
  dequantize_kernel<<<grid, threads, 0, stream>>>(values, scales, out, static_cast<int>(k), row_block);
  AISP_CHECK_LAUNCH();
}

// The pair's a and b into its a_dequantized and b_dequantized scratch (A's scales a row each, B's
// a 128-row block each).
inline void dequantize_operands(run_context& ctx) {
  const std::int64_t m = ctx.param("m"), n = ctx.param("n"), k = ctx.param("k");
  dequantize(ctx.as<const __nv_fp8_e4m3>("a"), ctx.as<const float>("scale_a"), ctx.as<__nv_bfloat16>("a_dequantized"), m, k, 1, ctx.stream());
  dequantize(ctx.as<const __nv_fp8_e4m3>("b"), ctx.as<const float>("scale_b"), ctx.as<__nv_bfloat16>("b_dequantized"), n, k, scale_block,
             ctx.stream());
}

}  // namespace
}  // namespace aisp::ch19
