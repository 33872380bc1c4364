// fused_rmsnorm_residual: the pre-norm step of a transformer block, x and residual (rows, cols)
// fp32, weight (cols,): h = x + residual; y = h / sqrt(mean(h^2) + eps) * weight. Outputs h (the
// next residual stream) and y (the normalized input of the next layer).
// Baseline: a residual-add kernel, then an RMSNorm kernel that reads h back from HBM.
// Optimized: one block per row adds, stores h, reduces and normalizes from registers.
// Why faster: bandwidth-bound; the baseline moves 5 x 4n bytes (read x, residual; write h; read
// h; write y), the fused kernel 4 x 4n: 1.25 GiB vs 1 GiB at 16384 x 4096, ~450 us vs ~360 us.
// H100: see README.
// Run: aisp bench run --targets ch09:fused_rmsnorm_residual
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/launch_shape.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "row_sums.cuh"

namespace aisp::ch09 {
namespace {

// Workload: x, residual, h, y (rows, cols) fp32 row-major; weight (cols,) fp32; eps = 1e-6.
// Napkin math: the fewest bytes are x and residual read once, h and y written once: 16 rows cols
// (+ 4 cols of weight, which stays in L2). rows = 16384, cols = 4096: 1 GiB, ~360 us at 3.0 TB/s.
// FLOPs: 5 per element (add, square-accumulate, two multiplies, and the mean), 0.3 FLOP/byte.
//
// Note [rmsnorm row in registers]: as in fused_l2_norm, one 256-thread block per row holds the
// row in registers (4 float4s per thread when cols % 4 == 0, a 4096-float row; else 4 floats per
// thread, scalar loads); longer rows re-read their overflow from L2 (the baseline's RMSNorm
// kernel re-reads h, the fused kernel re-reads x and residual and recomputes h, bit-identical).
// The fused kernel stores h as soon as it is formed, before the reduction, so those stores
// drain while the block waits at its barrier.
//
// Tolerance: the default fp32 one. h = x + residual is one correctly rounded add (2^-24
// relative). The sum of squares is of non-negative terms: relative error <= ~24 x 2^-24 (16
// serial adds per thread, an 8-level tree); y takes half of it through the square root plus a
// few ulps (rsqrtf, the mean, two multiplies): ~1e-6 < rtol 1e-5.

constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / 32;
constexpr int items_per_thread = 4;  // vectors (float4 or float) of the row held per thread
constexpr int vectors_in_flight = 4;
constexpr float rms_eps = 1e-6f;

[[nodiscard]] __device__ float add(float a, float b) { return a + b; }
[[nodiscard]] __device__ float4 add(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}
[[nodiscard]] __device__ float normalized(float h, float inv_rms, float weight) {
  return h * inv_rms * weight;
}
[[nodiscard]] __device__ float4 normalized(float4 h, float inv_rms, float4 weight) {
  return make_float4(h.x * inv_rms * weight.x, h.y * inv_rms * weight.y,
                     h.z * inv_rms * weight.z, h.w * inv_rms * weight.w);
}

template <class Vec>
constexpr int lanes_of = sizeof(Vec) / sizeof(float);

// One row per block (Note [rmsnorm row in registers]). AddResidual: read x and residual, store
// h = x + residual; otherwise read h as `x` (the baseline's second kernel; residual unused).
// Vec: float4 when cols % 4 == 0, else float.
template <class Vec, bool AddResidual>
__global__ void rmsnorm_row_kernel(const float* __restrict__ x, const float* __restrict__ residual,
                                   const float* __restrict__ weight, float* __restrict__ h_out,
                                   float* __restrict__ y, std::int64_t cols) {
  const std::int64_t offset = std::int64_t{blockIdx.x} * cols;
  const auto* row_x = reinterpret_cast<const Vec*>(x + offset);
  auto* row_h = reinterpret_cast<Vec*>(h_out + offset);
  auto* row_y = reinterpret_cast<Vec*>(y + offset);
  const auto* weight_vec = reinterpret_cast<const Vec*>(weight);
  const int num_vectors = static_cast<int>(cols / lanes_of<Vec>);
  constexpr int cached_vectors = items_per_thread * block_threads;
  // h at vector i: formed from x and residual, or read as it is.
  const auto load_h = [&](int i) {
    if constexpr (AddResidual) {
      return add(row_x[i], reinterpret_cast<const Vec*>(residual + offset)[i]);
    } else {
      return row_x[i];
    }
  };

  Vec cached[items_per_thread];
#pragma unroll
  for (int j = 0; j < items_per_thread; ++j) {
    const int i = threadIdx.x + j * block_threads;
    if (i < num_vectors) {
      cached[j] = load_h(i);
    }
  }
  float partial = 0.0f;
#pragma unroll
  for (int j = 0; j < items_per_thread; ++j) {
    const int i = threadIdx.x + j * block_threads;
    if (i < num_vectors) {
      if constexpr (AddResidual) {
        row_h[i] = cached[j];  // drains while the block reduces
      }
      partial += squares(cached[j]);
    }
  }
  for (int i = cached_vectors + threadIdx.x; i < num_vectors; i += block_threads) {
    const Vec h = load_h(i);  // rows longer than the registers hold
    if constexpr (AddResidual) {
      row_h[i] = h;
    }
    partial += squares(h);
  }

  const float inv_rms =
      rsqrtf(block::reduce_sum<warps_per_block>(partial) / static_cast<float>(cols) + rms_eps);

#pragma unroll
  for (int j = 0; j < items_per_thread; ++j) {
    const int i = threadIdx.x + j * block_threads;
    if (i < num_vectors) {
      row_y[i] = normalized(cached[j], inv_rms, weight_vec[i]);
    }
  }
  for (int i = cached_vectors + threadIdx.x; i < num_vectors; i += block_threads) {
    row_y[i] = normalized(load_h(i), inv_rms, weight_vec[i]);  // second read, from L2
  }
}

template <class Vec, bool AddResidual>
void launch_rmsnorm(run_context& ctx, const float* x, const float* residual) {
  rmsnorm_row_kernel<Vec, AddResidual>
      <<<static_cast<unsigned int>(ctx.param("rows")), block_threads, 0, ctx.stream()>>>(
          x, residual, ctx.as<const float>("weight"), ctx.as<float>("h"), ctx.as<float>("y"),
          ctx.param("cols"));
  AISP_CHECK_LAUNCH();
}

[[nodiscard]] bool rows_are_float4_aligned(const run_context& ctx) {
  constexpr const char* names[] = {"x", "residual", "weight", "h", "y"};
  return ctx.param("cols") % 4 == 0 && std::all_of(std::begin(names), std::end(names), [&](auto n) {
           return reinterpret_cast<std::uintptr_t>(ctx.buffer(n)) % alignof(float4) == 0;
         });
}

void check_shape(const run_context& ctx) {
  AISP_EXPECTS(ctx.param("rows") <= 0x7fffffff, "one block per row: rows must fit gridDim.x");
  AISP_EXPECTS(ctx.param("cols") <= 0x7fffffff, "cols must fit a 32-bit index");
}

// ---- Baseline: residual-add kernel, then RMSNorm reading h back ----
// Flat float4 elementwise add, 4 vectors in flight per thread, one resident wave; the n % 4 tail
// one element per thread. It is at the bandwidth roofline on its own: what costs is that h is
// written to HBM and then read back by the next kernel.
__global__ void residual_add_vec4_kernel(const float* __restrict__ x,
                                         const float* __restrict__ residual,
                                         float* __restrict__ h, std::int64_t num_elements) {
  const std::int64_t num_vectors = num_elements / 4;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t thread = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  const auto* residual4 = reinterpret_cast<const float4*>(residual);
  auto* h4 = reinterpret_cast<float4*>(h);
  std::int64_t v = thread;
  for (; v + (vectors_in_flight - 1) * stride < num_vectors; v += vectors_in_flight * stride) {
    float4 a[vectors_in_flight];
    float4 b[vectors_in_flight];
#pragma unroll
    for (int k = 0; k < vectors_in_flight; ++k) {
      a[k] = x4[v + k * stride];
      b[k] = residual4[v + k * stride];
    }
#pragma unroll
    for (int k = 0; k < vectors_in_flight; ++k) {
      h4[v + k * stride] = add(a[k], b[k]);
    }
  }
  for (; v < num_vectors; v += stride) {
    h4[v] = add(x4[v], residual4[v]);
  }
  const std::int64_t tail = num_vectors * 4 + thread;
  if (tail < num_elements) {
    h[tail] = x[tail] + residual[tail];
  }
}

[[nodiscard]] unsigned int residual_add_grid(std::int64_t num_vectors) {
  static const int blocks_per_sm = [] {
    int blocks = 0;
    AISP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, residual_add_vec4_kernel, block_threads, 0));
    return blocks;
  }();
  const std::int64_t wanted = (num_vectors + block_threads - 1) / block_threads;
  return static_cast<unsigned int>(
      std::clamp<std::int64_t>(wanted, 1, std::int64_t{blocks_per_sm} * device_sm_count()));
}

