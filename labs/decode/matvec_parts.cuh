// labs/decode's matvec at 2-16 rows as a block a part (Note [a block a part]): the same sums as
// matvec_mma_kernel's, bit for bit, with x read once a block and the weights streamed by bulk copies.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "aisp/async_copy.cuh"
#include "aisp/check.hpp"
#include "aisp/dependent_launch.cuh"
#include "aisp/device_scratch.hpp"
#include "decode_matvec.cuh"

namespace aisp::decode {
namespace {

// Note [a block a part]
// At 9-16 rows every matvec_mma_kernel block read its rows' x for all of k (a tile's warps take
// every split), so x crossed the L2 once a block: at 16 rows ~136 MB a layer beside the weights'
// 122 MB (QKV's 192 blocks 128 KB each; the down projection's 256 blocks 256 KB each), twice
// the 8-row launch's; the 16-row step cost ~1.27x the 8-row one where the weights alone would
// cost the same. Here a block is one part of eight tiles: warp w takes tile 8 blockIdx.x + w,
// and the block walks the part's splits (matvec_plan_of's splits_a_warp, whatever the rows), so
// the block stages each split's x once (every row, in shared memory) for its eight warps: x
// crosses the L2 once a part and group, 1/8 of before. A warp's weights come by bulk copies of
// half a split (4 KB of the packed tile, Note [packed weights]) into two slots of its own, the
// first two before the wait (Note [weights before the wait]); a warp reads a half into registers
// and asks for the half after next into the slot before its mmas. The sums: a split's mmas are
// matvec_mma_kernel's, in its order, from the same x and weights; a part's splits add in split
// order, as a warp's did; a tile's parts then add in part order, as its warps did, done by the
// last block of the group to finish (a counter a group) from the parts' totals in `partials`, and
// so are a normed row's sums of squares. So every row count gives every output the bits it had.
constexpr int parts_block_warps = 8;                              // a warp a tile: a group of 8 tiles a block
constexpr int parts_half_quads = packed_quads_a_split / 2;        // 16-byte words of half a split: 4 KB
constexpr int parts_slots = 2;                                    // halves a warp has in flight
constexpr int parts_max_rows = 2 * matvec_tile_rows;              // the launches it takes: 2-16 rows
constexpr int parts_x_stride = matvec_split_k + 4;                // a staged row: a split's x, then 4 floats apart
constexpr int parts_max_partials = matvec_target_warps * matvec_tile_features * parts_max_rows;  // parts x tiles <= 2048
constexpr int parts_max_groups = 128;                             // groups where there are parts to add: tiles <= 1024

template <int Tiles>
constexpr int parts_x_floats = Tiles * matvec_tile_rows * parts_x_stride;  // one split of x, every row
constexpr int parts_slot_bytes = parts_block_warps * parts_slots * parts_half_quads * 16;
template <int Tiles, x_form Form>
constexpr int parts_x_buffers = Form == x_form::swiglu ? 4 : 2;  // two splits of x (and of up, for swiglu)
template <int Tiles, x_form Form>
constexpr int parts_shared_bytes = parts_slot_bytes + parts_x_buffers<Tiles, Form> * parts_x_floats<Tiles> * 4 + parts_block_warps * parts_slots * 8;

// Where the parts of a group meet: each part's totals (part, row, feature), each part's sums of
// squares of a normed row (group, part, row), and a counter a group (zero between launches).
struct matvec_scratch {
  float* partials = nullptr;
  float* squares = nullptr;
  unsigned* counters = nullptr;
};

// The scratch of every matvec of 2-16 rows, any shape (its bounds above); counters zeroed once.
class matvec_workspace {
 public:
  matvec_workspace()
      : partials_(static_cast<std::size_t>(parts_max_partials) * sizeof(float)),
        squares_(static_cast<std::size_t>(parts_max_groups) * matvec_block_warps * parts_max_rows * sizeof(float)),
        counters_(static_cast<std::size_t>(parts_max_groups) * sizeof(unsigned)) {
    AISP_CUDA_CHECK(cudaMemset(counters_.data(), 0, static_cast<std::size_t>(parts_max_groups) * sizeof(unsigned)));
  }
  [[nodiscard]] matvec_scratch scratch() const {
    return {static_cast<float*>(partials_.data()), static_cast<float*>(squares_.data()), static_cast<unsigned*>(counters_.data())};
  }

