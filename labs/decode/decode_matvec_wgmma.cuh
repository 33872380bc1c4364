// labs/decode's matvec at 9-16 rows on wgmma (Note [rows as wgmma's N]): matvec_wgmma_kernel,
// the same sums in the same order as matvec_mma_kernel's, and its launcher.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "aisp/check.hpp"
#include "aisp/dependent_launch.cuh"
#include "aisp/hopper_ptx.cuh"
#include "aisp/wgmma_shapes.cuh"
#include "decode_matvec.cuh"
#include "timing_switches.hpp"
#include "variant_table.hpp"

namespace aisp::decode {
namespace {

// Note [rows as wgmma's N]
// At 9-16 rows a warp of matvec_mma_kernel runs two 8-row tiles: twice the dependent mma.sync
// and twice the x loads and splits a chunk, with no more warps to hide them, so the launch cost
// ~1.27x the 8-row one on the same weight bytes (docs/proposals/decode-multirow-matvec.md, design
// 2). Here a block is one warpgroup: 64 features (four tiles; warp w holds tile 4 group + w) x one
// part of matvec_plan_of (a warp's consecutive splits there). For each split the warpgroup stages
// x once as wgmma's B, K-major: 32 columns, the 16 rows' hi pieces then their lo pieces (zeros
// past the rows and past k), and each warp makes its tile's A fragments from the weights it loads
// as the 8-row path does. Chunk u's k pair j is k8 step 4u + j, one wgmma m64n32k8 (tf32) into
// accumulator set j % 2, as mma j was: tests/gpu/wgmma_tf32_bits_test.cu showed that wgmma gives
// each output mma.sync m16n8k8's bits for the same operands and accumulator. The x loads and
// splits leave the chain (x is read once a split a block, not once a chunk a warp), and wgmma is
// asynchronous: a chunk's wgmmas run while the next chunk's fragments are made. A split's total
// is (hi0 + hi1) + (lo0 + lo1), the part's the splits' in order. A group's parts are one cluster:
// each block leaves its part's totals in shared memory, and block p adds all parts in order for
// its share of the outputs (distributed shared memory), so every output is the one-tile path's
// sum and its bits are unchanged. The squares of a normed row follow Note [norm as an output
// scale]: each group of eight from x_pieces, a split's 32 groups in warp_sum's tree.
// Measured (decode_matvec_rows.*, every output's bits equal to the path before at 9, 12 and 16
// rows on the model's four shapes; H100s, 2026-12-07):
// - First, the weights in registers, a block one warpgroup (GPU-ed6cd050): not faster. A whole
//   split ahead took 223-230 registers (2 blocks an SM); 2-4 chunks ahead left too few bytes in
//   flight, and a cluster of 8 blocks of 166 registers fit only ~one wave: gate/up 43-47 us
//   against 31.5-32.4, QKV 9.5-15.8 against 9.2.
// - Then the weights through a ring in shared memory and two warpgroups a block sharing x
//   (GPU-d50eacbd): gate/up 27.1-27.7 us against 31.6-32.4 (the 8-row launch 25.5), QKV 8.3-8.9
//   against 9.1-9.2 (7.1), wo 6.4-6.9 against 7.1-7.2 (5.6), down 17.7-18.4 against 19.6-19.9
//   (16.8). Continuous batching with them: TPOT p99 0.934x [0.914, 0.961] static batching's,
//   0.842x without (one call, one card), and 0.876x against 0.839x on GPU-0d0d80fa; throughput
//   2.19-2.21x against 2.15x. rows_paths.cuh's measured_rows_paths takes them.
// - Alone (Nsight Compute, one launch, caches flushed; GPU-1e14580c) a 16-row launch costs what
//   the 8-row one does: QKV 11.4 against 11.6 us, wo 9.9 / 10.3, gate/up 31.6 / 35.2, down
//   21.3 / 20.4. In a stream the 8-row launch overlaps the launch before it better (7.2 against
//   8.5 us on QKV): what is left is this kernel's prologue (half a one-split part in flight
//   before the wait at a ring of 4), its cluster, and x's staging after the wait.
// - SwiGLU folded into the staging, as at one row (Note [folded swiglu]; GPU-2370247c): slower.
//   Every block of a part made the SwiGLU of its split's 16 rows again (16 blocks a part on the
//   down projection) from twice act's bytes: 23.3-23.7 us against 22.5-23.0 for swiglu_rows_kernel
//   then the path before (the plain wgmma down alone: 17.4-18.1), 28.5-28.8 on one warpgroup a
//   block; with it on, continuous batching's TPOT p99 fell to 0.807x. Removed.
constexpr int wgmma_group_features = 64;                     // wgmma's m: four tiles
constexpr int wgmma_group_tiles = wgmma_group_features / matvec_tile_features;
constexpr int wgmma_rows = 2 * matvec_tile_rows;             // the rows a launch takes, 9-16
constexpr int wgmma_step_words = 2 * wgmma_rows * 8;         // a k8 step's B: 32 columns x 8 k, 1 KB
constexpr int wgmma_split_words = matvec_split_k / 8 * wgmma_step_words;  // a split's B: 32 KB
constexpr int wgmma_totals_stride = wgmma_group_features + 4;  // part totals' row: conflict-free stores

// The word of B (k8 step `step`, column n, k position p) in the no-swizzle K-major layout: core
// matrices of 8 columns x 4 k, the two k halves 128 bytes apart, 8-column groups 256 bytes apart.
__device__ __forceinline__ int wgmma_b_word(int step, int n, int p) { return step * wgmma_step_words + (n / 8) * 64 + (p / 4) * 32 + (n % 8) * 4 + p % 4; }

// Split s's x as B (rows past `rows` and k past its end zeros), by the block's BlockWarps warps:
// item i = (chunk u = i / 2, 8-row half i % 2), warp w taking items w, w + BlockWarps, ... Lane l
// takes row 8 half + l / 4 and the chunk's k (l % 4) 8 .. + 7, which are m16n8k8's k positions
// l % 4 (k 2j) and l % 4 + 4 (k 2j + 1) of step 4u + j: a warp's 32 stores of one register fill
// 32 consecutive words. Normed: each group's sum of squares into group_squares[row][group],
// group = the split's k / 8.
template <x_form Form, int BlockWarps>
__device__ __forceinline__ void stage_wgmma_split(const float* x, int rows, int k, int s, std::uint32_t* b, float (*group_squares)[32]) {
  constexpr int items = 2 * matvec_loads_in_flight;
  static_assert(items % BlockWarps == 0, "a block's warps share a split's items evenly");
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
#pragma unroll
  for (int q = 0; q < items / BlockWarps; ++q) {
    const int item = warp + q * BlockWarps;
    const int u = item / 2;
    const int row = (item % 2) * matvec_tile_rows + lane / 4;
    const int at = s * matvec_split_k + u * matvec_chunk_k + (lane % 4) * 8;
    std::uint32_t hi[8], lo[8];
    const float squares = x_pieces(x, row, rows, k, at, at < k, hi, lo);
    if constexpr (Form == x_form::rms_normed) group_squares[row][4 * u + lane % 4] = squares;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const int step = 4 * u + e / 2;
      const int p = lane % 4 + 4 * (e % 2);
      b[wgmma_b_word(step, row, p)] = hi[e];
      b[wgmma_b_word(step, wgmma_rows + row, p)] = lo[e];
    }
  }
}

// Keeps the compiler from computing these registers after this point (past a wgmma fence: ptxas
// would then fence each wgmma again).
__device__ __forceinline__ void pin_registers(std::uint32_t (&r)[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

#if AISP_HOPPER_DEVICE
// B's descriptor at step 0 of a split's B; step t's is this plus t wgmma_step_desc (the start
// address field counts 16 bytes).
__device__ __forceinline__ std::uint64_t wgmma_b_desc(const std::uint32_t* b) { return hopper::no_swizzle_kmajor_desc(hopper::smem_u32(b), 128, 256); }
constexpr std::uint64_t wgmma_step_desc = wgmma_step_words * sizeof(std::uint32_t) / 16;
#endif

// A wgmma path's shape: warpgroups a block (each 64 features of the same part, so x is staged
// once for them), weight chunks a warp keeps in flight through shared memory (Note [weights in
// shared memory]: a lane copies the 32 bytes it reads), x buffers (2: a walking part stages the
// next split while it uses this one; 1: after), blocks an SM asked of ptxas.
// gather_first: each output's parts read from the cluster all at once, then added in order (a
// remote load's latency once, not once a part; the same adds).
// prefetch_rest: the split's chunks past the ring asked of the L2 before the wait (Note [the
// rest before the wait]).
struct wgmma_shape {
  int warpgroups;
  int ring_chunks;
  int x_buffers;
  int min_blocks;
  bool gather_first = false;
  bool prefetch_rest = false;
};

// A tile's parts (matvec_plan_of: 8 at most): a cluster's blocks.
constexpr int wgmma_most_parts = 8;

template <int Warpgroups, int Ring, int XBuffers>
constexpr std::size_t wgmma_smem_bytes =
    static_cast<std::size_t>(Warpgroups) * 4 * Ring * matvec_tile_features * matvec_chunk_k * 2 + XBuffers * wgmma_split_words * sizeof(std::uint32_t);

// y (rows <= 16) as matvec_mma_kernel computes it. Grid: (blocks of Warpgroups x 64 features) x
// plan.warps_a_tile parts, a cluster of the parts; dynamic shared memory wgmma_smem_bytes (the
// weights' ring, then x's buffers). Form: plain or normed. Launched as a dependent launch (Note [weights before
// the wait]).
// Note [the rest before the wait]: in a stream of dependent launches the 8-row launch holds a
// whole split's weights in flight before its wait (Note [weights before the wait]), a ring of 4
// chunks half of one; where a part is one split (QKV, wo) the other half is then asked of DRAM
// only after the wait and x's staging. Alone a 16-row launch costs what the 8-row one does, in
// a stream 1.1-1.2x (Nsight Compute and decode_matvec_rows.*, H100, 2026-12-07). So lane 0 of
// each warp asks the L2 for the rest of the first split's chunks before the wait (one bulk
// prefetch: a warp's chunks of a split are 8 KB in a row), and the ring's copies after the wait
// find them there. The bits are unchanged: it moves no data the kernel reads.
template <x_form Form, int Warpgroups, int Ring, int XBuffers, int MinBlocks, bool GatherFirst, bool PrefetchRest>
__global__ void __launch_bounds__(Warpgroups * 128, MinBlocks)
    matvec_wgmma_kernel(const uint4* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, int n_out, int k, int rows,
                        int x_rows, bool accumulate, float output_scale, float eps, matvec_plan plan) {
  static_assert(Form != x_form::swiglu, "SwiGLU is folded at one row only (Note [rows as wgmma's N])");
  static_assert(Ring >= 2 && (XBuffers == 1 || XBuffers == 2), "a ring of two chunks or more; one or two x buffers");
#if AISP_HOPPER_DEVICE
  constexpr bool normed = Form == x_form::rms_normed;
  constexpr int block_warps = 4 * Warpgroups;
  extern __shared__ __align__(128) uint4 shared_words[];
  __shared__ float part_totals[Warpgroups][wgmma_rows][wgmma_totals_stride];
  __shared__ float group_squares[normed ? 2 : 1][wgmma_rows][32];
  __shared__ float part_squares[wgmma_rows];
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warpgroup = warp / 4;
  const int parts = plan.warps_a_tile;
  const int part = static_cast<int>(blockIdx.x) % parts;  // the block's rank in its cluster
  const int first_group = static_cast<int>(blockIdx.x) / parts * Warpgroups;
  const int tiles = (n_out + matvec_tile_features - 1) / matvec_tile_features;
  // A warp past the tiles loads the last one and stores nothing.
  const uint4* tile = w + static_cast<std::int64_t>(min(first_group * wgmma_group_tiles + warp, tiles - 1)) * plan.splits * packed_quads_a_split;
  const int first_split = part * plan.splits_a_warp;
  const int end_split = min(plan.splits, first_split + plan.splits_a_warp);
  const int chunks = (end_split - first_split) * matvec_loads_in_flight;
  uint4* ring = shared_words + warp * Ring * 2 * 32;
  auto* b_splits = reinterpret_cast<std::uint32_t*>(shared_words + block_warps * Ring * 2 * 32);
  const int buffers = XBuffers == 2 && plan.splits_a_warp > 1 ? 2 : 1;
#pragma unroll
  for (int c = 0; c < Ring; ++c) issue_ring_chunk<Ring>(ring, c, chunks, first_split, tile);
  if constexpr (PrefetchRest) {
    const int rest = min(chunks, matvec_loads_in_flight) - Ring;  // the first split's chunks past the ring
    if (lane == 0 && rest > 0) {
      ptx::bulk_prefetch_l2(tile + static_cast<std::int64_t>(first_split) * packed_quads_a_split + Ring * 2 * 32,
                            static_cast<unsigned>(rest) * 2 * 32 * sizeof(uint4));
    }
  }
  ptx::let_next_kernel_start();
  ptx::wait_for_previous_kernel();  // Note [weights before the wait]
  stage_wgmma_split<Form, block_warps>(x, x_rows, k, first_split, b_splits, group_squares[0]);
  hopper::fence_proxy_async_shared();  // the staged B, for wgmma's reads
  __syncthreads();
  float total[8] = {};    // the part's sums: [column block jn (rows 8 jn ..)][accumulator i]
  float squares = 0.0f;   // warp w < 4, lane r < 16: row r's (normed), the part's
  int c = 0;              // the warp's chunks used
  for (int s = first_split; s < end_split; ++s) {
    const int buffer = (s - first_split) % buffers;
    const std::uint32_t* b = b_splits + buffer * wgmma_split_words;
    if constexpr (normed) {
      // Each row's split sum by warp_sum's tree (lane = group); warp w < 4 keeps rows 4w .. 4w + 3 in lanes 4w ..
      if (warp < 4) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const float split_sum = warp_sum(group_squares[buffer][4 * warp + r][lane]);
          if (lane == 4 * warp + r) squares = s == first_split ? split_sum : __fadd_rn(squares, split_sum);
        }
      }
    }
    if (buffers == 2 && s + 1 < end_split) {
      stage_wgmma_split<Form, block_warps>(x, x_rows, k, s + 1, b_splits + (1 - buffer) * wgmma_split_words, group_squares[normed ? 1 - buffer : 0]);
    }
    float acc[2][16];
#pragma unroll
    for (int i = 0; i < 16; ++i) acc[0][i] = acc[1][i] = 0.0f;
    hopper::fence_accumulators(acc[0]);  // zeroed before the first wgmma fence, not moved past it
    hopper::fence_accumulators(acc[1]);
    std::uint32_t a[2][4][4];
    std::uint64_t desc = wgmma_b_desc(b);
    const int split_end = min(k, (s + 1) * matvec_split_k);
#pragma unroll
    for (int u = 0; u < matvec_loads_in_flight; ++u, ++c) {
      if (s * matvec_split_k + u * matvec_chunk_k >= split_end) break;  // the same for the block
      ptx::cp_async_wait<Ring - 1>();  // chunk c's copies (the lane's own) landed
      const uint4* slot = ring + (c % Ring) * 2 * 32;
      const uint4 top = slot[lane];
      const uint4 bottom = slot[32 + lane];
      const std::uint32_t top_words[4] = {top.x, top.y, top.z, top.w};
      const std::uint32_t bottom_words[4] = {bottom.x, bottom.y, bottom.z, bottom.w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const auto fragment = tf32_a_of_bf16_pairs(top_words[j], bottom_words[j]);
#pragma unroll
        for (int r = 0; r < 4; ++r) a[u % 2][j][r] = fragment.words[r];
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) pin_registers(a[u % 2][j]);  // made (the slot read) before the next copy and the fence
      issue_ring_chunk<Ring>(ring, c + Ring, chunks, first_split, tile);
      hopper::wgmma_fence();  // a[u % 2] was written: the wgmmas must read it as written
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        hopper::wgmma_rs_tf32_m64k8<2 * wgmma_rows>(acc[j % 2], a[u % 2][j], desc);
        desc += wgmma_step_desc;
        asm volatile("" : "+l"(desc));  // one register stepped, not 32 descriptors made ahead
      }
      hopper::wgmma_commit();
      hopper::wgmma_wait<1>();  // chunk u - 1's wgmmas are done: a[(u + 1) % 2] may be written
    }
    hopper::wgmma_wait<0>();
    hopper::fence_accumulators(acc[0]);
    hopper::fence_accumulators(acc[1]);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      // Column block jn = i / 4 holds the hi pieces of rows 8 jn ..; block jn + 2 their lo pieces.
      const float split_total = __fadd_rn(__fadd_rn(acc[0][i], acc[1][i]), __fadd_rn(acc[0][i + 8], acc[1][i + 8]));
      total[i] = s == first_split ? split_total : __fadd_rn(total[i], split_total);
    }
    if (buffers == 1 && s + 1 < end_split) {
      __syncthreads();  // every warpgroup is done with this split's B
      stage_wgmma_split<Form, block_warps>(x, x_rows, k, s + 1, b_splits, group_squares[0]);
    }
    hopper::fence_proxy_async_shared();  // the next split's B, staged above
    __syncthreads();                     // and every warp is done with this split's B (and its squares)
  }
  ptx::cp_async_wait<0>();  // copies past the walk are empty groups
  // The part's totals: accumulator i of column block jn is feature 16 (w % 4) + g + 8 (i / 2 % 2)
  // of the warpgroup's 64, row 8 jn + 2 (lane % 4) + i % 2.
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int feature = 16 * (warp % 4) + lane / 4 + 8 * (i / 2 % 2);
    const int row = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    part_totals[warpgroup][row][feature] = total[i];
  }
  if constexpr (normed) {
    if (warp < 4 && lane / 4 == warp) part_squares[lane] = squares;
  }
  constexpr int outputs = Warpgroups * wgmma_rows * wgmma_group_features;
  const float scale = matvec_scale(output_scale, k);
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every part's totals are in its block's shared memory
  for (int o = static_cast<int>(threadIdx.x) + part * block_warps * 32; o < outputs; o += parts * block_warps * 32) {
    const int g = o / (wgmma_rows * wgmma_group_features);
    const int row = o / wgmma_group_features % wgmma_rows;
    const int f = o % wgmma_group_features;
    const int feature = (first_group + g) * wgmma_group_features + f;
    if (row >= rows || feature >= n_out) continue;
    float sum = cluster.map_shared_rank(&part_totals[g][row][f], 0)[0];
    float row_squares = normed ? cluster.map_shared_rank(&part_squares[row], 0)[0] : 0.0f;
    if constexpr (GatherFirst) {
      float totals[wgmma_most_parts];
      [[maybe_unused]] float squares_of[wgmma_most_parts];
#pragma unroll
      for (int q = 1; q < wgmma_most_parts; ++q) {
        totals[q] = q < parts ? cluster.map_shared_rank(&part_totals[g][row][f], q)[0] : 0.0f;
        if constexpr (normed) squares_of[q] = q < parts ? cluster.map_shared_rank(&part_squares[row], q)[0] : 0.0f;
      }
#pragma unroll
      for (int q = 1; q < wgmma_most_parts; ++q) {
        if (q >= parts) break;
        sum = __fadd_rn(sum, totals[q]);
        if constexpr (normed) row_squares = __fadd_rn(row_squares, squares_of[q]);
      }
    } else {
      for (int q = 1; q < parts; ++q) {
        sum = __fadd_rn(sum, cluster.map_shared_rank(&part_totals[g][row][f], q)[0]);
        if constexpr (normed) row_squares = __fadd_rn(row_squares, cluster.map_shared_rank(&part_squares[row], q)[0]);
      }
    }
    if constexpr (normed) sum = __fmul_rn(sum, row_rms_scale(row_squares, k, eps));
    store_matvec(y + static_cast<std::int64_t>(row) * n_out + feature, sum, scale, accumulate);
  }
  cluster.sync();  // the other blocks are done reading this one's totals
