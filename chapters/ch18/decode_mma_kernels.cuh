// ch18:paged_decode's optimized: the split-K decode of paged_decode_kernels.cuh with both dot
// products over the query group on the tensor cores (mma.sync m16n8k16, bf16 in, fp32 out), K and
// V pages staged through a 3-stage cp.async ring in shared memory, and the softmax updated once
// per 16 tokens instead of once per token. Same grid (split, KV head, sequence), same partial
// records, same decode_combine.
//
// Why: decode_split issues ~90 warp instructions a token (per lane and token 4 x: 8 FMAs, 4
// shuffles, 2 exps, 8 rescale FMAs), so it is bound by instructions as much as by bytes. Here a
// warp issues ~250 (PTX count) per 16 tokens for all (up to 8) query heads at once, 16 ldmatrix,
// 16 mma and its 16 cp.async among them: ~15 a token, which leaves the kernel to the bytes.
//
// Note [decode mma tiles]: a block (4 warps) owns one (sequence, KV head, split of up to
// pages_per_split pages), as decode_split. The ring holds 3 stages of one page each: K and V of
// the page (64 tokens x 128 dims bf16, 16 KB each), copied by all 128 threads with 16-byte
// cp.async (one 256-byte row is 16 chunks: thread i copies chunk i % 16 of rows i / 16 + 8 j).
// Rows are padded to 136 values (272 bytes): 8 consecutive rows then start 16 bytes apart modulo
// 128, so each 8-row phase of an ldmatrix hits 8 distinct bank quads (no swizzle, so every
// fragment address is a per-thread base plus a compile-time offset). While a page is computed
// the next two are in flight: 64 KB a block, two blocks an SM (102 KB of shared memory each).
// Warp w takes tokens 16 w .. 16 w + 15 of every page and keeps its own online softmax; the
// four warps merge through shared memory at the end, as decode_split's half-warps do.
//
// Note [decode mma fragments]: mma.sync.m16n8k16 (PTX ISA; labs/gemm Note [m16n8k16 fragments])
// with lane = 4 g + t: A (16 x 16, row-major) a0 = A[g][2t, 2t+1], a1 = A[g+8][2t, 2t+1],
// a2 = A[g][2t+8, 2t+9], a3 = A[g+8][2t+8, 2t+9]; B (16 x 8) b0 = B[2t, 2t+1][g],
// b1 = B[2t+8, 2t+9][g]; C (16 x 8) c0, c1 = C[g][2t, 2t+1], c2, c3 = C[g+8][2t, 2t+1]; a register
// holds two bf16, the lower k in the low half.
//   S^T (16 tokens x 8 columns) = K_tile (16 x 128) . Q^T (128 x 8), 8 k-steps of 16 dims.
//     A = K: rows (tokens) are contiguous along k (dims), so plain ldmatrix.x4 gives a0..a3 when
//     lane l addresses token l % 16, 16-byte chunk 2 ks + l / 16 (matrices: tokens 0-7 / 8-15 x
//     dims 0-7 / 8-15 of the k-step).
//     B = Q^T: b0 = q[head of column g][16 ks + 2t, +1]: one 32-bit load of adjacent q values,
//     done once; the 16 registers live for the whole kernel.
//   S^T's C fragment holds tokens (g, g+8) x columns (2t, 2t+1). For P V the probabilities must
//   be a B fragment, tokens along k: b0 = P^T[tokens 2t, 2t+1][column g]. That is the transpose
//   of the C layout within each 8 x 8 block, which is what movmatrix.m8n8.trans.b16 does in
//   registers: given the 8 x 8 matrix M with lane (g, t) holding M[g][2t, 2t+1], it returns
//   M[2t][g], M[2t+1][g] to lane (g, t). So pack (token g, columns 2t, 2t+1) to bf16x2 and
//   movmatrix gives b0; tokens g + 8 give b1. No shared memory round trip.
//   O^T (128 dims x 8 columns) += V^T (128 x 16 tokens) . P^T (16 x 8), 8 m-tiles of 16 dims.
//     A = V^T: along k (tokens) V is strided, so ldmatrix.x4.trans: it hands lane (g, t) rows
//     2t, 2t+1 of column g of each stored 8 x 8 matrix, i.e. V[tokens 2t, 2t+1][dim g], which is
//     a0 when the stored rows are tokens. Matrices: tokens 0-7 x dims 0-7 (a0), tokens 0-7 x
//     dims 8-15 (a1), tokens 8-15 x dims 0-7 (a2), tokens 8-15 x dims 8-15 (a3): lane l
//     addresses token l % 8 + 8 (l / 16), chunk 2 mt + (l / 8) % 2.
//   O^T's C fragment: dims (16 mt + g, + 8) x columns (2t, 2t+1); 32 fp32 registers a lane.
//
// Note [P in two bf16 halves]: P enters the tensor core as bf16 (8 bits of mantissa), unlike
// decode_split's fp32 weights, and Note [decode tolerance] (atol 1e-4, rtol 1e-2) has no room for
// it. Simulated in C++ against fp64 (uniform bf16 q, K, V in [-1, 1), d 128, bf16 output, 100-2000
// heads a length): with bf16 P, 2.9% of the elements fail at 64 tokens (worst 5.5x the tolerance),
// 1.0% at 192, 0.08% at 576, 1 in 25,600 at 1088; with fp32 P none (worst 37% of it). So P = hi +
// lo, hi = bf16(p), lo = bf16(p - hi): 16 bits of mantissa, and the same simulation gives what
// fp32 P gives (0 failures, worst 37%). With a group of 4 or fewer the lo halves ride free in the
// padding columns: column n < 4 carries hi of head n and column n + 4 carries lo of head n (Q^T
// repeats head n in column n + 4, so both columns get the same scores; were they to differ in a
// last bit, lo would be off by ~1e-7 of itself), and head n's output is the sum of O^T's columns n
// and n + 4 (lanes t and t ^ 2: one shuffle at the end). With a group of 8 every column is a head,
// and lo takes a second mma per m-tile. The running sums l add the fp32 p.
//
// fp8 (ch18:fp8_kv_decode): decode_mma_fp8.cuh, the same kernel on 8 KB pages, fragments widened
// by cvt.rn.f16x2.e4m3x2, Q and P in fp16, mma .f16 (Note [fp8 decode fragments]).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "aisp/async_copy.cuh"
#include "aisp/check.hpp"
#include "aisp/mma_sync.cuh"
#include "paged_decode_kernels.cuh"

