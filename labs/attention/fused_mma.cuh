// Steps 2-3: one fused kernel, tiled with an online softmax, on the tensor cores through
// mma.sync, with FlashAttention-2's work partitioning: each block owns 64 query rows of one head
// and each of its 4 warps owns 16 of them for the whole pass over K and V, so the softmax
// statistics and the output stay in the warp's registers and no warp waits for another's partial
// sums. K and V tiles of 64 keys stream through a double-buffered cp.async ring. S and P never
// leave the chip: HBM sees Q, K, V and O once per block. Causal blocks stop at the diagonal; with
// a sliding window (ch18:sliding_window) they also start at the window of their first query,
// unless the problem asks to compute those tiles and mask them.
//
// Note [fused attention fragments]: per 64-key tile a warp computes S (16 x 64) = Q_w (16 x d)
// K_tile^T with Q_w's A fragments held in registers and K's B fragments from ldmatrix.x4 (K is
// (key, d): K-major, like labs/gemm's B). The S accumulators of n-tiles 2c and 2c + 1 are exactly
// the A fragment of P's 16-key chunk c (rows g and g + 8, keys 2t, 2t + 1 and 2t + 8, 2t + 9),
// so P goes from accumulators to bf16 A fragments without shared memory. V is (key, d): along k
// (keys) it is not contiguous, so ldmatrix.x4.trans gives its B fragments.
//
// Note [online softmax]: scores are kept in log2 units (x scale x log2 e, so exp2f is a MUFU op
// plus the handling of results below 2^-126; the wgmma steps use ex2.approx.ftz alone). Per row, m is the running max and l the running sum of exp2(s - m); a new tile with a
// larger max rescales l and the output accumulators by exp2(m_old - m_new). Each thread holds
// 16 of a row's 64 scores per tile; the quad of 4 lanes that shares the row reduces the max with
// two shuffles; l stays a per-thread partial sum until the end. A row whose scores so far are all
// masked keeps m = -inf and subtracts 0 instead, so no -inf - -inf NaN arises.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "aisp/async_copy.cuh"
#include "aisp/check.hpp"
#include "aisp/mma_sync.cuh"
#include "attention_problem.cuh"

