// labs/decode's matvec at 9-16 rows with the rows over two warps (Note [rows over warps]):
// matvec_pair_kernel, the same sums in the same order as matvec_mma_kernel's one-tile path.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

#include "aisp/async_copy.cuh"
#include "aisp/check.hpp"
#include "aisp/dependent_launch.cuh"
#include "decode_matvec.cuh"
#include "variant_table.hpp"

namespace aisp::decode {
namespace {

// Note [rows over warps]
// At 9-16 rows a warp that ran both 8-row tiles made a chain of twice the dependent mmas and x
// loads a chunk, with no more warps an SM to hide them: the launch cost ~1.27x the 8-row one
// while its weights' bytes were the same (docs/proposals/decode-multirow-matvec.md). Here a
// tile's split is a pair of warps' work, one 8-row tile each: each warp runs the 8-row chain,
// and the pair's weights come once, through a ring of RingChunks chunks in shared memory
// (Note [weights in shared memory]) that both read: the first warp of a pair copies each chunk's
// top rows, the second its bottom rows, and a named barrier of the pair's 64 threads a chunk
// says both copies landed and both warps are done with the chunk whose slot the next copy takes.
// A warp's sums are the one-tile path's for its rows (matvec_plan_of fixes the splits and their
// order, the rows only which warp holds them), so every bit is unchanged. Pairs pairs a block,
// each taking PartsAPair consecutive warps of the plan (parts): tiles_a_block is Pairs
// PartsAPair / warps_a_tile. Measured (decode_matvec_rows.*, H100 GPU-9a97cdd9, 2026-12-07): the
// bits equal at 9, 12 and 16 rows on the model's four shapes, and every variant but wo's is
// slower than the path before (gate/up 42.6-46.2 us against 32.3-33.1, QKV 11.2-13.6 against
// 9.1-9.3, down 21.8-41.6 against 19.6-20.0; wo 6.8 against 7.2), and continuous batching with
// wo's alone moved within noise: so no shape takes it (matvec_launch.cuh's measured_pair_choices),
// and it stays as an A/B path for AISP_DECODE_PAIRS (docs/proposals/decode-multirow-matvec.md).
constexpr int pair_barrier_base = 1;  // named barrier 0 is __syncthreads'

// The pair's 64 threads meet at named barrier `id`.
__device__ __forceinline__ void pair_barrier_sync(int id) { asm volatile("bar.sync %0, 64;" ::"r"(id) : "memory"); }

template <int RingChunks>
__device__ __forceinline__ void issue_pair_chunk(uint4* ring, int c, int chunks, int first_split, const uint4* tile, int half) {
  if (c < chunks) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const uint4* chunk =
        tile + static_cast<std::int64_t>(first_split + c / matvec_loads_in_flight) * packed_quads_a_split + (c % matvec_loads_in_flight) * 64;
    ptx::cp_async_zfill16(ring + (c % RingChunks) * 64 + half * 32 + lane, chunk + half * 32 + lane, 16);
  }
  ptx::cp_async_commit();
}

template <int Pairs, int RingChunks>
constexpr int pair_ring_bytes = Pairs * RingChunks * matvec_tile_features * matvec_chunk_k * 2;

// y (rows <= 16) as matvec_mma_kernel computes it; blockIdx.x: Pairs PartsAPair / plan.warps_a_tile
// tiles of 16 features. Form: plain or normed. Launched as a dependent launch with
// pair_ring_bytes of dynamic shared memory. A pair takes PartsAPair consecutive parts of a tile
// (a part: a warp of the plan, its consecutive splits), so its chunks are one stream; it keeps
// each part's sums apart, and the tile's first pair adds the parts in order.
template <x_form Form, int Pairs, int RingChunks, int MinBlocks, int PartsAPair>
__global__ void __launch_bounds__(Pairs * 64, MinBlocks)
    matvec_pair_kernel(const uint4* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, int n_out, int k, int rows,
                       bool accumulate, float output_scale, float eps, matvec_plan plan) {
  static_assert(Form != x_form::swiglu, "a folded swiglu takes one row");
  static_assert(RingChunks >= 2, "a pair copies a chunk ahead of the one it reads");
  static_assert(PartsAPair == 1 || PartsAPair == 2, "a pair keeps at most two parts' sums");
  constexpr bool normed = Form == x_form::rms_normed;
  constexpr int block_parts = Pairs * PartsAPair;
  __shared__ float part_totals[block_parts][2][4][32];
  __shared__ float part_squares[normed ? block_parts : 1][2][32];
  extern __shared__ __align__(16) uint4 ring_slots[];
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int pair = warp / 2;
  const int half = warp % 2;  // rows 8 half .. 8 half + 7
  const int tiles_a_block = block_parts / plan.warps_a_tile;
  const int first_of_pair = pair * PartsAPair;  // the block's parts, tile after tile
  const int local_tile = first_of_pair / plan.warps_a_tile;
  const int first_part = first_of_pair % plan.warps_a_tile;
  const int first_feature = (static_cast<int>(blockIdx.x) * tiles_a_block + local_tile) * matvec_tile_features;
  const bool works = local_tile < tiles_a_block && first_feature < n_out;
  const int first_row = half * matvec_tile_rows;
  const int first_split = first_part * plan.splits_a_warp;
  const int end_split = works ? min(plan.splits, first_split + PartsAPair * plan.splits_a_warp) : first_split;
  const uint4* tile = w + static_cast<std::int64_t>(min(first_feature, n_out - 1) / matvec_tile_features) * plan.splits * packed_quads_a_split;
  uint4* ring = ring_slots + pair * RingChunks * 64;
  const int chunks = (end_split - first_split) * matvec_loads_in_flight;
  const int barrier = pair_barrier_base + pair;
#pragma unroll
  for (int c = 0; c + 1 < RingChunks; ++c) issue_pair_chunk<RingChunks>(ring, c, chunks, first_split, tile, half);
  ptx::let_next_kernel_start();
  ptx::wait_for_previous_kernel();  // Note [weights before the wait]
  float squares = 0.0f;
  float total[4] = {};
  // Part j's sums into shared memory, where the tile's first pair adds them in order (no
  // registers kept for a pair's first part: at 85 registers, 3 blocks an SM, they spilled).
  const auto keep_part = [&](int j) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
#pragma unroll
    for (int i = 0; i < 4; ++i) part_totals[first_of_pair + j][half][i][lane] = total[i];
    if constexpr (normed) part_squares[first_of_pair + j][half][lane] = squares;
  };
  int c = 0;
  for (int s = first_split; s < end_split; ++s) {
    const bool second_part = PartsAPair > 1 && s == first_split + plan.splits_a_warp;
    const bool part_starts = s == first_split || second_part;
    if (second_part) keep_part(0);
    const int split_end = min(k, (s + 1) * matvec_split_k);
    matvec_acc acc[1] = {};
    float paired[4] = {};
#pragma unroll
    for (int u = 0; u < matvec_loads_in_flight; ++u, ++c) {
      // Chunk c's copies (this warp's) landed; the barrier: the partner's too, and both are done
      // with chunk c - 1, whose slot chunk c + RingChunks - 1 takes.
      ptx::cp_async_wait<RingChunks - 2>();
      pair_barrier_sync(barrier);
      issue_pair_chunk<RingChunks>(ring, c + RingChunks - 1, chunks, first_split, tile, half);
      if (s * matvec_split_k + u * matvec_chunk_k >= split_end) continue;  // past k: the same for the pair
      const int lane = static_cast<int>(threadIdx.x) % 32;
      const int at = s * matvec_split_k + u * matvec_chunk_k + (lane % 4) * 8;
      const uint4* slot = ring + (c % RingChunks) * 64;
      float chunk_squares[1];
      mma_chunk<1>(slot[lane], slot[32 + lane], x, first_row, rows, k, at, at < split_end, acc, chunk_squares);
      pair_groups_of_split(paired, u, chunk_squares[0]);
    }
    if constexpr (normed) {
      const float split_sum = split_squares(paired);
      squares = part_starts ? split_sum : __fadd_rn(squares, split_sum);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float split_total = __fadd_rn(__fadd_rn(acc[0][0][0][i], acc[0][0][1][i]), __fadd_rn(acc[0][1][0][i], acc[0][1][1][i]));
      total[i] = part_starts ? split_total : __fadd_rn(total[i], split_total);
    }
  }
  ptx::cp_async_wait<0>();  // copies past the walk are empty groups
  if (plan.warps_a_tile > 1) {  // the tile's parts meet in shared memory; its first pair adds them in order
    if (works) keep_part(PartsAPair - 1);
    __syncthreads();
    if (!works || first_part != 0) return;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    if constexpr (PartsAPair > 1) {  // the pair's first part, part 0
#pragma unroll
      for (int i = 0; i < 4; ++i) total[i] = part_totals[first_of_pair][half][i][lane];
      if constexpr (normed) squares = part_squares[first_of_pair][half][lane];
    }
    for (int other = 1; other < plan.warps_a_tile; ++other) {
#pragma unroll
      for (int i = 0; i < 4; ++i) total[i] = __fadd_rn(total[i], part_totals[first_of_pair + other][half][i][lane]);
      if constexpr (normed) squares = __fadd_rn(squares, part_squares[first_of_pair + other][half][lane]);
    }
  }
  if (works) store_row_tile<normed>(y, total, squares, first_feature, first_row, rows, n_out, k, matvec_scale(output_scale, k), eps, accumulate);
}

