// Steps 1-2 of the bf16 GEMM lab: the SIMT kernels, C (m, n) = A (m, k) · B (n, k)^T with bf16
// inputs, fp32 FFMA accumulation and a bf16 output (gemm_problem.cuh). No tensor cores yet: these
// two are judged against the FP32 FMA peak (65.5 TFLOP/s measured on the H100).
//
// Both kernels sum each output over k = 0, 1, ..., K-1 in order with one FFMA per term (bf16
// products are exact in fp32), and tile padding adds exact zeros: steps 1 and 2 write
// bitwise-identical outputs. Every shape is handled (bounds tests on every load and store).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "aisp/check.hpp"
#include "gemm_problem.cuh"

namespace aisp::labs_gemm {

// Tiles of `tile` needed to cover `extent` (a grid dimension). Not called ceil_div: the Hopper
// steps have their own `hopper::ceil_div`, and their launchers use `using namespace hopper`.
[[nodiscard]] inline unsigned int tile_count(int extent, int tile) {
  return static_cast<unsigned int>((extent + tile - 1) / tile);
}

// A 2-D launch has at most 65535 blocks along y (rows of C here).
inline void expect_grid_rows(unsigned int blocks_y) {
  AISP_EXPECTS(blocks_y <= 65535U, "grid.y over 65535: m is too large for this 2-D launch");
}

// ---- 1. Naive: one thread per C element, lanes along n ----
// The first version: thread (row, col) walks row `row` of A and row `col` of B (both K-major).
// threadIdx.x runs along n, the textbook mapping: a warp's C store is 64 contiguous bytes and its
// A load one address (a broadcast). The price of the TN layout: the 32 lanes read 32 different
// rows of B, each k * 2 bytes apart (8 KiB at k = 4096), so every B load instruction touches 32
// sectors for 2 useful bytes each, and only L1 (the block's 32 warps share the same 32 B rows)
// catches the reuse. Lanes along m would move the problem to A; with both operands K-major
// some operand is always strided in this kernel.
constexpr int naive_block = 32;  // (32, 32) threads: the block of the classic worklogs

__global__ void __launch_bounds__(naive_block * naive_block) gemm_naive_kernel(gemm_problem p) {
  const int col = static_cast<int>(blockIdx.x) * naive_block + static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.y) * naive_block + static_cast<int>(threadIdx.y);
  if (row >= p.m || col >= p.n) {
    return;
  }
  const __nv_bfloat16* const a_row = p.a + static_cast<std::size_t>(row) * p.k;
  const __nv_bfloat16* const b_row = p.b + static_cast<std::size_t>(col) * p.k;
  float sum = 0.0f;
  for (int kk = 0; kk < p.k; ++kk) {
    sum = fmaf(__bfloat162float(a_row[kk]), __bfloat162float(b_row[kk]), sum);
  }
  p.c[static_cast<std::size_t>(row) * p.n + col] = __float2bfloat16_rn(sum);
}

inline void launch_naive(const gemm_problem& p, cudaStream_t stream) {
  const dim3 grid(tile_count(p.n, naive_block), tile_count(p.m, naive_block));
  expect_grid_rows(grid.y);
  gemm_naive_kernel<<<grid, dim3(naive_block, naive_block), 0, stream>>>(p);
  AISP_CHECK_LAUNCH();
}

// ---- 2. Shared-memory tiles: 32 x 32, fp32 FFMA ----
// Changed: the block stages a 32 x 32 tile of A (32 rows x 32 k) and of B (32 rows x 32 k) in
// shared memory, both read from global memory with lanes along k (64 contiguous bytes per warp,
// for A and now for B too), so each global element is loaded once per block instead of once per
// thread: 32x fewer global loads and no 32-sector requests. Values are widened to fp32 once, as
// they are stored, so the inner loop is 2 LDS.32 + 1 FFMA. B is stored transposed, b_tile[k][n],
// so the inner loop reads 32 consecutive words (conflict-free); the row pad of 33 words makes the
// transposed store conflict-free too (word tx * 33 + ty: bank (tx + ty) % 32, 32 lanes, 32 banks).
constexpr int smem_tile = 32;

__global__ void __launch_bounds__(smem_tile * smem_tile) gemm_smem_tiles_kernel(gemm_problem p) {
  __shared__ float a_tile[smem_tile][smem_tile];      // (m, k): a_tile[ty][kk] is a broadcast
  __shared__ float b_tile[smem_tile][smem_tile + 1];  // (k, n), padded
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int block_row = static_cast<int>(blockIdx.y) * smem_tile;
  const int block_col = static_cast<int>(blockIdx.x) * smem_tile;
  const int row = block_row + ty;
  const int col = block_col + tx;
  const int b_row = block_col + ty;  // the B row (an n index) this thread loads
  float sum = 0.0f;
  for (int k0 = 0; k0 < p.k; k0 += smem_tile) {
    const int kk = k0 + tx;
    // Outside A or B: store 0, which adds an exact 0 to every sum.
    a_tile[ty][tx] = (row < p.m && kk < p.k)
                         ? __bfloat162float(p.a[static_cast<std::size_t>(row) * p.k + kk])
                         : 0.0f;
    b_tile[tx][ty] = (b_row < p.n && kk < p.k)
                         ? __bfloat162float(p.b[static_cast<std::size_t>(b_row) * p.k + kk])
                         : 0.0f;
    __syncthreads();
#pragma unroll
    for (int j = 0; j < smem_tile; ++j) {
      sum = fmaf(a_tile[ty][j], b_tile[j][tx], sum);
    }
    __syncthreads();
  }
  if (row < p.m && col < p.n) {
    p.c[static_cast<std::size_t>(row) * p.n + col] = __float2bfloat16_rn(sum);
  }
}

inline void launch_smem_tiles(const gemm_problem& p, cudaStream_t stream) {
  const dim3 grid(tile_count(p.n, smem_tile), tile_count(p.m, smem_tile));
  expect_grid_rows(grid.y);
  gemm_smem_tiles_kernel<<<grid, dim3(smem_tile, smem_tile), 0, stream>>>(p);
  AISP_CHECK_LAUNCH();
}

}  // namespace aisp::labs_gemm