namespace aisp::labs_attention {
// Note [one kernel per unit]: labs/attention and ch18 both include this header. Its kernel
// template, instantiated in both, must not be one symbol: the linker merged the two host-side
// copies of fused_attention_mma<128> and launch_fused_attention<128>, and the lab's worker then
// launched through ch18's copy a kernel whose shared-memory opt-in was never made
// (cudaErrorInvalidValue, H100, 2026-11-27). In an unnamed namespace each unit has its own.
namespace {

template <int Dim>
struct fused_tiles {
  static constexpr int warps = 4;
  static constexpr int threads = warps * 32;
  static constexpr int block_q = warps * 16;
  static constexpr int block_kv = 64;
  // A row of 16-byte chunks plus one: 8 consecutive rows start 16 bytes apart modulo 128, so each
  // ldmatrix phase touches 8 distinct bank quads.
  static constexpr int stride = Dim + 8;
  static constexpr int tile_elements = block_kv * stride;
  static constexpr std::size_t shared_bytes = sizeof(__nv_bfloat16) * (block_q * stride + 2 * 2 * tile_elements);
};

// rows x Dim of a (seq, Dim) matrix from row `first`, into shared rows of `stride`; rows past the
// sequence are zero-filled.
template <int Dim, int Rows>
__device__ __forceinline__ void load_rows(__nv_bfloat16* shared, const __nv_bfloat16* matrix, int first, int seq) {
  constexpr int chunks_per_row = Dim / 8;
  for (int chunk = threadIdx.x; chunk < Rows * chunks_per_row; chunk += fused_tiles<Dim>::threads) {
    const int row = chunk / chunks_per_row;
    const int column = (chunk % chunks_per_row) * 8;
    const bool inside = first + row < seq;
    const __nv_bfloat16* source = inside ? matrix + static_cast<std::size_t>(first + row) * Dim + column : matrix;
    ptx::cp_async_zfill16(shared + row * fused_tiles<Dim>::stride + column, source, inside ? 16 : 0);
  }
}

template <int Dim>
__global__ void __launch_bounds__(fused_tiles<Dim>::threads) fused_attention_mma(attention_problem p) {
  using tiles = fused_tiles<Dim>;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  auto* const q_tile = reinterpret_cast<__nv_bfloat16*>(shared_raw);
  auto* const kv_ring = q_tile + tiles::block_q * tiles::stride;  // stage s: K at 2s, V at 2s + 1
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int g = lane / 4;  // Note [m16n8k16 fragments]
  const int t = lane % 4;
  const int q0 = blockIdx.x * tiles::block_q;
  const int head = blockIdx.y;
  const int batch = blockIdx.z;
  const int kv_head = head / p.group;
  // Note [variable lengths]: with offsets, the sequence has `keys` tokens. Packed, its rows start
  // at offsets[batch] in each head's (total, d) slab and a block past them has nothing to do.
  // Padded (the padding baseline), it keeps the (b, h, seq, d) rows: keys past `keys` are masked,
  // and every query row up to `seq`, padding included, is computed and stored.
  int keys = p.seq;
  int rows = p.seq;
  std::size_t q_row0 = (static_cast<std::size_t>(batch) * p.heads() + head) * p.seq;
  std::size_t kv_row0 = (static_cast<std::size_t>(batch) * p.kv_heads + kv_head) * p.seq;
  if (p.offsets != nullptr) {
    const int start = p.offsets[batch];
    keys = p.offsets[batch + 1] - start;
    if (p.packed) {
      rows = keys;
      q_row0 = static_cast<std::size_t>(head) * p.total + start;
      kv_row0 = static_cast<std::size_t>(kv_head) * p.total + start;
    }
  }
  if (q0 >= rows) return;  // the whole block: before any barrier
  const __nv_bfloat16* q = p.q + q_row0 * Dim;
  const __nv_bfloat16* k = p.k + kv_row0 * Dim;
  const __nv_bfloat16* v = p.v + kv_row0 * Dim;
  const int kv_end = p.causal ? min(keys, q0 + tiles::block_q) : keys;  // causal: no tile wholly above the diagonal
  const int kv_tiles = (kv_end + tiles::block_kv - 1) / tiles::block_kv;  // one past the last tile
  // A sliding window: no tile wholly before the window of the block's first query.
  const int first_tile = p.window > 0 && p.skip_outside_window ? max(0, q0 - p.window + 1) / tiles::block_kv : 0;

  load_rows<Dim, tiles::block_q>(q_tile, q, q0, rows);
  load_rows<Dim, tiles::block_kv>(kv_ring, k, first_tile * tiles::block_kv, keys);
  load_rows<Dim, tiles::block_kv>(kv_ring + tiles::tile_elements, v, first_tile * tiles::block_kv, keys);
  ptx::cp_async_commit();

  unsigned int q_fragments[Dim / 16][4];
  float out[Dim / 8][4] = {};
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.0f, 0.0f};
  const float scale_log2 = p.scale * 1.4426950408889634f;

  for (int tile = first_tile, step = 0; tile < kv_tiles; ++tile, ++step) {
    if (tile + 1 < kv_tiles) {  // the next tile streams in while this one is used
      __nv_bfloat16* next = kv_ring + ((step + 1) % 2) * 2 * tiles::tile_elements;
      load_rows<Dim, tiles::block_kv>(next, k, (tile + 1) * tiles::block_kv, keys);
      load_rows<Dim, tiles::block_kv>(next + tiles::tile_elements, v, (tile + 1) * tiles::block_kv, keys);
      ptx::cp_async_commit();
      ptx::cp_async_wait<1>();
    } else {
      ptx::cp_async_wait<0>();
    }
    __syncthreads();
    if (step == 0) {
#pragma unroll
      for (int kk = 0; kk < Dim / 16; ++kk) {
        const __nv_bfloat16* row = q_tile + (warp * 16 + (lane & 15)) * tiles::stride + kk * 16 + (lane >> 4) * 8;
        ptx::ldmatrix_x4(q_fragments[kk], ptx::shared_address(row));
      }
    }
    const __nv_bfloat16* k_tile = kv_ring + (step % 2) * 2 * tiles::tile_elements;
    const __nv_bfloat16* v_tile = k_tile + tiles::tile_elements;
    const int kv0 = tile * tiles::block_kv;

    // S = Q_w K^T: 8 n-tiles of 8 keys (Note [fused attention fragments]).
    float scores[tiles::block_kv / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < Dim / 16; ++kk) {
#pragma unroll
      for (int pair = 0; pair < tiles::block_kv / 16; ++pair) {
        unsigned int b[4];
        const __nv_bfloat16* row = k_tile + (pair * 16 + ((lane & 7) | ((lane >> 4) << 3))) * tiles::stride + kk * 16 + ((lane >> 3) & 1) * 8;
        ptx::ldmatrix_x4(b, ptx::shared_address(row));
        const unsigned int first[2] = {b[0], b[1]};
        const unsigned int second[2] = {b[2], b[3]};
        ptx::mma_bf16_16816(scores[2 * pair], q_fragments[kk], first);
        ptx::mma_bf16_16816(scores[2 * pair + 1], q_fragments[kk], second);
      }
    }

    // Masks, then the online softmax (Note [online softmax]); half 0 is row g, half 1 row g + 8.
    const int warp_q0 = q0 + warp * 16;  // the warp's first query; its last is warp_q0 + 15
    const bool needs_mask = kv0 + tiles::block_kv > keys || (p.causal && kv0 + tiles::block_kv - 1 > warp_q0) ||
                            (p.window > 0 && kv0 <= warp_q0 + 15 - p.window);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int query = q0 + warp * 16 + g + 8 * half;
      float tile_max = -INFINITY;
#pragma unroll
      for (int n = 0; n < tiles::block_kv / 8; ++n) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& s = scores[n][2 * half + e];
          const int key = kv0 + n * 8 + 2 * t + e;
          const bool masked = key >= keys || (p.causal && key > query) || (p.window > 0 && key <= query - p.window);
          s = needs_mask && masked ? -INFINITY : s * scale_log2;
          tile_max = fmaxf(tile_max, s);
        }
      }
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffU, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffU, tile_max, 2));
      const float new_max = fmaxf(row_max[half], tile_max);
      const float subtract = new_max == -INFINITY ? 0.0f : new_max;
      const float rescale = exp2f(row_max[half] - subtract);
      row_max[half] = new_max;
      float sum = 0.0f;