#else
  (void)w, (void)x, (void)y, (void)n_out, (void)k, (void)rows, (void)x_rows, (void)accumulate, (void)output_scale, (void)eps, (void)plan;
#endif
}

// Opts a wgmma path's kernels into their dynamic shared memory on the current device (not in the
// launcher: a CUDA graph captures the launches, not this call).
template <x_form Form, wgmma_shape Shape>
void prepare_wgmma_matvec() {
  constexpr auto kernel = matvec_wgmma_kernel<Form, Shape.warpgroups, Shape.ring_chunks, Shape.x_buffers, Shape.min_blocks, Shape.gather_first, Shape.prefetch_rest>;
  AISP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(wgmma_smem_bytes<Shape.warpgroups, Shape.ring_chunks, Shape.x_buffers>)));
}

// y (9-16 rows) on a wgmma path, for the plan of (n_out, k): a cluster of the plan's parts for
// each block of features, as a dependent launch. sm_90a only (wgmma).
template <x_form Form, wgmma_shape Shape>
void launch_wgmma_matvec(const matvec_plan& plan, const uint4* w, const float* x, float* y, int n_out, int k, int rows, bool accumulate,
                         float output_scale, float eps, cudaStream_t stream) {
  AISP_EXPECTS(rows >= 2 && rows <= wgmma_rows && plan.warps_a_tile <= 8,
               "labs/decode: a wgmma matvec takes 2-16 rows (9-16 unless AISP_DECODE_WGMMA_FROM says fewer) and at most 8 parts a tile (a cluster)");
  AISP_EXPECTS(device_runs_dependent_launches(), "labs/decode: a wgmma matvec needs an sm_90a GPU");
  const int block_features = Shape.warpgroups * wgmma_group_features;
  const int blocks = (n_out + block_features - 1) / block_features;
  cudaLaunchAttribute attributes[2] = {};
  attributes[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[0].val.programmaticStreamSerializationAllowed = 1;
  attributes[1].id = cudaLaunchAttributeClusterDimension;  // the parts of a tile
  attributes[1].val.clusterDim.x = static_cast<unsigned>(plan.warps_a_tile);
  attributes[1].val.clusterDim.y = 1;
  attributes[1].val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(blocks * plan.warps_a_tile));
  config.blockDim = dim3(static_cast<unsigned>(Shape.warpgroups * 128));
  config.dynamicSmemBytes = wgmma_smem_bytes<Shape.warpgroups, Shape.ring_chunks, Shape.x_buffers>;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = 2;
  constexpr auto kernel = matvec_wgmma_kernel<Form, Shape.warpgroups, Shape.ring_chunks, Shape.x_buffers, Shape.min_blocks, Shape.gather_first, Shape.prefetch_rest>;
  // x_rows: the rows staged; rows: the rows stored (both `rows` but where probed: Note [row probes]).
  AISP_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, w, x, y, n_out, k, probed_rows(row_probe::stores, rows), probed_rows(row_probe::x, rows),
                                     accumulate, output_scale, eps, plan));
  AISP_CHECK_LAUNCH();
}