namespace aisp::ch18 {
namespace {  // as paged_decode_kernels.cuh

constexpr int mma_page = 64;  // tokens a stage; the kernel takes only this page size
constexpr int mma_stages = 3;
constexpr int mma_warps = 4;
constexpr int mma_threads = mma_warps * 32;
constexpr int mma_row = head_dim + 8;  // padded shared row (Note [decode mma tiles])
constexpr int mma_tile_values = mma_page * mma_row;
constexpr std::size_t mma_shared_bytes = sizeof(__nv_bfloat16) * 2 * mma_tile_values * mma_stages;
static_assert(mma_page == mma_warps * 16, "a warp takes 16 tokens of every page");
static_assert(pages_per_split <= 32, "a split's page numbers sit one a lane");
static_assert(mma_threads % 16 == 0 && mma_page % (mma_threads / 16) == 0, "rows copied evenly");

// action(std::integral_constant<int, G>) for each query group G a split kernel is built for.
template <class Action>
void for_each_group(Action action) {
  action(std::integral_constant<int, 1>{});
  action(std::integral_constant<int, 4>{});
  action(std::integral_constant<int, 8>{});
}

// The transpose of an 8 x 8 b16 matrix held in fragment layout (Note [decode mma fragments]).
__device__ __forceinline__ std::uint32_t movmatrix_trans(std::uint32_t x) {
  std::uint32_t y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}

// 2^x on the MUFU alone: 2^-22 relative; ex2(-inf) = 0, which the first rescale relies on.
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// The two bf16 of a packed pair, widened.
__device__ __forceinline__ float low_of(std::uint32_t pair) { return __uint_as_float(pair << 16); }
__device__ __forceinline__ float high_of(std::uint32_t pair) { return __uint_as_float(pair & 0xffff0000U); }

// p - bf16(p) for the two values packed in `hi`, packed to bf16 (Note [P in two bf16 halves]).
__device__ __forceinline__ std::uint32_t low_halves(float p0, float p1, std::uint32_t hi) {
  return ptx::pack_bf16(p0 - low_of(hi), p1 - high_of(hi));
}

// The online softmax once per 16 tokens (a warp's S^T tile, C layout: tokens g, g + 8 x columns
// 2t, 2t + 1): the column max over the 8 lanes g that share t, the weights 2^(s scale - max), the
// running sums of this lane's tokens, and the output rescaled (out: O^T's 8 m-tiles).
__device__ __forceinline__ void softmax_16_tokens(const float (&score)[4], float scale_log2, float (&running_max)[2],
                                                  float (&running_sum)[2], float (&out)[8][4], float (&weight)[4]) {
  float rescale[2];
  float new_max[2];
#pragma unroll
  for (int c = 0; c < 2; ++c) {
    float tile_max = fmaxf(score[c], score[c + 2]);
#pragma unroll
    for (int offset = 4; offset < 32; offset *= 2) tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffU, tile_max, offset));
    new_max[c] = fmaxf(running_max[c], tile_max * scale_log2);  // scale > 0: max commutes with it
    rescale[c] = ex2(running_max[c] - new_max[c]);
    running_max[c] = new_max[c];
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) weight[e] = ex2(fmaf(score[e], scale_log2, -new_max[e % 2]));
#pragma unroll
  for (int c = 0; c < 2; ++c) running_sum[c] = running_sum[c] * rescale[c] + weight[c] + weight[c + 2];
#pragma unroll
  for (int mt = 0; mt < 8; ++mt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) out[mt][e] *= rescale[e % 2];
  }
}

