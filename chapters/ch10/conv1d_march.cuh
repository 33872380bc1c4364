// The workload that ch10:double_buffered_pipeline and ch10:warp_specialization share, so their
// optimized variants compare two ways of overlapping the same loads with the same compute:
// y[i] = sum_k w[k] x[i + k - 56], 112 taps, zero padding (deep-learning conv1d), computed by
// one 1024-thread block per SM marching over tiles. Both pairs share the single-stage baseline
// and the compute; each pair file keeps its optimized kernel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>

#include "aisp/async_copy.cuh"
#include "aisp/check.hpp"
#include "aisp/launch_shape.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::ch10 {
namespace {

// Note [conv tolerance]: every variant adds the 112 products of an output with fmaf in tap order,
// so they agree bitwise. Against fp64: the j-th fmaf rounds a partial sum s_j by at most
// u |s_j| (u = 2^-24). For uniform [-1, 1) inputs a product has variance 1/9, s_j has standard
// deviation sqrt(j / 9), and the rounding errors, independent and uniform, add up to a
// standard deviation of u sqrt(sum_j j / 27) = 15.3 u = 9.1e-7. atol = 2e-5 is 22 sigma, and
// still 1/10000 of one average product, so a dropped tap fails. Small-integer inputs are exact
// (|sum| <= 112 * 64 < 2^24), so the pairs run the exact-integer challenge.

constexpr int taps = 112;
constexpr int half_taps = taps / 2;
constexpr int tap_steps = taps / 4;  // one float4 of taps per step
constexpr int block_threads = 1024;
constexpr int outputs_per_thread = 12;
constexpr int window_vectors = 4;  // 16 floats: 12 outputs + 3 more taps of reach

// x[g] for any g, zero outside [0, n): the stage's edge handling.
__device__ float input_at(const float* __restrict__ x, std::int64_t g, std::int64_t n) {
  return g >= 0 && g < n ? x[g] : 0.0f;
}

// Note [partial vector]: the float4 x[g .. g + 3] into shared memory with cp.async, zeros
// outside [0, n) (g is a multiple of 4, so a chunk never straddles 0; it may straddle n). A
// chunk that straddles n goes as four 4-byte copies: a 16-byte cp.async with a shorter source
// size reads only those bytes, but compute-sanitizer memcheck reports all 16 as an
// out-of-bounds read (it did on the H100, one report per straddling chunk).
__device__ void copy_input_vector_async(float4* dst, const float* __restrict__ x, std::int64_t g, std::int64_t n) {
  const std::int64_t inside = g < 0 ? 0 : std::clamp<std::int64_t>(n - g, 0, 4);
  if (inside == 4 || inside == 0) {
    ptx::cp_async_zfill16(dst, inside > 0 ? x + g : x, static_cast<int>(4 * inside));
    return;
  }
  float* lanes = reinterpret_cast<float*>(dst);
  for (int e = 0; e < 4; ++e) {
    ptx::cp_async_zfill4(lanes + e, e < inside ? x + g + e : x, e < inside ? 4 : 0);
  }
}

// The taps as 28 float4s in shared memory, loaded once per block.
__device__ void load_taps(float4* taps4, const float* __restrict__ weights) {
  if (threadIdx.x < tap_steps) {
    const float* w = weights + 4 * threadIdx.x;
    taps4[threadIdx.x] = make_float4(w[0], w[1], w[2], w[3]);
  }
}

// The tile of a block whose ComputeThreads threads each compute 12 adjacent outputs. Its stage
// holds the tile's outputs + 112 inputs as float4s starting at o0 - 56 (aligned: o0 and 56 are
// multiples of 4). Compute thread c reads 31 float4s from float4 3c: conflict-free, since 3c
// mod 8 differs across a quarter warp.
template <int ComputeThreads>
struct conv_tile {
  static constexpr int outputs = ComputeThreads * outputs_per_thread;
  static constexpr int vectors = (outputs + taps) / 4;
  static constexpr int bytes = vectors * 16;
  static_assert(taps % 4 == 0 && half_taps % 4 == 0, "stage float4s must be aligned in x");
  static_assert(3 * (ComputeThreads - 1) + (tap_steps - 1) + (window_vectors - 1) < vectors,
                "the last thread's window stays inside the stage");
};
using full_tile = conv_tile<block_threads>;  // 12288 outputs, 3100 float4s, 49.6 KB

// Compute thread c of a tile: outputs o0 + 12c .. o0 + 12c + 11, each adding its 112 products in
// tap order (so every variant of both pairs agrees bitwise).
__device__ void convolve_outputs(const float4* stage, const float4* taps4, float* __restrict__ y,
                                 std::int64_t o0, std::int64_t n, unsigned int c) {
  const float4* window = stage + 3 * c;
  float acc[outputs_per_thread] = {};
  float4 v0 = window[0];
  float4 v1 = window[1];
  float4 v2 = window[2];
  float4 v3 = window[3];
#pragma unroll
  for (int s = 0; s < tap_steps; ++s) {
    const float4 w4 = taps4[s];
    const float w[4] = {w4.x, w4.y, w4.z, w4.w};
    const float xs[16] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w,
                          v2.x, v2.y, v2.z, v2.w, v3.x, v3.y, v3.z, v3.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int r = 0; r < outputs_per_thread; ++r) {
        acc[r] = fmaf(w[j], xs[r + j], acc[r]);  // tap 4s + j of output r
      }
    }
    if (s + 1 < tap_steps) {  // slide the window by one float4 (renamed, not moved, when unrolled)
      v0 = v1;
      v1 = v2;
      v2 = v3;
      v3 = window[s + window_vectors];
    }
  }
  const std::int64_t first = o0 + std::int64_t{outputs_per_thread} * c;
  if (first + outputs_per_thread <= n) {
    auto* out = reinterpret_cast<float4*>(y + first);  // first % 4 == 0, y 16-byte aligned
#pragma unroll
    for (int q = 0; q < outputs_per_thread / 4; ++q) {
      out[q] = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
    }
  } else {
#pragma unroll
    for (int r = 0; r < outputs_per_thread; ++r) {
      if (first + r < n) {
        y[first + r] = acc[r];
      }
    }
  }
}

