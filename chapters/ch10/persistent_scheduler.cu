// persistent_scheduler: causal attention with one-dimensional queries and keys (head dim 1),
// y_i = sum_{j <= i} exp(q_i k_j) v_j / sum_{j <= i} exp(q_i k_j), over n fp32 positions, in
// tiles of 64 queries. Tile t attends to keys 0 .. 64t + 63, so its cost grows linearly with t:
// the last tile costs 528 times the first.
// Baseline: one 1024-thread block per tile, blockIdx.x = tile. The hardware hands out blocks in
// index order, so the heaviest tiles start last and the GPU ends on a tail where a few SMs
// finish the biggest tiles while the others idle.
// Optimized: a persistent kernel, one wave of blocks (SMs x blocks per SM), each pulling tiles
// from an atomic counter, heaviest first (tile = T - 1 - ticket): longest-processing-time
// scheduling, so the work left at the end is the smallest tiles, spread over all SMs.
// Why faster: with 528 tiles of cost 1..528 on 132 SMs (4 per SM), in-order list scheduling ends
// ~25% above the perfectly balanced time; heaviest-first ends within ~1% of it. ~1.2x; the
// kernel is bound by the MUFU exp2 rate (16 per clock per SM): ~205 us vs ~250 us at n = 33792.
// H100: see README.
// Run: aisp bench run --targets ch10:persistent_scheduler
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/launch_shape.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::ch10 {
namespace {

// Workload: q, k, v (n,) fp32, y (n,) fp32. Position i attends to positions 0..i (causal).
// Napkin math: pairs = n (n + 1) / 2 = 571M at n = 33792; per pair one exp2 (MUFU: 16 per clock
// per SM), one multiply, one FMA, one add. At 16 exp2/clk x 132 SMs x ~1.75 GHz = 3.7 T/s the
// floor is ~154 us. FLOPs declared: 5 per pair (mul, exp, fma = 2, add); bytes: 16n (q, k, v
// read once, y written once): 0.5 MB, so the pair is compute-bound (and L2 holds k and v).
//
// Note [tile work]: a tile is 64 queries; lane l of every warp owns queries q0 + l and
// q0 + 32 + l, and warp w takes the 4-key chunks c = w, w + 32, ... of keys 0 .. kmax - 1
// (kmax = min(q0 + 64, n)): 32 warps split the key range, each lane keeping (num, den) for its
// two queries. Chunks wholly below q0 need no mask and load k, v as float4 (one broadcast load
// per warp); the 16 chunks of the diagonal block mask keys j > i and load scalars. At the end
// each warp writes its 64 partials to shared memory and 64 threads add the 32 partials of their
// query in warp order. Every tile is computed the same way whichever block runs it, so the two
// variants agree bitwise.
//
// Note [scheduling]: the baseline's blocks are dispatched in blockIdx order as SMs free up:
// the first 132 (cheap) tiles start together, and the 132 heaviest start last, staggered, so
// the last SM finishes about half a heavy tile after the average. A list-scheduling simulation
// of 528 tiles of cost t + 1 on 132 SMs gives a makespan 1.25x the balanced one for one block
// per SM (1.12-1.2x if two blocks share an SM), and 1.00x for heaviest-first. The counter is a
// scratch int zeroed by a 4-byte memset at the start of each run. Blocks with no tile left
// claim a ticket past the end and exit.
//
// Note [attention tolerance]: e_j = exp2f(q_i log2(e) k_j) is within ~3 ulp of exp(q_i k_j)
// (ex2.approx is within 2 ulp, the scaled argument adds < 1 ulp); with positive weights that
// moves y (a weighted mean of v) by at most 2 * 3 u * max|v - y| ~ 4e-7. The fp32 sums add
// ~sqrt(m) u relative rounding over the m ~ n / 32 terms a lane accumulates. An fp32 emulation
// of this summation order with random 3-ulp exp errors (also with jittered inputs of magnitude
// 1.75) measured max |error| <= 9e-8 and rel-L2 <= 2.1e-7 at n = 7 .. 9001. atol 1e-6 leaves
// 10x margin and still fails a dropped key (|e v| / den ~ 1 / i >= 1e-4 at the validated sizes);
// rel-L2 1e-5 leaves 50x.

constexpr int block_threads = 1024;
constexpr int warps_per_block = block_threads / 32;
constexpr int tile_queries = 64;
constexpr float log2e = 1.4426950408889634f;

// One tile (Note [tile work]); `part` is shared: warps_per_block x tile_queries partials.
__device__ void attend_tile(int tile, const float* __restrict__ q, const float* __restrict__ k,
                            const float* __restrict__ v, float* __restrict__ y, int n,
                            float2* part) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int q0 = tile * tile_queries;
  const int i0 = q0 + lane;
  const int i1 = q0 + 32 + lane;
  const float qs0 = i0 < n ? q[i0] * log2e : 0.0f;
  const float qs1 = i1 < n ? q[i1] * log2e : 0.0f;
  const int kmax = min(q0 + tile_queries, n);
  float num0 = 0.0f;
  float den0 = 0.0f;
  float num1 = 0.0f;
  float den1 = 0.0f;
  const int unmasked_chunks = q0 / 4;  // keys < q0 <= every query of the tile
  int c = warp;
  for (; c < unmasked_chunks; c += warps_per_block) {
    const float4 k4 = *reinterpret_cast<const float4*>(k + 4 * c);  // same address: broadcast
    const float4 v4 = *reinterpret_cast<const float4*>(v + 4 * c);
    const float kj[4] = {k4.x, k4.y, k4.z, k4.w};
    const float vj[4] = {v4.x, v4.y, v4.z, v4.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float e0 = exp2f(qs0 * kj[j]);
      const float e1 = exp2f(qs1 * kj[j]);
      num0 = fmaf(e0, vj[j], num0);
      den0 += e0;
      num1 = fmaf(e1, vj[j], num1);
      den1 += e1;
    }
  }
  const int chunks = (kmax + 3) / 4;
  for (; c < chunks; c += warps_per_block) {  // the diagonal block: mask j > i
#pragma unroll
    for (int jj = 0; jj < 4; ++jj) {
      const int j = 4 * c + jj;
      const float kj = j < n ? k[j] : 0.0f;
      const float vj = j < n ? v[j] : 0.0f;
      const float e0 = j <= i0 ? exp2f(qs0 * kj) : 0.0f;
      const float e1 = j <= i1 ? exp2f(qs1 * kj) : 0.0f;
      num0 = fmaf(e0, vj, num0);
      den0 += e0;
      num1 = fmaf(e1, vj, num1);
      den1 += e1;
    }
  }
  part[warp * tile_queries + lane] = make_float2(num0, den0);
  part[warp * tile_queries + 32 + lane] = make_float2(num1, den1);
  __syncthreads();
  if (threadIdx.x < tile_queries) {
    const int i = q0 + static_cast<int>(threadIdx.x);
    float num = 0.0f;
    float den = 0.0f;
    for (int w = 0; w < warps_per_block; ++w) {
      const float2 p = part[w * tile_queries + static_cast<int>(threadIdx.x)];
      num += p.x;
      den += p.y;
    }
    if (i < n) {
      y[i] = num / den;  // den >= exp(q_i k_i) > 0: key i always counts
    }
  }
}

// ---- Baseline: one block per tile, in index order ----
__global__ void __launch_bounds__(block_threads, 1)
    causal_attention_block_per_tile_kernel(const float* __restrict__ q,
                                           const float* __restrict__ k,
                                           const float* __restrict__ v, float* __restrict__ y,
                                           int n) {
  __shared__ float2 part[warps_per_block * tile_queries];
  attend_tile(static_cast<int>(blockIdx.x), q, k, v, y, n, part);
}

// ---- Optimized: persistent blocks, atomic tile counter, heaviest tile first ----
// Changed: the grid is one wave of blocks and the schedule is explicit: thread 0 takes a ticket
// from the counter, the block computes tile T - 1 - ticket, and repeats until tickets run out.
__global__ void __launch_bounds__(block_threads, 1)
    causal_attention_persistent_kernel(const float* __restrict__ q, const float* __restrict__ k,
                                       const float* __restrict__ v, float* __restrict__ y, int n,
                                       int num_tiles, int* __restrict__ tile_counter) {
  __shared__ float2 part[warps_per_block * tile_queries];
  __shared__ int claimed;
  for (;;) {
    if (threadIdx.x == 0) {
      claimed = num_tiles - 1 - atomicAdd(tile_counter, 1);  // heaviest remaining tile
    }
    // Everyone sees the claim; and the previous tile's combine (threads < 64) is finished
    // before any warp writes `part` again.
    __syncthreads();
    const int tile = claimed;
    if (tile < 0) {
      return;  // the same value in every thread: the whole block leaves
    }
    attend_tile(tile, q, k, v, y, n, part);
  }
}

// ---- Launchers ----
[[nodiscard]] int tiles_of(std::int64_t n) {
  return static_cast<int>((n + tile_queries - 1) / tile_queries);
}

void check_inputs(const run_context& ctx, std::int64_t n) {
  AISP_EXPECTS(n >= 1 && n <= (std::int64_t{1} << 30), "n must fit an int");
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  AISP_EXPECTS(aligned(ctx.buffer("k")) && aligned(ctx.buffer("v")),
               "float4 key loads need 16-byte aligned k and v");
}

void launch_baseline(run_context& ctx) {
  const std::int64_t n = ctx.param("n");
  check_inputs(ctx, n);
  causal_attention_block_per_tile_kernel<<<tiles_of(n), block_threads, 0, ctx.stream()>>>(
      ctx.as<const float>("q"), ctx.as<const float>("k"), ctx.as<const float>("v"),
      ctx.as<float>("y"), static_cast<int>(n));
  AISP_CHECK_LAUNCH();
}

struct persistent_shape {
  int blocks_per_wave = 0;
};

void setup_optimized(run_context& ctx) {
  int blocks_per_sm = 0;
  AISP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks_per_sm, causal_attention_persistent_kernel, block_threads, 0));
  AISP_EXPECTS(blocks_per_sm >= 1, "a 1024-thread block must fit on an SM");
  make_state<persistent_shape>(ctx).blocks_per_wave = blocks_per_sm * device_sm_count();
}