// The end of a split for a block of mma_warps warps: each warp's sums over its lanes g, then the
// warps merged through shared memory (free once every warp is past its last page) into the split's
// partial record per head, decode_split's format (thread = dim). `dim_of(mt, e)` is the head dim
// of out[mt][e]; lanes with `holds_heads` hold real columns 2t, 2t + 1.
template <int Group, std::size_t SharedBytes, class DimOf>
__device__ __forceinline__ void merge_warps_to_record(const float (&out)[8][4], const float (&running_max)[2], float (&running_sum)[2],
                                                      bool holds_heads, DimOf dim_of, unsigned char* shared_raw,
                                                      float* record_of_head0, int splits) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int g = lane / 4;
  const int t = lane % 4;
#pragma unroll
  for (int c = 0; c < 2; ++c) {
#pragma unroll
    for (int offset = 4; offset < 32; offset *= 2) running_sum[c] += __shfl_xor_sync(0xffffffffU, running_sum[c], offset);
  }
  ptx::cp_async_wait<0>();
  __syncthreads();
  constexpr int merge_row = head_dim + 4;  // heads 2t, 2t + 1 of the 8 lanes g: distinct banks
  static_assert(sizeof(float) * mma_warps * Group * (merge_row + 2) <= SharedBytes, "the merge fits in the ring");
  auto* const merge_out = reinterpret_cast<float*>(shared_raw);  // [warp][head][merge_row]
  float* const merge_max = merge_out + mma_warps * Group * merge_row;  // [warp][head]
  float* const merge_sum = merge_max + mma_warps * Group;
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const int head = 2 * t + e % 2;
    if (!holds_heads || head >= Group) continue;
