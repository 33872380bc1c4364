// tiled_matmul: C = A B for fp32 row-major matrices, A (m, k), B (k, n), C (m, n).
// Baseline: naive, one thread per output, every operand loaded from global memory (L1/L2).
// Optimized: 32 x 32 shared-memory tiles: each block stages a tile of A and of B once and every
// thread reads its 32 products' operands from shared memory.
// Why faster: the naive block of 32 x 8 outputs pulls 8 rows of A and 32 columns of B through
// L1 for 256 outputs, 0.625 k bytes per output; a 32 x 32 tile pulls 32 rows and 32 columns for
// 1024 outputs, 0.25 k bytes per output (2.5x less), and its operands then come from shared
// memory at one broadcast and one conflict-free load per FMA instead of two L1 lookups.
// Compute-bound at 2 m n k = 137 GFLOP (4096^3); H100: see README.
// Run: aisp bench run --targets ch07:tiled_matmul
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"

namespace aisp::ch07 {
namespace {

// Workload: A (m, k), B (k, n), C (m, n), fp32 row-major, inputs uniform in [-1, 1).
// Napkin math: FLOPs = 2 m n k = 137.4 G at 4096^3; bytes = 4 (m k + k n + m n) = 201 MiB,
// so the intensity is ~680 FLOP/byte: compute-bound. At the 65.5 TFLOP/s FMA peak that is
// 2.1 ms; neither variant gets near it, because one output per thread spends two loads per FMA
// (register tiling, which fixes that, is ch09's SGEMM progression).
//
// Note [matmul tolerance]: both variants add the k products of an output in the same order
// (k = 0, 1, ...) with one fmaf each, so they agree bitwise. Against the fp64 reference, each
// fmaf rounds once, by at most half an ulp of the partial sum s_j, whose size grows like
// sqrt(j / 9) for uniform [-1, 1) inputs. The error is a sum of k roundings of std
// u |s_j| / sqrt(3) (u = 2^-24): std ~ 0.577 u sqrt(sum_j j / 9) ~ 0.14 u k, i.e. 8e-6 at the
// largest validated k = 1003, and max over the 455 outputs of that size ~3.5 sigma = 3e-5.
// atol = 1e-4 is > 10 sigma; a dropped or doubled product (|a b| ~ 0.3) still fails. rtol 1e-5
// covers the large outputs. Small-integer inputs are exact while k * 64 < 2^24.

constexpr int naive_cols = 32;  // blockDim.x: lanes take consecutive columns of C and B
constexpr int naive_rows = 8;   // blockDim.y: rows of C per block
constexpr int tile_dim = 32;    // 32 x 32 outputs per block, 32 x 32 tiles of A and B
constexpr std::int64_t max_grid_y = 65535;

// ---- Baseline: naive, one thread per output ----
// A warp covers 32 consecutive columns of one row: A[row][kk] is one address for all lanes (a
// broadcast), B[kk][col .. col + 31] is 128 contiguous bytes. Both come from L1 when they hit.
__global__ void matmul_naive_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c, int m, int n, int k) {
  const int col = blockIdx.x * naive_cols + threadIdx.x;
  const int row = blockIdx.y * naive_rows + threadIdx.y;
  if (row >= m || col >= n) {
    return;
  }
  const float* a_row = a + std::int64_t{row} * k;
  float acc = 0.0f;
  for (int kk = 0; kk < k; ++kk) {
    acc = fmaf(a_row[kk], b[std::int64_t{kk} * n + col], acc);
  }
  c[std::int64_t{row} * n + col] = acc;
}

void launch_baseline(run_context& ctx) {
  const auto m = static_cast<int>(ctx.param("m"));
  const auto n = static_cast<int>(ctx.param("n"));
  const auto k = static_cast<int>(ctx.param("k"));
  const std::int64_t blocks_y = (m + naive_rows - 1) / naive_rows;
  AISP_EXPECTS(blocks_y <= max_grid_y, "m exceeds 65535 blocks of 8 rows (gridDim.y limit)");
  const dim3 grid((n + naive_cols - 1) / naive_cols, static_cast<unsigned int>(blocks_y));
  matmul_naive_kernel<<<grid, dim3(naive_cols, naive_rows), 0, ctx.stream()>>>(
      ctx.as<const float>("a"), ctx.as<const float>("b"), ctx.as<float>("c"), m, n, k);
  AISP_CHECK_LAUNCH();
}

// ---- Optimized: 32 x 32 shared-memory tiles ----
// Changed: the block walks k in steps of 32. Each step, thread (x, y) loads one element of the
// A tile (row y, column x: a warp reads 128 contiguous bytes of a row of A) and one of the B
// tile (row y, column x: 128 contiguous bytes of a row of B), zero-filled past the edges. After
// a barrier, each thread does 32 FMAs from shared memory: a_tile[y][j] is the same word for the
// whole warp (a broadcast) and b_tile[j][x] hits 32 different banks (conflict-free). Each loaded
// element is used by 32 threads of the block, instead of being fetched by each of them.
__global__ void __launch_bounds__(tile_dim* tile_dim)
    matmul_smem_tile_kernel(const float* __restrict__ a, const float* __restrict__ b,
                            float* __restrict__ c, int m, int n, int k) {
  __shared__ float a_tile[tile_dim][tile_dim];
  __shared__ float b_tile[tile_dim][tile_dim];
  const int x = threadIdx.x;
  const int y = threadIdx.y;
  const int row = blockIdx.y * tile_dim + y;
  const int col = blockIdx.x * tile_dim + x;

  float acc = 0.0f;
  for (int k0 = 0; k0 < k; k0 += tile_dim) {
    // Zero padding past k, m or n adds fmaf(0, 0, acc) = acc: the k order of the sum is kept.
    a_tile[y][x] = (row < m && k0 + x < k) ? a[std::int64_t{row} * k + k0 + x] : 0.0f;
    b_tile[y][x] = (k0 + y < k && col < n) ? b[std::int64_t{k0 + y} * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int j = 0; j < tile_dim; ++j) {
      acc = fmaf(a_tile[y][j], b_tile[j][x], acc);
    }
    __syncthreads();  // the next step overwrites the tiles
  }
  if (row < m && col < n) {
    c[std::int64_t{row} * n + col] = acc;
  }
}

void launch_optimized(run_context& ctx) {
  const auto m = static_cast<int>(ctx.param("m"));
  const auto n = static_cast<int>(ctx.param("n"));
  const auto k = static_cast<int>(ctx.param("k"));
  const std::int64_t blocks_y = (m + tile_dim - 1) / tile_dim;
  AISP_EXPECTS(blocks_y <= max_grid_y, "m exceeds 65535 tiles of 32 rows (gridDim.y limit)");
  const dim3 grid((n + tile_dim - 1) / tile_dim, static_cast<unsigned int>(blocks_y));
  matmul_smem_tile_kernel<<<grid, dim3(tile_dim, tile_dim), 0, ctx.stream()>>>(
      ctx.as<const float>("a"), ctx.as<const float>("b"), ctx.as<float>("c"), m, n, k);
  AISP_CHECK_LAUNCH();
}

}  // namespace
}  // namespace aisp::ch07