void launch_optimized(run_context& ctx) {
  const std::int64_t n = ctx.param("n");
  check_inputs(ctx, n);
  const int num_tiles = tiles_of(n);
  auto* counter = ctx.as<int>("tile_counter");
  AISP_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(int), ctx.stream()));  // the scratch is noise
  const int grid = std::min(num_tiles, state_of<persistent_shape>(ctx).blocks_per_wave);
  causal_attention_persistent_kernel<<<grid, block_threads, 0, ctx.stream()>>>(
      ctx.as<const float>("q"), ctx.as<const float>("k"), ctx.as<const float>("v"),
      ctx.as<float>("y"), static_cast<int>(n), num_tiles, counter);
  AISP_CHECK_LAUNCH();
}

void teardown_optimized(run_context& ctx) { release_state<persistent_shape>(ctx); }

}  // namespace
}  // namespace aisp::ch10

AISP_REGISTER(
    aisp::pair("ch10:persistent_scheduler")
        .summary("causal 1-d attention, tile cost ~ tile index: one block per tile in index "
                 "order vs persistent blocks on an atomic tile counter, heaviest first")
        .benchmark_size({{"n", 33792}})
        .validation_size({{"n", 1}})
        .validation_size({{"n", 7}})
        .validation_size({{"n", 65}})
        .validation_size({{"n", 1003}})
        .validation_size({{"n", 4099}})
        .held_out_size({{"n", 9001}})
        .input("q", aisp::dtype::f32, {"n"})
        .input("k", aisp::dtype::f32, {"n"})
        .input("v", aisp::dtype::f32, {"n"})
        .output("y", aisp::dtype::f32, {"n"})
        .scratch("tile_counter", aisp::dtype::i32,
                 [](const aisp::workload&) { return std::int64_t{1}; })
        .work([](const aisp::workload& w) {
          const double n = static_cast<double>(w.get("n"));
          // One exp2 per pair: the MUFU rate bounds it (Note [special-function peak] in ceilings.hpp).
          return aisp::work_amount{.bytes = 16.0 * n, .flops = 5.0 * n * (n + 1.0) / 2.0,
                                   .special_function_ops = n * (n + 1.0) / 2.0};
        })
        .reference([](aisp::reference_io& io) {
          const std::int64_t n = io.param("n");
          const std::span<const double> q = io.input("q");
          const std::span<const double> k = io.input("k");
          const std::span<const double> v = io.input("v");
          const std::span<double> y = io.output("y");
          for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
            double num = 0.0;
            double den = 0.0;
            for (std::size_t j = 0; j <= i; ++j) {
              const double e = std::exp(q[i] * k[j]);
              num += e * v[j];
              den += e;
            }
            y[i] = num / den;
          }
        })
        .tolerance_override(aisp::tolerance{
            .rtol = 1e-5,
            .atol = 1e-6,
            .max_rel_l2 = 1e-5,
            .reason = "exp2f within ~3 ulp and fp32 sums of ~n/32 positive weights per lane: "
                      "y (a weighted mean) off by <= 9e-8 in an fp32 emulation of the kernel's "
                      "order; atol 1e-6 (see Note [attention tolerance])"})
        .tag("persistent-kernel")
        .tag("dynamic-scheduling")
        .tag("load-balancing")
        .tag("attention")
        .add_variant("baseline",
                     "one 1024-thread block per 64-query tile, tiles in index order (cheap first)",
                     aisp::ch10::launch_baseline)
        .add_variant(aisp::kit::with_state(
            "optimized",
            "persistent wave of blocks pulling tiles from an atomic counter, heaviest first",
            aisp::ch10::launch_optimized, aisp::ch10::setup_optimized, aisp::ch10::teardown_optimized)));