// The wgmma paths built (decode_matvec_rows.* times each against the path before them).
// Gathering each output's parts at once (_gather): 0.05-0.24 us faster on QKV and wo, where a
// part is one split (H100 GPU-ce128fee, 2026-12-07), no faster on gate/up and down.
// Asking the L2 for the rest of a split before the wait (_prefetch, Note [the rest before the
// wait]): bits equal; a layer's four matvecs in a step's order at 16 rows 64.1 us against 66.1
// with the gather alone and 59.8 for the 8-row layer (H100 GPU-5b3fbc1a, 2026-12-07). (Summing the
// parts in the last block to arrive, with no cluster, took 73.7 us: removed, source in
// docs/results/raw/issue21-2026-12-07-last-block-sums-source.cuh.gz.)
constexpr wgmma_shape wgmma_variants[] = {{2, 8, 1, 2},
                                          {2, 4, 2, 2},
                                          {2, 4, 1, 2},
                                          {1, 8, 1, 3},
                                          {2, 8, 1, 2, true},
                                          {2, 4, 1, 2, true},
                                          {2, 4, 1, 2, true, true}};
constexpr int wgmma_variant_count = static_cast<int>(sizeof(wgmma_variants) / sizeof(wgmma_variants[0]));

// "wgmma_wg2_ring8_x1_min2": the name the timing test prints and AISP_DECODE_PAIRS takes.
inline std::string wgmma_variant_name(int v) {
  const wgmma_shape w = wgmma_variants[v];
  return "wgmma_wg" + std::to_string(w.warpgroups) + "_ring" + std::to_string(w.ring_chunks) + "_x" + std::to_string(w.x_buffers) + "_min" +
         std::to_string(w.min_blocks) + (w.gather_first ? "_gather" : "") + (w.prefetch_rest ? "_prefetch" : "");
}

// Opts every wgmma variant, plain and normed, into its dynamic shared memory on the current device.
inline void prepare_wgmma_variants() {
  for_each_variant<wgmma_variant_count>([](auto v) {
    prepare_wgmma_matvec<x_form::plain, wgmma_variants[v]>();
    prepare_wgmma_matvec<x_form::rms_normed, wgmma_variants[v]>();
  });
}

// y (9-16 rows) on wgmma variant v (an index of wgmma_variants).
template <x_form Form>
void launch_wgmma_variant(int v, const matvec_plan& plan, const uint4* w, const float* x, float* y, int n_out, int k, int rows,
                          bool accumulate, float output_scale, float eps, cudaStream_t stream) {
  AISP_EXPECTS(v >= 0 && v < wgmma_variant_count, "labs/decode: no such wgmma variant");
  with_variant<wgmma_variant_count>(
      v, [&](auto index) { launch_wgmma_matvec<Form, wgmma_variants[index]>(plan, w, x, y, n_out, k, rows, accumulate, output_scale, eps, stream); });
}

}  // namespace
}  // namespace aisp::decode
