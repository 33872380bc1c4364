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
constexpr int tile_outputs = full_tile::outputs;    // 12288
constexpr int stage_vectors = full_tile::vectors;  // 3100 float4s
constexpr int stage_bytes = full_tile::bytes;      // 49,600 bytes

// Note [conflict-free window]: per 4 taps a thread loads one new float4 of its window from
// shared memory: at step s thread t reads float4 3t + s + 3. Eight threads of a quarter warp
// hit (3t + s + 3) mod 8 = 8 distinct 16-byte bank groups, so the load is one wavefront per
// quarter warp. The 4 taps are one broadcast float4.
//

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
    convolve_outputs(stages + (step % 2) * stage_vectors, taps4, y,
                     std::int64_t{tile} * tile_outputs, n, threadIdx.x);
    __syncthreads();       // nobody reads this stage any more: step + 1 may refill it
  }
  ptx::cp_async_wait<0>();  // the last group is empty, but no copy may outlive the block
}

// ---- Launchers (conv1d_march.cuh) ----
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
            aisp::ch10::launch_single_stage, aisp::ch10::setup_single_stage, aisp::ch10::teardown_march))
        .add_variant(aisp::kit::with_state(
            "optimized",
            "same march and compute, two stages: cp.async fetches tile i + 1 during tile i",
            aisp::ch10::launch_optimized, aisp::ch10::setup_optimized, aisp::ch10::teardown_march)));