void launch_baseline(run_context& ctx) {
  check_shape(ctx);
  const std::int64_t num_elements = ctx.param("rows") * ctx.param("cols");
  AISP_EXPECTS(reinterpret_cast<std::uintptr_t>(ctx.as<const float>("x")) % alignof(float4) == 0 &&
                   reinterpret_cast<std::uintptr_t>(ctx.as<const float>("residual")) %
                           alignof(float4) == 0 &&
                   reinterpret_cast<std::uintptr_t>(ctx.as<float>("h")) % alignof(float4) == 0,
               "float4 accesses need 16-byte aligned buffers");
  auto* h = ctx.as<float>("h");
  residual_add_vec4_kernel<<<residual_add_grid(num_elements / 4), block_threads, 0,
                             ctx.stream()>>>(ctx.as<const float>("x"),
                                             ctx.as<const float>("residual"), h, num_elements);
  AISP_CHECK_LAUNCH();
  if (rows_are_float4_aligned(ctx)) {
    launch_rmsnorm<float4, false>(ctx, h, nullptr);
  } else {
    launch_rmsnorm<float, false>(ctx, h, nullptr);
  }
}

// ---- Optimized: add, store h, reduce and normalize in one kernel ----
// Changed: the RMSNorm kernel reads x and residual instead of h and forms h in registers; it
// still writes h (the next residual stream) but never reads it back: 4n bytes fewer, and one
// launch instead of two.
void launch_optimized(run_context& ctx) {
  check_shape(ctx);
  const auto* x = ctx.as<const float>("x");
  const auto* residual = ctx.as<const float>("residual");
  if (rows_are_float4_aligned(ctx)) {
    launch_rmsnorm<float4, true>(ctx, x, residual);
  } else {
    launch_rmsnorm<float, true>(ctx, x, residual);
  }
}