// ---- The baseline of both pairs: one stage, load -> barrier -> compute -> barrier ----
__device__ void load_stage_sync(float4* stage, const float* __restrict__ x, std::int64_t o0,
                                std::int64_t n) {
  const std::int64_t g0 = o0 - half_taps;
  constexpr int per_thread = (full_tile::vectors + block_threads - 1) / block_threads;  // 4
#pragma unroll
  for (int i = 0; i < per_thread; ++i) {
    const int v = static_cast<int>(threadIdx.x) + i * block_threads;
    if (v < full_tile::vectors) {
      const std::int64_t g = g0 + 4 * v;
      stage[v] = g >= 0 && g + 4 <= n
                     ? *reinterpret_cast<const float4*>(x + g)
                     : make_float4(input_at(x, g, n), input_at(x, g + 1, n),
                                   input_at(x, g + 2, n), input_at(x, g + 3, n));
    }
  }
}

__global__ void __launch_bounds__(block_threads, 1)
    conv1d_single_stage_kernel(const float* __restrict__ x, const float* __restrict__ weights,
                               float* __restrict__ y, std::int64_t n, int num_tiles) {
  extern __shared__ float4 stage[];  // one stage: full_tile::vectors float4s
  __shared__ float4 taps4[tap_steps];
  load_taps(taps4, weights);
  for (int tile = static_cast<int>(blockIdx.x); tile < num_tiles;
       tile += static_cast<int>(gridDim.x)) {
    const std::int64_t o0 = std::int64_t{tile} * full_tile::outputs;
    load_stage_sync(stage, x, o0, n);
    __syncthreads();  // the stage (and, the first time, the taps) visible to all
    convolve_outputs(stage, taps4, y, o0, n, threadIdx.x);
    __syncthreads();  // nobody reads the stage any more: the next tile may overwrite it
  }
}

// ---- Launchers ----
// setup(): the dynamic shared memory opt-in and one full wave of blocks, so run() launches
// without device queries.
struct march_shape {
  int blocks_per_wave = 0;
};