// Opts a pair path's kernel into its dynamic shared memory on the current device (not in the
// launcher: a CUDA graph captures the launches, not this call).
template <x_form Form, int Pairs, int RingChunks, int MinBlocks, int PartsAPair>
void prepare_pair_matvec() {
  AISP_CUDA_CHECK(cudaFuncSetAttribute(matvec_pair_kernel<Form, Pairs, RingChunks, MinBlocks, PartsAPair>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       pair_ring_bytes<Pairs, RingChunks>));
}

// y (9-16 rows) on a pair path, for the plan of (n_out, k) (matvec_plan_of).
template <x_form Form, int Pairs, int RingChunks, int MinBlocks, int PartsAPair>
void launch_pair_matvec(const matvec_plan& plan, const uint4* w, const float* x, float* y, int n_out, int k, int rows, bool accumulate,
                        float output_scale, float eps, cudaStream_t stream) {
  AISP_EXPECTS(rows <= 2 * matvec_tile_rows && plan.warps_a_tile <= Pairs * PartsAPair && plan.warps_a_tile % PartsAPair == 0,
               "labs/decode: a pair path takes 9-16 rows, and a tile's warps in whole pairs of one block");
  const int tiles = (n_out + matvec_tile_features - 1) / matvec_tile_features;
  const int tiles_a_block = Pairs * PartsAPair / plan.warps_a_tile;
  launch_dependent(matvec_pair_kernel<Form, Pairs, RingChunks, MinBlocks, PartsAPair>, dim3(static_cast<unsigned>((tiles + tiles_a_block - 1) / tiles_a_block)),
                   dim3(Pairs * 64), static_cast<std::size_t>(pair_ring_bytes<Pairs, RingChunks>), stream, w, x, y, n_out, k, rows,
                   accumulate, output_scale, eps, plan);
}