#pragma unroll
    for (int mt = 0; mt < 8; ++mt) merge_out[(warp * Group + head) * merge_row + dim_of(mt, e)] = out[mt][e];
    if (g == 0 && e < 2) {
      merge_max[warp * Group + head] = running_max[e];
      merge_sum[warp * Group + head] = running_sum[e];
    }
  }
  __syncthreads();
  const int dim = static_cast<int>(threadIdx.x);
  constexpr float ln2 = 0.69314718055994531f;
  for (int head = 0; head < Group; ++head) {
    float largest = -INFINITY;
    for (int w = 0; w < mma_warps; ++w) largest = fmaxf(largest, merge_max[w * Group + head]);
    float total = 0.0f;
    float value = 0.0f;
    for (int w = 0; w < mma_warps; ++w) {  // every warp saw 16 tokens of each page: no empty state
      const float weight = ex2(merge_max[w * Group + head] - largest);
      total += merge_sum[w * Group + head] * weight;
      value += merge_out[(w * Group + head) * merge_row + dim] * weight;
    }
    // decode_split's record: 128 partial outputs, the max in natural-log units (decode_combine
    // uses __expf), the sum.
    float* record = record_of_head0 + static_cast<std::size_t>(head) * splits * (head_dim + 2);
    record[dim] = value;
    if (dim == 0) {
      record[head_dim] = largest * ln2;
      record[head_dim + 1] = total;
    }
  }
}

// A split block's place: grid (split, KV head, sequence), its pages, and the split's physical page
// numbers, one a lane, read once: each copy takes its page by shuffle instead of a dependent
// page-table load.
struct split_block {
  int split, kv_head, sequence, page_count, my_page;
};
__device__ __forceinline__ split_block this_split_block(const decode_problem& p) {
  split_block b{};
  b.split = static_cast<int>(blockIdx.x);
  b.kv_head = static_cast<int>(blockIdx.y);
  b.sequence = static_cast<int>(blockIdx.z);
  const int first_page = b.split * pages_per_split;
  b.page_count = min(pages_per_split, p.pages - first_page);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  b.my_page = lane < b.page_count ? p.page_table[static_cast<std::size_t>(b.sequence) * p.pages + first_page + lane] : 0;
  return b;
}