 private:
  device_scratch partials_, squares_, counters_;
};

// Issues the copies of split `split` of x, every row of the launch (zeros past the rows or past
// k), into `staged` at the staged row stride: one commit group a thread. A swiglu x is a (rows,
// 2 k) gate_up: the gate into `staged`, up into `up`.
template <int Tiles, x_form Form>
__device__ __forceinline__ void stage_part_split(const float* x, int rows, int k, int split, float* staged, float* up) {
  constexpr int quads_a_row = matvec_split_k / 4;
  const std::int64_t row_stride = Form == x_form::swiglu ? 2 * static_cast<std::int64_t>(k) : k;
  for (int q = static_cast<int>(threadIdx.x); q < Tiles * matvec_tile_rows * quads_a_row; q += parts_block_warps * 32) {
    const int row = q / quads_a_row;
    const int at = split * matvec_split_k + (q % quads_a_row) * 4;
    const bool inside = row < rows && at < k;  // k % 8 == 0: a quad is all inside or all past k
    const float* from = inside ? x + row * row_stride + at : x;
    const int to = row * parts_x_stride + (q % quads_a_row) * 4;
    ptx::cp_async_zfill16(staged + to, from, inside ? 16 : 0);
    if constexpr (Form == x_form::swiglu) ptx::cp_async_zfill16(up + to, inside ? from + k : x, inside ? 16 : 0);
  }
  ptx::cp_async_commit();
}

// Note [folded swiglu] at 2-16 rows: each thread turns the gate it copied into swiglu_value(gate,
// up) in place, as swiglu_rows_kernel computes it (the same bits), once its copies have landed.
template <int Tiles>
__device__ __forceinline__ void swiglu_staged_split(float* staged, const float* up) {
  constexpr int quads_a_row = matvec_split_k / 4;
  for (int q = static_cast<int>(threadIdx.x); q < Tiles * matvec_tile_rows * quads_a_row; q += parts_block_warps * 32) {
    const int at = (q / quads_a_row) * parts_x_stride + (q % quads_a_row) * 4;
    float4 gate = *reinterpret_cast<const float4*>(staged + at);
    const float4 u = *reinterpret_cast<const float4*>(up + at);
    gate = make_float4(swiglu_value(gate.x, u.x), swiglu_value(gate.y, u.y), swiglu_value(gate.z, u.z), swiglu_value(gate.w, u.w));
    *reinterpret_cast<float4*>(staged + at) = gate;
  }
}

// y as matvec_mma_kernel defines it, at 2 to 8 Tiles rows. blockIdx.x: a group of 8 tiles (a
// warp each); blockIdx.y: a part of plan.splits_a_warp splits. Launched as a dependent launch.
template <int Tiles, x_form Form>
__global__ void __launch_bounds__(parts_block_warps * 32, 2)
    matvec_parts_kernel(const uint4* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, int n_out, int k, int rows,
                        bool accumulate, float output_scale, float eps, matvec_plan plan, matvec_scratch scratch) {
  constexpr bool normed = Form == x_form::rms_normed;
  extern __shared__ __align__(128) unsigned char parts_shared[];
  auto* slots = reinterpret_cast<uint4*>(parts_shared);  // [warp][slot][half a split]
  auto* staged = reinterpret_cast<float*>(parts_shared + parts_slot_bytes);  // [2][row][parts_x_stride]
  auto* barriers = reinterpret_cast<std::uint64_t*>(staged + parts_x_buffers<Tiles, Form> * parts_x_floats<Tiles>);  // [warp][slot]
  float* up = staged + 2 * parts_x_floats<Tiles>;  // [2][row][parts_x_stride], swiglu's up
  __shared__ float row_squares[parts_max_rows];  // a normed row's sum of squares over the part
  __shared__ unsigned ticket;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int tiles = (n_out + matvec_tile_features - 1) / matvec_tile_features;
  const int tile = static_cast<int>(blockIdx.x) * parts_block_warps + warp;
  const bool works = tile < tiles;
  const int part = static_cast<int>(blockIdx.y);
  const int parts = static_cast<int>(gridDim.y);
  const int first_split = part * plan.splits_a_warp;
  const int end_split = min(plan.splits, first_split + plan.splits_a_warp);
  const int halves = works ? 2 * (end_split - first_split) : 0;
  const uint4* tile_w = w + static_cast<std::int64_t>(min(tile, tiles - 1)) * plan.splits * packed_quads_a_split +
                        static_cast<std::int64_t>(first_split) * packed_quads_a_split;
  uint4* my_slots = slots + warp * parts_slots * parts_half_quads;
  std::uint64_t* my_barriers = barriers + warp * parts_slots;
  const auto issue_half = [&](int h) {  // half h of the warp's walk into slot h % 2, by lane 0
    if (lane == 0 && h < halves) {
      ptx::mbarrier_arrive_expect_tx(my_barriers + h % parts_slots, parts_half_quads * 16);
      ptx::bulk_copy_to_shared(my_slots + (h % parts_slots) * parts_half_quads, tile_w + static_cast<std::int64_t>(h) * parts_half_quads,
                               parts_half_quads * 16, my_barriers + h % parts_slots);
    }
  };
  if (lane == 0) {
    for (int s = 0; s < parts_slots; ++s) ptx::mbarrier_init(my_barriers + s, 1);
    ptx::fence_mbarrier_init();
  }
  __syncwarp();
  for (int h = 0; h < parts_slots; ++h) issue_half(h);  // Note [weights before the wait]
  ptx::let_next_kernel_start();
  ptx::wait_for_previous_kernel();
  stage_part_split<Tiles, Form>(x, rows, k, first_split, staged, up);
  float total[Tiles][4] = {};
  float part_squares[2] = {};  // rows warp and warp + 8 (normed)
  for (int s = first_split; s < end_split; ++s) {
    const int step = s - first_split;
    if (s + 1 < end_split) {
      const int next = ((step + 1) % 2) * parts_x_floats<Tiles>;
      stage_part_split<Tiles, Form>(x, rows, k, s + 1, staged + next, up + next);
      ptx::cp_async_wait<1>();
    } else {
      ptx::cp_async_wait<0>();
    }
    if constexpr (Form == x_form::swiglu) swiglu_staged_split<Tiles>(staged + (step % 2) * parts_x_floats<Tiles>, up + (step % 2) * parts_x_floats<Tiles>);
    __syncthreads();  // split s of x has landed (and is swiglu'd), every thread's copies
    const float* xs = staged + (step % 2) * parts_x_floats<Tiles>;
    if constexpr (normed) {  // Note [norm as an output scale]: lane l's group l, then warp_sum's tree
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = warp + half * parts_block_warps;
        if (row >= Tiles * matvec_tile_rows) break;
        const auto* v = reinterpret_cast<const float4*>(xs + row * parts_x_stride + lane * 8);
        const float4 a = v[0], b = v[1];
        const float values[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
        const float split_sum = warp_sum(group_squares(values));
        part_squares[half] = step == 0 ? split_sum : __fadd_rn(part_squares[half], split_sum);
      }
    }
    if (works) {
      const int split_end = min(k, (s + 1) * matvec_split_k);
      matvec_acc acc[Tiles] = {};
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int h = 2 * step + half;
        ptx::mbarrier_wait_parity(my_barriers + h % parts_slots, static_cast<unsigned>(h / parts_slots) & 1u);
        const uint4* slot = my_slots + (h % parts_slots) * parts_half_quads;
        constexpr int chunks = matvec_loads_in_flight / 2;
        uint4 top[chunks], bottom[chunks];
#pragma unroll
        for (int c = 0; c < chunks; ++c) {
          top[c] = slot[c * 64 + lane];
          bottom[c] = slot[c * 64 + 32 + lane];
        }
        __syncwarp();
        if (lane == 0) ptx::fence_proxy_async_shared();  // the slot's reads before the copy that refills it
        issue_half(h + parts_slots);
#pragma unroll
        for (int c = 0; c < chunks; ++c) {
          const int u = half * chunks + c;
          if (s * matvec_split_k + u * matvec_chunk_k >= split_end) break;  // as matvec_mma_kernel: the same for the warp
#pragma unroll
          for (int t = 0; t < Tiles; ++t) {
            std::uint32_t hi[8], lo[8];
            static_cast<void>(x_pieces(xs, t * matvec_tile_rows + lane / 4, Tiles * matvec_tile_rows, parts_x_stride,
                                       u * matvec_chunk_k + (lane % 4) * 8, true, hi, lo));
            mma_chunk_pieces(top[c], bottom[c], hi, lo, acc[t]);
          }
        }
      }
#pragma unroll
      for (int t = 0; t < Tiles; ++t) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float split_total = __fadd_rn(__fadd_rn(acc[t][0][0][i], acc[t][0][1][i]), __fadd_rn(acc[t][1][0][i], acc[t][1][1][i]));
          total[t][i] = step == 0 ? split_total : __fadd_rn(total[t][i], split_total);
        }
      }
    }
    __syncthreads();  // every warp is done with this buffer before the next split's copies refill it
  }
  if constexpr (normed) {
    if (lane == 0) {
      row_squares[warp] = part_squares[0];
      if (warp + parts_block_warps < parts_max_rows) row_squares[warp + parts_block_warps] = part_squares[1];
    }
    __syncthreads();
  }
  const float scale = matvec_scale(output_scale, k);
  const auto store = [&](int t, int i, float sum, float squares) {  // matvec_mma_kernel's end of a row's sum
    const int feature = tile * matvec_tile_features + lane / 4 + (i >= 2 ? 8 : 0);
    const int row = t * matvec_tile_rows + 2 * (lane % 4) + i % 2;
    if (row >= rows || feature >= n_out) return;
    if constexpr (normed) sum = __fmul_rn(sum, 1.0f / sqrtf(squares / static_cast<float>(k) + eps));
    store_matvec(y + static_cast<std::int64_t>(row) * n_out + feature, sum, scale, accumulate);
  };
  const auto row_of = [&](int t, int i) { return t * matvec_tile_rows + 2 * (lane % 4) + i % 2; };
  if (parts == 1) {
    if (!works) return;
#pragma unroll
    for (int t = 0; t < Tiles; ++t) {
#pragma unroll
      for (int i = 0; i < 4; ++i) store(t, i, total[t][i], normed ? row_squares[row_of(t, i)] : 0.0f);
    }
    return;
  }
  // The part's totals (and a normed row's squares, by the group's first block) into the scratch;
  // the group's last block to finish adds the parts in order.
  const auto partial_at = [&](int p, int t, int i) {
    const int feature = tile * matvec_tile_features + lane / 4 + (i >= 2 ? 8 : 0);
    return scratch.partials + (static_cast<std::int64_t>(p) * parts_max_rows + row_of(t, i)) * n_out + feature;
  };
  const auto inside = [&](int t, int i) { return row_of(t, i) < rows && tile * matvec_tile_features + lane / 4 + (i >= 2 ? 8 : 0) < n_out; };
  if (works) {
#pragma unroll
    for (int t = 0; t < Tiles; ++t) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        if (inside(t, i)) *partial_at(part, t, i) = total[t][i];
      }
    }
  }
  float* group_squares_of = scratch.squares + static_cast<std::int64_t>(blockIdx.x) * matvec_block_warps * parts_max_rows;
  if (normed && threadIdx.x < rows) group_squares_of[part * parts_max_rows + threadIdx.x] = row_squares[threadIdx.x];
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) ticket = atomicAdd(scratch.counters + blockIdx.x, 1u);
  __syncthreads();
  if (ticket != static_cast<unsigned>(parts - 1)) return;
  __threadfence();  // the other parts' totals, seen after their counts
  if (threadIdx.x == 0) scratch.counters[blockIdx.x] = 0;  // for the next launch, which waits for this grid
  if (!works) return;
  // A tile's totals of every part asked for at once (a part's load waiting for the one before
  // cost an L2 trip each), then added in part order; a row's squares likewise (rows 2 (lane % 4)
  // and the next: i % 2).
