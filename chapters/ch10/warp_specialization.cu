// warp_specialization: the 112-tap fp32 conv1d of ch10:double_buffered_pipeline,
// y[i] = sum_k w[k] x[i + k - 56], zero padding, same size.
// Baseline: uniform warps (conv1d_march.cuh's single-stage kernel, shared with
// ch10:double_buffered_pipeline): every one of a block's 32 warps loads its share of a tile into
// shared memory, the block meets at a barrier, every warp computes, the block meets again
// (single stage, one 1024-thread block per SM marching over tiles).
// Optimized: warp specialization: warp 0 is a producer that only copies tiles (one bulk copy per
// interior tile, cp.async at the edges) into a 3-stage shared-memory ring; warps 1-31 are
// consumers that only compute. Each stage has a
// "full" mbarrier (the producer's copies landed) and an "empty" one (all consumer warps are
// done with it); there is no block-wide barrier in the loop.
// Why faster: 28 FLOP/byte, so load time (~4 us per tile per SM) and compute time (~7 us) are
// the same order, and one block per SM leaves nothing else to hide a load behind. The uniform
// block alternates (~11 us per tile: the sum); the specialized one overlaps (~7 us: the max),
// with the producer up to 2 tiles ahead. ~1.45x at 50.3M outputs. H100: see README.
// Run: aisp bench run --targets ch10:warp_specialization
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
// Napkin math: bytes = 8n (+ 448 B of taps), FLOPs = 224 n. At n = 50,282,496: 402 MB,
// ~134 us at 3.0 TB/s; 11.3 GFLOP, ~172 us at the 65.5 TFLOP/s FMA peak (28 FLOP/byte).
// n is 132 x 31 baseline tiles of 12288 and 132 x 32 specialized tiles of 11904: both variants
// give every SM the same number of tiles.
//
// Note [tile geometry]: a compute thread owns 12 adjacent outputs of a tile and reads 31
// float4s of the tile's stage starting at float4 3c (c = its index among the compute threads):
// conflict-free, since 3c mod 8 differs across a quarter warp. A stage holds the tile's
// outputs + 112 inputs as float4s starting at o0 - 56 (aligned: o0 and 56 are multiples of 4).
// The baseline has 1024 compute threads (12288 outputs per tile, 49.6 KB stage); the
// specialized kernel has 992 (11904 outputs, 48.1 KB stage, 3 stages = 144 KB). Both cap
// threads at 64 registers (__launch_bounds__(1024, 1)): one block per SM.
//
// Note [ring protocol]: stage s of local tile i is s = i % 3, used for the u-th time, u = i / 3.
// full[s] counts 32 arrivals: each producer lane issues its copies and then
// cp.async.mbarrier.arrive.noinc, which arrives when that lane's copies have landed (noinc: the
// arrival is one of the 32 expected ones). empty[s] counts 31 arrivals: lane 0 of each consumer
// warp, after __syncwarp, when the warp has finished reading the stage. Consumers wait on
// full[s] with parity u & 1; the producer, before refilling s for use u >= 1, waits on empty[s]
// with parity (u - 1) & 1. Neither barrier can run two phases ahead of its waiter (each needs
// the other side's next step), so one parity bit is unambiguous. cp.async (non-bulk) writes
// through the generic proxy, so no proxy fence is needed between the consumers' reads and the
// refill. The producer waits for its last copies (cp.async.wait_all) before it exits.
//
// Note [bulk producer]: a tile whose inputs lie wholly inside x (every tile but the first and
// last) is one contiguous, 16-byte aligned range (o0 - 56 and the row of 3004 float4s), so lane 0
// arms full[s] with the stage's bytes and issues one cp.async.bulk; lanes 1-31 arrive plainly:
// still 32 arrivals, plus the transaction bytes. Edge tiles need zero padding, which a bulk
// copy cannot do: there every lane issues cp.async with zero fill and arrives with noinc. A first
// version used cp.async for every tile and was no faster than the baseline on the H100 (324 vs
// 322 us in a verify run): one warp issued all ~3000 16-byte copies of a tile, from one SM
// sub-partition, and (our reading, not profiled) the producer rather than the math set the pace.
//
// Note [conv tolerance]: in conv1d_march.cuh (shared with ch10:double_buffered_pipeline).

using specialized_tile = conv_tile<block_threads - 32>;  // 11904 outputs, 3004 float4s
constexpr int ring_stages = 3;


