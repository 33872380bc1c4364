// fused_l2_norm: y[r, :] = x[r, :] / sqrt(sum_c x[r, c]^2 + eps), x (rows, cols) fp32.
// Baseline: two kernels: row sums of squares into a rows-long buffer, then a scaling kernel that
// reads x again. Optimized: one block per row that keeps its row in registers: x is read once.
// Why faster: both are bandwidth-bound; the baseline moves 3 x 4n bytes (x twice, y once), the
// fused kernel 2 x 4n. At 16384 x 4096 that is 768 MiB vs 512 MiB: ~270 us vs ~180 us, ~1.5x.
// H100: see README.
// Run: aisp bench run --targets ch09:fused_l2_norm
#include <cmath>
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "row_sums.cuh"

namespace aisp::ch09 {
namespace {

// Workload: x (rows, cols) fp32 row-major, y (rows, cols) fp32; eps = 1e-6.
// Napkin math: the fewest bytes are x read once and y written once: 8 rows cols. At rows =
// 16384, cols = 4096 (2^26 elements) that is 512 MiB, ~180 us at 3.0 TB/s. FLOPs: 3 per element
// (square, add, scale); 0.375 FLOP/byte, bandwidth-bound.
//
// Note [row in registers]: one 256-thread block per row. With cols % 4 == 0 every row starts
// 16-byte aligned and a thread holds up to 4 float4s of it (a 4096-float row); otherwise it holds
// 4 floats (a 1024-float row), read with scalar loads. A row longer than that is correct too: the
// part beyond the registers is read once for the sum and once more (from L2) for the store.
// At cols = 4096 a block has 16 KB of loads in flight and an SM holds 5 blocks (44 registers):
// ~80 KB per SM, well above the ~16 KB that Little's law asks for at 3 TB/s.
//
// Tolerance: the default fp32 one. The sum of squares is of non-negative terms, so its relative
// error is at most (depth of the summation) x 2^-24: ~16 serial adds per thread plus an 8-level
// tree, ~1.4e-6; y takes half of that through the square root, plus 2 ulps of rsqrtf and the
// multiply: ~1e-6 < rtol 1e-5.

constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / 32;
constexpr int items_per_thread = 4;  // vectors (float4 or float) of the row held per thread
constexpr float norm_eps = 1e-6f;

[[nodiscard]] __device__ float scaled(float v, float s) { return v * s; }
[[nodiscard]] __device__ float4 scaled(float4 v, float s) {
  return make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
}

// Vec = float4 when cols % 4 == 0 (rows 16-byte aligned), else float.
template <class Vec>
constexpr int lanes_of = sizeof(Vec) / sizeof(float);

// ---- Baseline: sum-of-squares kernel, then a scaling kernel that re-reads x ----
template <class Vec>
__global__ void row_sum_squares_kernel(const float* __restrict__ x, float* __restrict__ inv_norm,
                                       std::int64_t cols) {
  const auto* row = reinterpret_cast<const Vec*>(x + std::int64_t{blockIdx.x} * cols);
  const int num_vectors = static_cast<int>(cols / lanes_of<Vec>);
  float partial = 0.0f;
#pragma unroll 4
  for (int i = threadIdx.x; i < num_vectors; i += block_threads) {
    partial += squares(row[i]);
  }
  const float total = block::reduce_sum<warps_per_block>(partial);
  if (threadIdx.x == 0) {
    inv_norm[blockIdx.x] = rsqrtf(total + norm_eps);
  }
}

template <class Vec>
__global__ void row_scale_kernel(const float* __restrict__ x, const float* __restrict__ inv_norm,
                                 float* __restrict__ y, std::int64_t cols) {
  const std::int64_t offset = std::int64_t{blockIdx.x} * cols;
  const auto* row_in = reinterpret_cast<const Vec*>(x + offset);
  auto* row_out = reinterpret_cast<Vec*>(y + offset);
  const int num_vectors = static_cast<int>(cols / lanes_of<Vec>);
  const float scale = inv_norm[blockIdx.x];
#pragma unroll 4
  for (int i = threadIdx.x; i < num_vectors; i += block_threads) {
    row_out[i] = scaled(row_in[i], scale);
  }
}

template <class Vec>
void launch_two_pass(run_context& ctx) {
  const std::int64_t rows = ctx.param("rows");
  const std::int64_t cols = ctx.param("cols");
  const auto* x = ctx.as<const float>("x");
  auto* inv_norm = ctx.as<float>("inv_norm");
  const auto grid = static_cast<unsigned int>(rows);
  row_sum_squares_kernel<Vec><<<grid, block_threads, 0, ctx.stream()>>>(x, inv_norm, cols);
  AISP_CHECK_LAUNCH();
  row_scale_kernel<Vec><<<grid, block_threads, 0, ctx.stream()>>>(x, inv_norm,
                                                                  ctx.as<float>("y"), cols);
  AISP_CHECK_LAUNCH();
}

[[nodiscard]] bool rows_are_float4_aligned(const run_context& ctx) {
  return ctx.param("cols") % 4 == 0 &&
         reinterpret_cast<std::uintptr_t>(ctx.as<const float>("x")) % alignof(float4) == 0 &&
         reinterpret_cast<std::uintptr_t>(ctx.as<const float>("y")) % alignof(float4) == 0;
}

void check_shape(const run_context& ctx) {
  AISP_EXPECTS(ctx.param("rows") <= 0x7fffffff, "one block per row: rows must fit gridDim.x");
  AISP_EXPECTS(ctx.param("cols") <= 0x7fffffff, "cols must fit a 32-bit index");
}

void launch_baseline(run_context& ctx) {
  check_shape(ctx);
  if (rows_are_float4_aligned(ctx)) {
    launch_two_pass<float4>(ctx);
  } else {
    launch_two_pass<float>(ctx);
  }
}

// ---- Optimized: one kernel, the row kept in registers ----
// Changed: the block loads its row once into registers (4 vectors per thread, all in flight
// before the first add), reduces it, and scales the registers: x crosses HBM once, not twice,
// and the rows-long norm buffer and the second launch are gone. See Note [row in registers].
template <class Vec>
__global__ void l2_norm_row_fused_kernel(const float* __restrict__ x, float* __restrict__ y,
                                         std::int64_t cols) {
  const std::int64_t offset = std::int64_t{blockIdx.x} * cols;
  const auto* row_in = reinterpret_cast<const Vec*>(x + offset);
  auto* row_out = reinterpret_cast<Vec*>(y + offset);
  const int num_vectors = static_cast<int>(cols / lanes_of<Vec>);
  constexpr int cached_vectors = items_per_thread * block_threads;

  Vec cached[items_per_thread];
#pragma unroll
  for (int j = 0; j < items_per_thread; ++j) {
    const int i = threadIdx.x + j * block_threads;
    if (i < num_vectors) {
      cached[j] = row_in[i];
    }
  }
  float partial = 0.0f;
#pragma unroll
  for (int j = 0; j < items_per_thread; ++j) {
    if (threadIdx.x + j * block_threads < num_vectors) {
      partial += squares(cached[j]);
    }
  }
  for (int i = cached_vectors + threadIdx.x; i < num_vectors; i += block_threads) {
    partial += squares(row_in[i]);  // rows longer than the registers hold
  }

  const float inv_norm = rsqrtf(block::reduce_sum<warps_per_block>(partial) + norm_eps);

#pragma unroll
  for (int j = 0; j < items_per_thread; ++j) {
    const int i = threadIdx.x + j * block_threads;
    if (i < num_vectors) {
      row_out[i] = scaled(cached[j], inv_norm);
    }
  }
  for (int i = cached_vectors + threadIdx.x; i < num_vectors; i += block_threads) {
    row_out[i] = scaled(row_in[i], inv_norm);  // second read, from L2
  }
}

template <class Vec>
void launch_fused(run_context& ctx) {
  l2_norm_row_fused_kernel<Vec>
      <<<static_cast<unsigned int>(ctx.param("rows")), block_threads, 0, ctx.stream()>>>(
          ctx.as<const float>("x"), ctx.as<float>("y"), ctx.param("cols"));
  AISP_CHECK_LAUNCH();
}

void launch_optimized(run_context& ctx) {
  check_shape(ctx);
  if (rows_are_float4_aligned(ctx)) {
    launch_fused<float4>(ctx);
  } else {
    launch_fused<float>(ctx);
  }
}

[[nodiscard]] std::int64_t matrix_elements(const workload& w) {
  return w.get("rows") * w.get("cols");
}

}  // namespace
}  // namespace aisp::ch09