#pragma unroll
  for (int t = 0; t < Tiles; ++t) {
    float parts_of[4][matvec_block_warps];
    float squares_of[2][matvec_block_warps];
#pragma unroll
    for (int p = 0; p < matvec_block_warps; ++p) {
#pragma unroll
      for (int i = 0; i < 4; ++i) parts_of[i][p] = p < parts && inside(t, i) ? __ldcg(partial_at(p, t, i)) : 0.0f;
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        squares_of[i][p] = normed && p < parts && row_of(t, i) < rows ? __ldcg(group_squares_of + p * parts_max_rows + row_of(t, i)) : 0.0f;
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float sum = parts_of[i][0];
      float squares = squares_of[i % 2][0];
#pragma unroll
      for (int p = 1; p < matvec_block_warps; ++p) {
        if (p >= parts) break;
        sum = __fadd_rn(sum, parts_of[i][p]);
        squares = __fadd_rn(squares, squares_of[i % 2][p]);
      }
      if (inside(t, i)) store(t, i, sum, squares);
    }
  }
}

template <int Tiles, x_form Form>
void launch_matvec_parts(const matvec_plan& plan, const uint4* w, const float* x, float* y, int n_out, int k, int rows, bool accumulate,
                         float output_scale, float eps, const matvec_scratch& scratch, cudaStream_t stream) {
  const int tiles = (n_out + matvec_tile_features - 1) / matvec_tile_features;
  const int groups = (tiles + parts_block_warps - 1) / parts_block_warps;
  const int parts = (plan.splits + plan.splits_a_warp - 1) / plan.splits_a_warp;
  AISP_EXPECTS(parts == 1 || (groups <= parts_max_groups && parts * tiles <= matvec_target_warps),
               "labs/decode: a matvec's parts outgrow the matvec workspace");
  launch_dependent(matvec_parts_kernel<Tiles, Form>, dim3(static_cast<unsigned>(groups), static_cast<unsigned>(parts)),
                   dim3(parts_block_warps * 32), static_cast<std::size_t>(parts_shared_bytes<Tiles, Form>), stream, w, x, y, n_out, k, rows,
                   accumulate, output_scale, eps, plan, scratch);
}

template <int Tiles, x_form Form>
void allow_matvec_parts_shared_bytes() {
  AISP_CUDA_CHECK(cudaFuncSetAttribute(matvec_parts_kernel<Tiles, Form>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       parts_shared_bytes<Tiles, Form>));
}

inline void prepare_matvec_parts_launches() {
  allow_matvec_parts_shared_bytes<1, x_form::plain>();
  allow_matvec_parts_shared_bytes<1, x_form::rms_normed>();
  allow_matvec_parts_shared_bytes<1, x_form::swiglu>();
  allow_matvec_parts_shared_bytes<2, x_form::plain>();
  allow_matvec_parts_shared_bytes<2, x_form::rms_normed>();
  allow_matvec_parts_shared_bytes<2, x_form::swiglu>();
}

}  // namespace
}  // namespace aisp::decode