#pragma unroll
      for (int n = 0; n < tiles::block_kv / 8; ++n) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& s = scores[n][2 * half + e];
          s = exp2f(s - subtract);
          sum += s;
        }
      }
      row_sum[half] = row_sum[half] * rescale + sum;
#pragma unroll
      for (int n = 0; n < Dim / 8; ++n) {
        out[n][2 * half] *= rescale;
        out[n][2 * half + 1] *= rescale;
      }
    }

    // O += P V: P's A fragments straight from the score accumulators, V's B fragments by
    // ldmatrix.x4.trans (keys 16c + 8 (j & 1) + l % 8, dims 16 pair + 8 (j >> 1) for matrix j).
#pragma unroll
    for (int c = 0; c < tiles::block_kv / 16; ++c) {
      const unsigned int a[4] = {ptx::pack_bf16(scores[2 * c][0], scores[2 * c][1]),
                                 ptx::pack_bf16(scores[2 * c][2], scores[2 * c][3]),
                                 ptx::pack_bf16(scores[2 * c + 1][0], scores[2 * c + 1][1]),
                                 ptx::pack_bf16(scores[2 * c + 1][2], scores[2 * c + 1][3])};
#pragma unroll
      for (int pair = 0; pair < Dim / 16; ++pair) {
        unsigned int b[4];
        const int matrix = lane >> 3;
        const __nv_bfloat16* row = v_tile + (c * 16 + (matrix & 1) * 8 + (lane & 7)) * tiles::stride + pair * 16 + (matrix >> 1) * 8;
        ptx::ldmatrix_x4_trans(b, ptx::shared_address(row));
        const unsigned int first[2] = {b[0], b[1]};
        const unsigned int second[2] = {b[2], b[3]};
        ptx::mma_bf16_16816(out[2 * pair], a, first);
        ptx::mma_bf16_16816(out[2 * pair + 1], a, second);
      }
    }
    __syncthreads();  // the next iteration's loads overwrite the stage just read
  }

  store_normalized_rows<Dim>(out, row_sum, p.o + q_row0 * Dim, q0 + warp * 16, rows, g, t);
}

// setup(): the shared-memory opt-in (above 48 KiB), once, not in a timed call.
template <int Dim>
void prepare_fused_attention() {
  AISP_CUDA_CHECK(cudaFuncSetAttribute(fused_attention_mma<Dim>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(fused_tiles<Dim>::shared_bytes)));
}

template <int Dim>
void launch_fused_attention(const attention_problem& p, cudaStream_t stream) {
  using tiles = fused_tiles<Dim>;
  const dim3 grid(static_cast<unsigned>((p.seq + tiles::block_q - 1) / tiles::block_q), static_cast<unsigned>(p.heads()),
                  static_cast<unsigned>(p.batch));
  fused_attention_mma<Dim><<<grid, tiles::threads, tiles::shared_bytes, stream>>>(p);
  AISP_CHECK_LAUNCH();
}

}  // namespace
}  // namespace aisp::labs_attention