AISP_REGISTER(
    aisp::pair("ch07:tiled_matmul")
        .summary("fp32 matmul: naive one-thread-per-output vs 32 x 32 shared-memory tiles")
        .benchmark_size({{"m", 4096}, {"n", 4096}, {"k", 4096}})
        .validation_size({{"m", 1}, {"n", 1}, {"k", 1}})
        .validation_size({{"m", 7}, {"n", 65}, {"k", 33}})
        .validation_size({{"m", 65}, {"n", 7}, {"k", 1003}})
        .validation_size({{"m", 257}, {"n", 263}, {"k", 255}})
        .held_out_size({{"m", 513}, {"n", 385}, {"k", 641}})
        .input("a", aisp::dtype::f32, {"m", "k"})
        .input("b", aisp::dtype::f32, {"k", "n"})
        .output("c", aisp::dtype::f32, {"m", "n"})
        .exact_math()  // small-integer inputs: every partial sum is an integer below 2^24
        .work(aisp::kit::matmul_work(sizeof(float)))  // fp32 a, b and c
        .reference(aisp::kit::matmul_reference)
        .tolerance_override(aisp::tolerance{
            .rtol = 1e-5,
            .atol = 1e-4,
            .max_rel_l2 = 1e-5,
            .reason = "fp32 fma chain over k products (same k order in both variants) against "
                      "fp64: error std ~0.14 u k = 8e-6 at k = 1003; atol 1e-4 is > 10 sigma and "
                      "still catches one dropped product (see Note [matmul tolerance])"})
        .tag("shared-memory-tiling")
        .tag("data-reuse")
        .add_variant("baseline", "naive: one thread per output, operands from global memory",
                     aisp::ch07::launch_baseline)
        .add_variant("optimized",
                     "32 x 32 shared-memory tiles of A and B, 32 FMAs per barrier pair",
                     aisp::ch07::launch_optimized));