// The pair paths built (decode_matvec_rows.* times each against the path before them): pairs a
// block, ring chunks a pair, blocks an SM, parts a pair. At 64 registers (4 blocks of 4 pairs an
// SM, or 2 of 8) the kernel spills, and the build refuses spills. Two parts a pair halve the
// blocks of a plan of many warps a tile (QKV: 192 tiles of 8 parts; a wave of 4 pairs a block
// and 3 blocks an SM holds 396 tiles, of 8 pairs one block an SM 132).
struct pair_variant {
  int pairs;
  int ring_chunks;
  int min_blocks;
  int parts_a_pair = 1;
};
constexpr pair_variant pair_variants[] = {{4, 8, 2}, {4, 8, 3}, {4, 4, 3}, {8, 8, 1}, {8, 4, 1}, {4, 8, 3, 2}, {4, 8, 2, 2}};
constexpr int pair_variant_count = static_cast<int>(sizeof(pair_variants) / sizeof(pair_variants[0]));

// Whether variant v takes a plan: a tile's warps in whole pairs of one block.
[[nodiscard]] inline bool pair_variant_takes(int v, const matvec_plan& plan) {
  const pair_variant p = pair_variants[v];
  return plan.warps_a_tile <= p.pairs * p.parts_a_pair && plan.warps_a_tile % p.parts_a_pair == 0;
}

// "pairs4_ring8_min3" ("..._parts2" with two parts a pair): the name the timing test prints and
// AISP_DECODE_PAIRS takes (matvec_launch.cuh).
inline std::string pair_variant_name(int v) {
  const pair_variant p = pair_variants[v];
  return "pairs" + std::to_string(p.pairs) + "_ring" + std::to_string(p.ring_chunks) + "_min" + std::to_string(p.min_blocks) +
         (p.parts_a_pair == 1 ? "" : "_parts" + std::to_string(p.parts_a_pair));
}

// Opts every pair variant, plain and normed, into its dynamic shared memory on the current device.
inline void prepare_pair_variants() {
  for_each_variant<pair_variant_count>([](auto v) {
    constexpr pair_variant p = pair_variants[v];
    prepare_pair_matvec<x_form::plain, p.pairs, p.ring_chunks, p.min_blocks, p.parts_a_pair>();
    prepare_pair_matvec<x_form::rms_normed, p.pairs, p.ring_chunks, p.min_blocks, p.parts_a_pair>();
  });
}

// y (9-16 rows) on pair variant v (an index of pair_variants), which must take the plan's warps a tile.
template <x_form Form>
void launch_pair_variant(int v, const matvec_plan& plan, const uint4* w, const float* x, float* y, int n_out, int k, int rows,
                         bool accumulate, float output_scale, float eps, cudaStream_t stream) {
  AISP_EXPECTS(v >= 0 && v < pair_variant_count, "labs/decode: no such pair variant");
  with_variant<pair_variant_count>(v, [&](auto index) {
    constexpr pair_variant p = pair_variants[index];
    launch_pair_matvec<Form, p.pairs, p.ring_chunks, p.min_blocks, p.parts_a_pair>(plan, w, x, y, n_out, k, rows, accumulate, output_scale, eps,
                                                                                    stream);
  });
}

}  // namespace
}  // namespace aisp::decode