template <class Kernel>
void setup_march(run_context& ctx, Kernel kernel, int smem_bytes) {
  AISP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  int blocks_per_sm = 0;
  AISP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, block_threads, smem_bytes));
  AISP_EXPECTS(blocks_per_sm >= 1, "a 1024-thread conv block must fit on an SM");
  make_state<march_shape>(ctx).blocks_per_wave = blocks_per_sm * device_sm_count();
}

// One wave of blocks (at most one per tile) marching over tiles of `tile_outputs` outputs.
template <class Kernel>
void launch_march(run_context& ctx, Kernel kernel, int smem_bytes, int tile_outputs) {
  const std::int64_t n = ctx.param("n");
  const auto* x = ctx.as<const float>("x");
  auto* y = ctx.as<float>("y");
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  AISP_EXPECTS(aligned(x) && aligned(y), "float4 and cp.async need 16-byte aligned x and y");
  const std::int64_t num_tiles = (n + tile_outputs - 1) / tile_outputs;
  AISP_EXPECTS(num_tiles <= (std::int64_t{1} << 30), "tile index must fit an int");
  const auto grid =
      static_cast<unsigned int>(std::min<std::int64_t>(num_tiles, state_of<march_shape>(ctx).blocks_per_wave));
  kernel<<<grid, block_threads, smem_bytes, ctx.stream()>>>(x, ctx.as<const float>("weights"), y, n,
                                                            static_cast<int>(num_tiles));
  AISP_CHECK_LAUNCH();
}

void teardown_march(run_context& ctx) { release_state<march_shape>(ctx); }

// The shared baseline's variant functions.
void setup_single_stage(run_context& ctx) { setup_march(ctx, conv1d_single_stage_kernel, full_tile::bytes); }
void launch_single_stage(run_context& ctx) {
  launch_march(ctx, conv1d_single_stage_kernel, full_tile::bytes, full_tile::outputs);
}

// The shared declaration; the caller adds its tags and variants. `tile_edges`: validation sizes
// one past one and a few tiles of its own tile shape.
[[nodiscard]] pair conv1d_pair(std::string target, std::string summary, std::initializer_list<std::int64_t> tile_edges) {
  pair declared(std::move(target));
  declared.summary(std::move(summary)).benchmark_size({{"n", 50282496}});
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{65}, std::int64_t{1003}}) {
    declared.validation_size({{"n", n}});
  }
  for (const std::int64_t n : tile_edges) declared.validation_size({{"n", n}});
  return std::move(declared)
      .validation_size({{"n", 100003}})
      // Held out, and large enough that every block of the one-per-SM grid walks 4+ tiles: the
      // only size below the benchmark where the pipelines refill (ring wrap, parity flips).
      .held_out_size({{"n", 6500003}})
      .input("x", dtype::f32, {"n"})
      .input("weights", dtype::f32, [](const workload&) { return std::int64_t{taps}; })
      .output("y", dtype::f32, {"n"})
      .exact_math()  // small integers: |sum| <= 112 * 64, exact in fp32 (Note [conv tolerance])
      .work([](const workload& w) {
        const double n = static_cast<double>(w.get("n"));
        return work_amount{.bytes = 8.0 * n + 4.0 * taps, .flops = 2.0 * taps * n};
      })
      .reference([](reference_io& io) {
        const std::int64_t n = io.param("n");
        const std::span<const double> x = io.input("x");
        const std::span<const double> weights = io.input("weights");
        const std::span<double> y = io.output("y");
        for (std::int64_t i = 0; i < n; ++i) {
          double acc = 0.0;
          for (std::int64_t k = 0; k < taps; ++k) {
            const std::int64_t g = i + k - half_taps;
            if (g >= 0 && g < n) acc += weights[static_cast<std::size_t>(k)] * x[static_cast<std::size_t>(g)];
          }
          y[static_cast<std::size_t>(i)] = acc;
        }
      })
      .tolerance_override(tolerance{.rtol = 1e-5,
                                    .atol = 2e-5,
                                    .max_rel_l2 = 1e-5,
                                    .reason = "112 fp32 fmaf per output in tap order against fp64: rounding errors of "
                                              "partial sums of std sqrt(j/9) add to 9.1e-7 std; atol 2e-5 is 22 sigma "
                                              "(see Note [conv tolerance])"})
      .tag("convolution");
}

}  // namespace
}  // namespace aisp::ch10