[[nodiscard]] std::int64_t matrix_elements(const workload& w) {
  return w.get("rows") * w.get("cols");
}

}  // namespace
}  // namespace aisp::ch09

AISP_REGISTER(
    aisp::pair("ch09:fused_rmsnorm_residual")
        .summary("h = x + residual, y = rmsnorm(h) * weight: add kernel + RMSNorm kernel vs one "
                 "fused kernel")
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
        .input("residual", aisp::dtype::f32, {"rows", "cols"})
        .input("weight", aisp::dtype::f32, [](const aisp::workload& w) { return w.get("cols"); })
        .output("h", aisp::dtype::f32, {"rows", "cols"})
        .output("y", aisp::dtype::f32, {"rows", "cols"})
        .work([](const aisp::workload& w) {
          const double elements = static_cast<double>(aisp::ch09::matrix_elements(w));
          const double cols = static_cast<double>(w.get("cols"));
          return aisp::work_amount{.bytes = 16.0 * elements + 4.0 * cols,
                                   .flops = 5.0 * elements};
        })
        .reference([](aisp::reference_io& io) {
          const auto rows = static_cast<std::size_t>(io.param("rows"));
          const auto cols = static_cast<std::size_t>(io.param("cols"));
          const std::span<const double> x = io.input("x");
          const std::span<const double> residual = io.input("residual");
          const std::span<const double> weight = io.input("weight");
          const std::span<double> h = io.output("h");
          const std::span<double> y = io.output("y");
          for (std::size_t r = 0; r < rows; ++r) {
            double sum_squares = 0.0;
            for (std::size_t c = 0; c < cols; ++c) {
              h[r * cols + c] = x[r * cols + c] + residual[r * cols + c];
              sum_squares += h[r * cols + c] * h[r * cols + c];
            }
            const double rms = std::sqrt(sum_squares / static_cast<double>(cols) +
                                         static_cast<double>(aisp::ch09::rms_eps));
            for (std::size_t c = 0; c < cols; ++c) {
              y[r * cols + c] = h[r * cols + c] / rms * weight[c];
            }
          }
        })
        .tag("fusion")
        .tag("reduction")
        .add_variant("baseline",
                     "float4 residual-add kernel writes h, then a row-resident RMSNorm kernel "
                     "reads it back (5 x 4n bytes)",
                     aisp::ch09::launch_baseline)
        .add_variant("optimized",
                     "one row-resident kernel: add, store h, reduce, normalize (4 x 4n bytes)",
                     aisp::ch09::launch_optimized));