AISP_REGISTER(
    aisp::pair("ch09:fused_l2_norm")
        .summary("row-wise L2 normalization: norms kernel + scaling kernel vs one row-resident "
                 "kernel")
        .benchmark_size({{"rows", 16384}, {"cols", 4096}})
        .validation_size({{"rows", 1}, {"cols", 1}})
        .validation_size({{"rows", 7}, {"cols", 3}})
        .validation_size({{"rows", 65}, {"cols", 33}})
        .validation_size({{"rows", 17}, {"cols", 1024}})
        .validation_size({{"rows", 33}, {"cols", 1003}})
        .validation_size({{"rows", 3}, {"cols", 5003}})  // beyond the scalar register cache
        .validation_size({{"rows", 2}, {"cols", 8192}})  // beyond the float4 register cache
        .held_out_size({{"rows", 1001}, {"cols", 3001}})
        .input("x", aisp::dtype::f32, {"rows", "cols"})
        .output("y", aisp::dtype::f32, {"rows", "cols"})
        .scratch("inv_norm", aisp::dtype::f32,
                 [](const aisp::workload& w) { return w.get("rows"); })
        .work([](const aisp::workload& w) {
          const double elements = static_cast<double>(aisp::ch09::matrix_elements(w));
          return aisp::work_amount{.bytes = 8.0 * elements, .flops = 3.0 * elements};
        })
        .reference([](aisp::reference_io& io) {
          const auto rows = static_cast<std::size_t>(io.param("rows"));
          const auto cols = static_cast<std::size_t>(io.param("cols"));
          const std::span<const double> x = io.input("x");
          const std::span<double> y = io.output("y");
          for (std::size_t r = 0; r < rows; ++r) {
            double sum_squares = 0.0;
            for (std::size_t c = 0; c < cols; ++c) {
              sum_squares += x[r * cols + c] * x[r * cols + c];
            }
            const double norm = std::sqrt(sum_squares + static_cast<double>(aisp::ch09::norm_eps));
            for (std::size_t c = 0; c < cols; ++c) {
              y[r * cols + c] = x[r * cols + c] / norm;
            }
          }
        })
        .tag("fusion")
        .tag("reduction")
        .add_variant("baseline",
                     "sum-of-squares kernel into a rows-long buffer, then a scaling kernel that "
                     "reads x again (3 x 4n bytes)",
                     aisp::ch09::launch_baseline)
        .add_variant("optimized",
                     "one block per row, row held in registers: read x once (2 x 4n bytes)",
                     aisp::ch09::launch_optimized));