template <int Group>
__global__ void __launch_bounds__(mma_threads, 2) decode_split_mma(decode_problem p, float* partials, int splits) {
  static_assert(Group == 1 || Group == 2 || Group == 4 || Group == 8, "a group pads to the 8 columns of an n8 tile");
  constexpr bool dual = Group <= 4;  // lo halves in columns 4-7 (Note [P in two bf16 halves])
  constexpr float log2e = 1.4426950408889634f;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  auto* const ring = reinterpret_cast<__nv_bfloat16*>(shared_raw);  // stage s: K tile at 2s, V tile at 2s + 1
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const auto [split, kv_head, sequence, page_count, my_page] = this_split_block(p);
  const int copy_row = static_cast<int>(threadIdx.x) / 16;  // rows copy_row + 8 j, chunk threadIdx.x % 16
  const int copy_column = (static_cast<int>(threadIdx.x) % 16) * 8;
  const std::size_t page_values = static_cast<std::size_t>(mma_page) * head_dim;
  const std::size_t in_page = static_cast<std::size_t>(kv_head) * page_values + static_cast<std::size_t>(copy_row) * head_dim + copy_column;
  const auto issue = [&](int page_index) {  // block-uniform call: all lanes reach the shuffle
    const int physical = __shfl_sync(0xffffffffU, my_page, page_index);
    const std::size_t from = static_cast<std::size_t>(physical) * p.kv_heads * page_values + in_page;
    __nv_bfloat16* const k_to = ring + (page_index % mma_stages) * 2 * mma_tile_values + copy_row * mma_row + copy_column;
    __nv_bfloat16* const v_to = k_to + mma_tile_values;
#pragma unroll
    for (int j = 0; j < mma_page / (mma_threads / 16); ++j) {
      constexpr int rows_a_pass = mma_threads / 16;
      ptx::cp_async_zfill16(k_to + j * rows_a_pass * mma_row, p.k_cache + from + static_cast<std::size_t>(j) * rows_a_pass * head_dim, 16);
      ptx::cp_async_zfill16(v_to + j * rows_a_pass * mma_row, p.v_cache + from + static_cast<std::size_t>(j) * rows_a_pass * head_dim, 16);
    }
  };
  // Start the copies before the query loads: the pages are what the block waits for.
#pragma unroll
  for (int s = 0; s < mma_stages - 1; ++s) {
    if (s < page_count) issue(s);
    ptx::cp_async_commit();  // empty groups too: the wait count below stays uniform
  }

  // Q^T's B fragments (Note [decode mma fragments]): column g holds query head g % 4 if dual,
  // else head g; columns without a head hold zeros (their scores are 0, never output).
  const int column_head = dual ? g % 4 : g;
  const bool column_real = column_head < Group;
  const __nv_bfloat16* const q =
      p.q + ((static_cast<std::size_t>(sequence) * p.kv_heads + kv_head) * Group + (column_real ? column_head : 0)) * head_dim + 2 * t;
  unsigned int q_fragment[8][2];
#pragma unroll
  for (int ks = 0; ks < 8; ++ks) {
    q_fragment[ks][0] = column_real ? *reinterpret_cast<const unsigned int*>(q + 16 * ks) : 0U;
    q_fragment[ks][1] = column_real ? *reinterpret_cast<const unsigned int*>(q + 16 * ks + 8) : 0U;
  }
  const float scale_log2 = p.scale * log2e;  // scores in log2 units: exp2 is one MUFU op

  float out[8][4] = {};                    // O^T: m-tile mt, dims 16 mt + g (+ 8) x columns 2t, 2t + 1
  float running_max[2] = {-INFINITY, -INFINITY};  // columns 2t, 2t + 1, log2 units
  float running_sum[2] = {};               // this lane's tokens only; reduced over g at the end
  // Per-lane fragment addresses within a stage (Note [decode mma fragments]).
  const unsigned int ring_address = ptx::shared_address(ring);
  const auto k_lane_offset = static_cast<unsigned int>(sizeof(__nv_bfloat16) * ((warp * 16 + lane % 16) * mma_row + (lane / 16) * 8));
  const auto v_lane_offset = static_cast<unsigned int>(
      sizeof(__nv_bfloat16) * (mma_tile_values + (warp * 16 + lane % 8 + 8 * (lane / 16)) * mma_row + ((lane / 8) % 2) * 8));
  constexpr auto stage_bytes = static_cast<unsigned int>(sizeof(__nv_bfloat16) * 2 * mma_tile_values);
  constexpr unsigned int k_step_bytes = 16 * sizeof(__nv_bfloat16);  // 16 dims: a k-step of K, an m-tile of V

  for (int i = 0; i < page_count; ++i) {
    ptx::cp_async_wait<mma_stages - 2>();  // this thread's copies of page i have landed
    __syncthreads();                        // everyone's have; and page i - 1's stage is free
    if (i + mma_stages - 1 < page_count) issue(i + mma_stages - 1);
    ptx::cp_async_commit();
    const unsigned int stage = ring_address + static_cast<unsigned int>(i % mma_stages) * stage_bytes;

    // S^T = K_tile . Q^T; two accumulator chains halve the dependent mma latency.
    float score_even[4] = {};
    float score_odd[4] = {};
#pragma unroll
    for (int ks = 0; ks < 8; ks += 2) {
      unsigned int a[4];
      ptx::ldmatrix_x4(a, stage + k_lane_offset + static_cast<unsigned int>(ks) * k_step_bytes);
      ptx::mma_bf16_16816(score_even, a, q_fragment[ks]);
      ptx::ldmatrix_x4(a, stage + k_lane_offset + static_cast<unsigned int>(ks + 1) * k_step_bytes);
      ptx::mma_bf16_16816(score_odd, a, q_fragment[ks + 1]);
    }
    float score[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) score[e] = score_even[e] + score_odd[e];

    float weight[4];
    softmax_16_tokens(score, scale_log2, running_max, running_sum, out, weight);

    // P^T's B fragments via movmatrix (Note [decode mma fragments]), hi and lo halves (Note [P in
    // two bf16 halves]).
    const std::uint32_t hi_top = ptx::pack_bf16(weight[0], weight[1]);     // token g
    const std::uint32_t hi_bottom = ptx::pack_bf16(weight[2], weight[3]);  // token g + 8
    const std::uint32_t lo_top = low_halves(weight[0], weight[1], hi_top);
    const std::uint32_t lo_bottom = low_halves(weight[2], weight[3], hi_bottom);
    unsigned int p_hi[2];
    unsigned int p_lo[2];
    if constexpr (dual) {
      const bool lo_column = t >= 2;  // this lane's columns 2t, 2t + 1 are 4-7: lo halves
      p_hi[0] = movmatrix_trans(lo_column ? lo_top : hi_top);
      p_hi[1] = movmatrix_trans(lo_column ? lo_bottom : hi_bottom);
    } else {
      p_hi[0] = movmatrix_trans(hi_top);
      p_hi[1] = movmatrix_trans(hi_bottom);
      p_lo[0] = movmatrix_trans(lo_top);
      p_lo[1] = movmatrix_trans(lo_bottom);
    }

    // O^T += V^T . P^T.
#pragma unroll
    for (int mt = 0; mt < 8; ++mt) {
      unsigned int a[4];
      ptx::ldmatrix_x4_trans(a, stage + v_lane_offset + static_cast<unsigned int>(mt) * k_step_bytes);
      ptx::mma_bf16_16816(out[mt], a, p_hi);
      if constexpr (!dual) ptx::mma_bf16_16816(out[mt], a, p_lo);
    }
  }

  // Fold the lo columns into the hi ones (lanes t and t ^ 2), then merge the warps.
#pragma unroll
  for (int mt = 0; mt < 8; ++mt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if constexpr (dual) out[mt][e] += __shfl_xor_sync(0xffffffffU, out[mt][e], 2);
    }
  }
  const auto dim_of = [g](int mt, int e) { return 16 * mt + g + 8 * (e / 2); };
  float* const record = partials + ((static_cast<std::size_t>(sequence) * p.kv_heads + kv_head) * Group * splits + split) * (head_dim + 2);
  merge_warps_to_record<Group, mma_shared_bytes>(out, running_max, running_sum, !dual || t < 2, dim_of, shared_raw, record, splits);
}

// setup(): the shared-memory opt-in (above 48 KiB), once per kernel, not in a timed call.
inline void prepare_decode_split_mma() {
  for_each_group([](auto group) {
    AISP_CUDA_CHECK(cudaFuncSetAttribute(decode_split_mma<decltype(group)::value>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(mma_shared_bytes)));
  });
}

// partials: splits_of(p) records a query head (setup_split's scratch).
inline void launch_decode_split_mma(const decode_problem& p, float* partials, cudaStream_t stream) {
  // A stage is one page of 64 tokens, 16 a warp: other page sizes take decode_split instead
  // (correct, not tensor-core). Every size ch18:paged_decode declares has pages of 64.
  if (p.page != mma_page) {
    launch_decode_split(p, partials, stream);
    return;
  }
  launch_split_and_combine(p, partials, stream, [&](auto group, dim3 grid, int splits) {
    decode_split_mma<decltype(group)::value><<<grid, mma_threads, mma_shared_bytes, stream>>>(p, partials, splits);
  });
}

}  // namespace
}  // namespace aisp::ch18