// ---- Optimized: one producer warp, 31 consumer warps, full/empty mbarriers ----
// Changed: roles. Warp 0 copies tiles into a 3-stage ring with cp.async and never computes;
// warps 1-31 wait on a stage's full barrier, compute, and release it on its empty barrier. The
// block never meets at a barrier inside the loop (see Note [ring protocol]).
__global__ void __launch_bounds__(block_threads, 1)
    conv1d_warp_specialized_kernel(const float* __restrict__ x,
                                   const float* __restrict__ weights, float* __restrict__ y,
                                   std::int64_t n, int num_tiles) {
  extern __shared__ float4 ring[];  // ring_stages * specialized_tile::vectors float4s
  __shared__ float4 taps4[tap_steps];
  __shared__ std::uint64_t full[ring_stages];
  __shared__ std::uint64_t empty[ring_stages];
  constexpr int consumer_warps = block_threads / 32 - 1;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < ring_stages; ++s) {
      ptx::mbarrier_init(&full[s], 32);               // one arrival per producer lane
      ptx::mbarrier_init(&empty[s], consumer_warps);  // one arrival per consumer warp
    }
    ptx::fence_mbarrier_init();
  }
  load_taps(taps4, weights);
  __syncthreads();  // barriers initialized, taps visible: the only block-wide barrier

  const auto first = static_cast<int>(blockIdx.x);
  const auto stride = static_cast<int>(gridDim.x);
  if (warp == 0) {  // producer
    int i = 0;
    for (int tile = first; tile < num_tiles; tile += stride, ++i) {
      const int s = i % ring_stages;
      const int use = i / ring_stages;
      if (use > 0) {
        ptx::mbarrier_wait_parity(&empty[s], static_cast<unsigned int>(use - 1) & 1u);
      }
      float4* stage = ring + s * specialized_tile::vectors;
      const std::int64_t g0 = std::int64_t{tile} * specialized_tile::outputs - half_taps;
      if (g0 >= 0 && g0 + 4 * specialized_tile::vectors <= n) {
        // Interior tile: one bulk copy (TMA engine) of the whole stage, so the one producer warp
        // issues one instruction instead of 94 per lane (Note [bulk producer]).
        if (lane == 0) {
          ptx::mbarrier_arrive_expect_tx(&full[s], specialized_tile::bytes);
          ptx::bulk_copy_to_shared(stage, x + g0, specialized_tile::bytes, &full[s]);
        } else {
          ptx::mbarrier_arrive(&full[s]);
        }
        continue;
      }
      for (int v = lane; v < specialized_tile::vectors; v += 32) {  // edge tile: zero padding
        copy_input_vector_async(stage + v, x, g0 + 4 * v, n);  // Note [partial vector]
      }
      ptx::cp_async_arrive_noinc(&full[s]);
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");  // no copy outlives its issuer
    return;
  }
  const unsigned int c = threadIdx.x - 32;  // compute thread index, 0 .. 991
  int i = 0;
  for (int tile = first; tile < num_tiles; tile += stride, ++i) {
    const int s = i % ring_stages;
    ptx::mbarrier_wait_parity(&full[s], static_cast<unsigned int>(i / ring_stages) & 1u);
    convolve_outputs(ring + s * specialized_tile::vectors, taps4, y,
                     std::int64_t{tile} * specialized_tile::outputs, n, c);
    __syncwarp();  // the whole warp has read the stage
    if (lane == 0) {
      ptx::mbarrier_arrive(&empty[s]);
    }
  }
}

// ---- Launchers (conv1d_march.cuh) ----
void setup_optimized(run_context& ctx) {
  setup_march(ctx, conv1d_warp_specialized_kernel, ring_stages * specialized_tile::bytes);
}
void launch_optimized(run_context& ctx) {
  launch_march(ctx, conv1d_warp_specialized_kernel, ring_stages * specialized_tile::bytes,
               specialized_tile::outputs);
}

}  // namespace
}  // namespace aisp::ch10

AISP_REGISTER(
    aisp::ch10::conv1d_pair("ch10:warp_specialization",
                            "112-tap conv1d: uniform load-then-compute warps vs a producer warp "
                            "feeding 31 consumer warps through a 3-stage mbarrier ring",
                            {11905, 47619})  // one past one specialized tile of 11904, and four
        .tag("warp-specialization")
        .tag("mbarrier")
        .tag("producer-consumer")
        .tag("cp-async")
        .add_variant(aisp::kit::with_state(
            "baseline",
            "uniform warps: every warp loads its share of a tile, barrier, every warp computes, "
            "barrier",
            aisp::ch10::launch_single_stage, aisp::ch10::setup_single_stage, aisp::ch10::teardown_march))
        .add_variant(aisp::kit::with_state(
            "optimized",
            "warp 0 produces tiles into a 3-stage ring (cp.async + full/empty mbarriers), warps "
            "1-31 consume",
            aisp::ch10::launch_optimized, aisp::ch10::setup_optimized, aisp::ch10::teardown_march)));
