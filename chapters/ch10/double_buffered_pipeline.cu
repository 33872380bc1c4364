// double_buffered_pipeline: 1D convolution of a long fp32 signal with 112 taps (the
// cross-correlation of deep-learning conv1d), y[i] = sum_k w[k] x[i + k - 56], zero padding.
// Baseline: one 1024-thread block per SM marches over 12288-output tiles; per tile it loads the
// tile's inputs into shared memory, meets at a barrier, computes, meets at a second barrier:
// a single stage, so the SM computes nothing while a tile loads and loads nothing while it
// computes.
// Optimized: the same march and compute with two shared-memory stages: cp.async fetches tile
// i + 1 into the idle stage while the block computes tile i.
// Why faster: 224 FLOPs per 8 bytes moved (28 FLOP/byte) puts the kernel just above the ridge,
// where load time (~4 us per tile per SM) and compute time (~7 us) are the same order; one block
// per SM means nothing else covers a load. Single stage: ~11 us per tile, the sum; two stages:
// ~7 us, the max. ~1.5x at 50.3M outputs. H100: see README.
// Run: aisp bench run --targets ch10:double_buffered_pipeline
#include <algorithm>
#include <cstdint>
#include <utility>

#include "aisp/async_copy.cuh"
#include "aisp/check.hpp"
#include "conv1d_march.cuh"
#include "aisp/launch_shape.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::ch10 {
namespace {

// Workload: x (n,) fp32, weights (112,) fp32, y (n,) fp32; x = 0 outside [0, n).
// Napkin math: bytes = 4n read + 4n written (+ 448 B of taps), FLOPs = 2 * 112 * n. At
// n = 50,282,496 (132 SMs x 31 tiles x 12288): 402 MB, ~134 us at 3.0 TB/s; 11.3 GFLOP, ~172 us
// at the 65.5 TFLOP/s FMA peak. 28 FLOP/byte: compute-bound, but only just (ridge ~22).
//
// Note [tile geometry]: a block of 1024 threads computes 12288 outputs per tile, 12 adjacent
// outputs per thread; thread t's outputs o0 + 12t .. o0 + 12t + 11 need the inputs
// o0 - 56 + 12t .. o0 + 12t + 66, i.e. 31 float4s of the tile's stage starting at float4 3t. A
// stage holds the tile's 12288 + 112 inputs as 3100 float4s (49.6 KB), starting at o0 - 56;
// both 12288 and 56 are multiples of 4, so every stage float4 is one aligned float4 of x.
// Registers: 12 accumulators, a 16-float window and 4 taps; __launch_bounds__(1024, 1) caps a
// thread at 64 registers and the kernels use 48-56 (ptxas), so a block takes 48-56K of the SM's
// 64K registers: one block per SM, in both variants. That is the regime where double buffering
// pays: with several blocks per SM, the warp scheduler already overlaps one block's load with
// another's compute.
//
// Note [conflict-free window]: per 4 taps a thread loads one new float4 of its window from
// shared memory: at step s thread t reads float4 3t + s + 3. Eight threads of a quarter warp
// hit (3t + s + 3) mod 8 = 8 distinct 16-byte bank groups, so the load is one wavefront per
// quarter warp. The 4 taps are one broadcast float4.
//
constexpr int tile_outputs = block_threads * outputs_per_thread;  // 12288
constexpr int stage_vectors = (tile_outputs + taps) / 4;         // 3100 float4s
constexpr int stage_bytes = stage_vectors * 16;                  // 49,600 bytes
static_assert(taps % 4 == 0 && half_taps % 4 == 0, "stage float4s must be aligned in x");
static_assert(3 * (block_threads - 1) + (tap_steps - 1) + (window_vectors - 1) < stage_vectors,
              "the last thread's window stays inside the stage");

// One tile from its stage: thread t computes outputs o0 + 12t .. o0 + 12t + 11 (see Note [tile
// geometry]); every output adds its 112 products in tap order.
__device__ void convolve_tile(const float4* stage, const float4* taps4, float* __restrict__ y,
                              std::int64_t o0, std::int64_t n) {
  const float4* window = stage + 3 * threadIdx.x;
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
  const std::int64_t first = o0 + std::int64_t{outputs_per_thread} * threadIdx.x;
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

// ---- Baseline: single stage, load -> barrier -> compute -> barrier ----
__device__ void load_stage_sync(float4* stage, const float* __restrict__ x, std::int64_t o0,
                                std::int64_t n) {
  const std::int64_t g0 = o0 - half_taps;
  constexpr int per_thread = (stage_vectors + block_threads - 1) / block_threads;  // 4
#pragma unroll
  for (int i = 0; i < per_thread; ++i) {
    const int v = static_cast<int>(threadIdx.x) + i * block_threads;
    if (v < stage_vectors) {
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
  extern __shared__ float4 stage[];  // one stage: stage_vectors float4s
  __shared__ float4 taps4[tap_steps];
  load_taps(taps4, weights);
  for (int tile = static_cast<int>(blockIdx.x); tile < num_tiles;
       tile += static_cast<int>(gridDim.x)) {
    const std::int64_t o0 = std::int64_t{tile} * tile_outputs;
    load_stage_sync(stage, x, o0, n);
    __syncthreads();  // the stage (and, the first time, the taps) visible to all
    convolve_tile(stage, taps4, y, o0, n);
    __syncthreads();  // nobody reads the stage any more: the next tile may overwrite it
  }
}

// ---- Optimized: two stages, cp.async one tile ahead ----
// Changed: the stage of tile i + 1 is filled with 16-byte cp.async copies (global -> shared, no
// register, no wait in the issuing thread) before the block computes tile i, one commit group
// per tile. A step waits for its own copies of tile i (cp.async.wait_group 1 leaves tile i + 1
// in flight), meets at one barrier so everyone's copies are visible, computes, and meets at a
// second barrier before the next step refills the stage it just read.
__device__ void load_stage_async(float4* stage, const float* __restrict__ x, std::int64_t o0,
                                 std::int64_t n) {
  const std::int64_t g0 = o0 - half_taps;
  for (int v = static_cast<int>(threadIdx.x); v < stage_vectors; v += block_threads) {
    copy_input_vector_async(stage + v, x, g0 + 4 * v, n);  // Note [partial vector]
  }
}

__global__ void __launch_bounds__(block_threads, 1)
    conv1d_double_buffered_kernel(const float* __restrict__ x, const float* __restrict__ weights,
                                  float* __restrict__ y, std::int64_t n, int num_tiles) {
  extern __shared__ float4 stages[];  // two stages: 2 * stage_vectors float4s
  __shared__ float4 taps4[tap_steps];
  load_taps(taps4, weights);
  const auto first = static_cast<int>(blockIdx.x);
  const auto stride = static_cast<int>(gridDim.x);
  if (first < num_tiles) {
    load_stage_async(stages, x, std::int64_t{first} * tile_outputs, n);
  }
  ptx::cp_async_commit();
  int step = 0;
  for (int tile = first; tile < num_tiles; tile += stride, ++step) {
    const int next = tile + stride;
    if (next < num_tiles) {  // stage (step + 1) % 2 was last read in step - 1: free
      load_stage_async(stages + ((step + 1) % 2) * stage_vectors, x,
                       std::int64_t{next} * tile_outputs, n);
    }
    ptx::cp_async_commit();     // one group per step, empty past the end: the count stays fixed
    ptx::cp_async_wait<1>();    // this thread's copies of `tile` landed; `next` stays in flight
    __syncthreads();       // everyone's copies (and the taps) visible
    convolve_tile(stages + (step % 2) * stage_vectors, taps4, y,
                  std::int64_t{tile} * tile_outputs, n);
    __syncthreads();       // nobody reads this stage any more: step + 1 may refill it
  }
  ptx::cp_async_wait<0>();  // the last group is empty, but no copy may outlive the block
}

// ---- Launchers (conv1d_march.cuh) ----
void setup_baseline(run_context& ctx) { setup_march(ctx, conv1d_single_stage_kernel, stage_bytes); }
void launch_baseline(run_context& ctx) {
  launch_march(ctx, conv1d_single_stage_kernel, stage_bytes, tile_outputs);
}
void setup_optimized(run_context& ctx) {
  setup_march(ctx, conv1d_double_buffered_kernel, 2 * stage_bytes);
}
void launch_optimized(run_context& ctx) {
  launch_march(ctx, conv1d_double_buffered_kernel, 2 * stage_bytes, tile_outputs);
}

}  // namespace
}  // namespace aisp::ch10

AISP_REGISTER(
    aisp::ch10::conv1d_pair("ch10:double_buffered_pipeline",
                            "112-tap conv1d, one block per SM: single-stage tiles vs cp.async double "
                            "buffering",
                            {12289, 36867})  // one past one tile of 12288, and three
        .tag("software-pipelining")
        .tag("double-buffering")
        .tag("cp-async")
        .add_variant(aisp::kit::with_state(
            "baseline",
            "1024-thread blocks march over 12288-output tiles: load tile, barrier, compute, "
            "barrier",
            aisp::ch10::launch_baseline, aisp::ch10::setup_baseline, aisp::ch10::teardown_march))
        .add_variant(aisp::kit::with_state(
            "optimized",
            "same march and compute, two stages: cp.async fetches tile i + 1 during tile i",
            aisp::ch10::launch_optimized, aisp::ch10::setup_optimized, aisp::ch10::teardown_march)));
