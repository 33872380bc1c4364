// Steps 4 and 5: wgmma fed by TMA, with a producer warpgroup. A CTA owns 128 query rows of one
// head: warpgroup 0 is the producer (one thread issues TMA: Q once, then K and V tiles of 128 keys
// into a 3-stage ring), warpgroups 1 and 2 are consumers owning 64 query rows each. Per tile a
// consumer issues S = Q K^T as 8 (d 128) or 4 (d 64) wgmma m64n128k16 from shared memory, runs
// the online softmax on the accumulators (Note [online softmax] in fused_mma.cuh), and issues
// O += P V as 8 wgmma m64n{d}k16 with P's A fragments in registers (the score accumulators,
// repacked to bf16: aisp/wgmma_shapes.cuh) and V N-major from shared memory. Within a warpgroup
// the softmax waits for its GEMMs; the two consumers overlap each other only as the warp
// scheduler interleaves them. Step 5 overlaps on purpose (Note [softmax overlap]).
//
// Note [softmax overlap]: in step 4 the tensor cores idle while a warpgroup runs its softmax,
// unless the other consumer happens to be in a GEMM. Step 5 software-pipelines each consumer:
// with P of tile j - 1 packed, it issues Q K^T of tile j and P V of tile j - 1 back to back,
// waits for the first group only (wgmma groups complete in order), and runs tile j's softmax
// while P V still runs. It waits for P V only where it must rescale the output by tile j's new
// row max, then packs tile j's P. The scores and P are separate registers (S is overwritten while
// the previous P is still read), and the consumer holds two tiles' K/V stages at once, hence 3
// stages so that the producer can load the next tile meanwhile. Between the two consumers,
// ping-pong: they take turns to issue their GEMMs (one named barrier each), so that one's GEMMs
// run while the other computes its softmax. ptxas would serialize the wgmmas
// (with a warning) if a register they read or write in flight were touched; it reports none.
//
// Note [attention smem map]: from a 1024-aligned base: Q (128 rows x d), then per stage K and
// V (128 keys x d each), each as d / 64 boxes of 64 columns (128-byte rows, 128-byte swizzle:
// Note [wgmma descriptor] in aisp/hopper_ptx.cuh); then the mbarriers: Q's, full[stage] and
// empty[stage]. Boxes come from 3-D tensor maps (d, token, batch x head), so rows past a
// sequence's end arrive as zeros and are masked as keys (or not stored as queries).
//
// Note [N-major V]: P V reads V (key, dim) with dim contiguous: along the GEMM's K (keys) it is
// strided, so the B descriptor is N-major (imm-trans-b 1). For the 128-byte swizzled N-major
// canonical layout ((64, m), (8, k)) the leading byte offset is the distance between 64-column
// boxes (128 keys x 128 B = 16 KB here) and the stride byte offset the distance between groups
// of 8 keys (8 x 128 B = 1024 B); a 16-key slice starts 2048 B further, on an atom boundary.
#pragma once

#include <cuda.h>  // CUtensorMap and its enums only (aisp/tensor_map_encoder.hpp)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "aisp/check.hpp"
#include "aisp/hopper_ptx.cuh"
#include "aisp/mma_sync.cuh"
#include "aisp/tensor_map_encoder.hpp"
#include "aisp/wgmma_shapes.cuh"
#include "attention_problem.cuh"

namespace aisp::labs_attention {

// Note [consumers per head dim]: d 128 runs 2 consumer warpgroups (128 query rows a CTA), d 64
// runs 3 (192 rows). Per FLOP, d 64 moves twice the K/V bytes from L2 into shared memory: with
// 128 rows a CTA it needed ~3.5 TB/s of L2 reads at 427 TFLOP/s (H100, 2026-11-27); 192 rows
// cut that by a third. Its accumulators are half as large, so 3 consumers fit in 160 registers.
template <int Dim>
struct wgmma_geometry {
  static constexpr int consumers = Dim == 64 ? 3 : 2;
  static constexpr int block_q = 64 * consumers;  // 64 query rows a consumer warpgroup
  static constexpr int block_kv = 128;  // wgmma_block_kv
  static constexpr int stages = 3;  // step 5 holds two tiles at once (Note [softmax overlap])
  static constexpr int threads = 128 * (consumers + 1);
  static constexpr int box_cols = 64;  // one 128-byte swizzle row of bf16
  static constexpr int d_boxes = Dim / box_cols;
  static constexpr int q_box_bytes = block_q * 128;
  static constexpr int kv_box_bytes = block_kv * 128;
  static constexpr int q_bytes = d_boxes * q_box_bytes;
  static constexpr int kv_tile_bytes = d_boxes * kv_box_bytes;  // K or V
  static constexpr int barrier_offset = q_bytes + stages * 2 * kv_tile_bytes;
  static constexpr int smem_bytes = barrier_offset + (1 + 2 * stages) * 8 + 1024;  // + alignment slack
  static constexpr int producer_registers = 24;
  // What the producer gives back, shared among the consumers, in steps of 8 (setmaxnreg).
  static constexpr int consumer_registers = (65536 - 128 * producer_registers) / (128 * consumers) / 8 * 8;  // 240, 160
  static_assert(Dim % box_cols == 0 && smem_bytes <= 227 * 1024);
  static_assert(consumer_registers <= 256 && q_box_bytes % 1024 == 0);
};

#if AISP_HOPPER_DEVICE

// Note [N-major V]: 128-byte swizzle, N-major.
__device__ __forceinline__ std::uint64_t sw128_nmajor_desc(std::uint32_t smem_addr, std::uint32_t leading_bytes) {
  return static_cast<std::uint64_t>((smem_addr & 0x3FFFFu) >> 4) | (static_cast<std::uint64_t>(leading_bytes >> 4) << 16) |
         (static_cast<std::uint64_t>(1024u >> 4) << 32) | (std::uint64_t{1} << 62);
}

template <int Dim>
__device__ __forceinline__ void wgmma_pv(float (&o)[Dim / 2], const std::uint32_t (&a)[4], std::uint64_t desc_v) {
  if constexpr (Dim == 128) {
    hopper::wgmma_rs_m64n128k16_nmajor(o, a, desc_v);
  } else {
    hopper::wgmma_rs_m64n64k16_nmajor(o, a, desc_v);
  }
}

constexpr int wgmma_block_kv = 128;

// 2^x as one MUFU.EX2: exp2f also handles results below 2^-126, which cost extra instructions
// per score; flushed to zero here, they are far below a bf16 P's rounding.
__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// S = Q K^T for this warpgroup's 64 rows and one 128-key tile, as one commit group (not waited).
template <int Dim>
__device__ __forceinline__ void issue_qk(float (&scores)[wgmma_block_kv / 2], std::uint32_t q_rows, std::uint32_t k_tile,
                                         int q_box_bytes, int kv_box_bytes) {
#pragma unroll
  for (int i = 0; i < wgmma_block_kv / 2; ++i) scores[i] = 0.0f;
  hopper::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < Dim / 16; ++kk) {
    // 16 columns = 32 bytes further along a 128-byte row: +2 in the address field (>> 4).
    const std::uint64_t desc_q = hopper::sw128_kmajor_desc(q_rows + (kk / 4) * q_box_bytes) + 2 * (kk % 4);
    const std::uint64_t desc_k = hopper::sw128_kmajor_desc(k_tile + (kk / 4) * kv_box_bytes) + 2 * (kk % 4);
    hopper::wgmma_ss_m64n128k16(scores, desc_q, desc_k);
  }
  hopper::wgmma_commit();
}

// O += P V for one tile, as one commit group (not waited).
template <int Dim>
__device__ __forceinline__ void issue_pv(float (&o)[Dim / 2], const std::uint32_t (&pa)[wgmma_block_kv / 16][4],
                                         std::uint32_t v_tile, int kv_box_bytes) {
  hopper::wgmma_fence();
#pragma unroll
  for (int c = 0; c < wgmma_block_kv / 16; ++c) wgmma_pv<Dim>(o, pa[c], sw128_nmajor_desc(v_tile + c * 16 * 128, kv_box_bytes));
  hopper::wgmma_commit();
}

// Where a warp's rows sit against the keys: what the masks need.
struct softmax_rows {
  int warp_q0;  // the warp's first query; this thread's rows are warp_q0 + g and + 8
  int g, t;
  int seq;
  bool causal;
  float scale_log2;
};

// v[0] = v[0] op v[1] op ... op v[N - 1] as a tree of depth log2 N (the halving widths are template
// arguments, so every index is a constant and v stays in registers).
template <int Width, int N, class Op>
__device__ __forceinline__ float tree_reduce(float (&v)[N], Op op) {
  if constexpr (Width == 0) {
    return v[0];
  } else {
#pragma unroll
    for (int i = 0; i < Width; ++i) v[i] = op(v[i], v[i + Width]);
    return tree_reduce<Width / 2>(v, op);
  }
}

// The online softmax of one tile in place (Note [online softmax] in fused_mma.cuh): masks, the
// quad's row max, exp2 of the scaled scores, the running sums; returns in `rescale` the factor
// the output rows must be multiplied by (left to the caller: the output may still be in flight).
__device__ __forceinline__ void online_softmax(float (&scores)[wgmma_block_kv / 2], float (&row_max)[2], float (&row_sum)[2],
                                               float (&rescale)[2], const softmax_rows& rows, int kv0) {
  const bool needs_mask = kv0 + wgmma_block_kv > rows.seq || (rows.causal && kv0 + wgmma_block_kv - 1 > rows.warp_q0);
  if (needs_mask) {  // a separate pass: the tiles inside the mask run no per-element test
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int query = rows.warp_q0 + rows.g + 8 * half;
#pragma unroll
      for (int j = 0; j < wgmma_block_kv / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int key = kv0 + 8 * j + 2 * rows.t + e;
          if (key >= rows.seq || (rows.causal && key > query)) scores[4 * j + 2 * half + e] = -INFINITY;
        }
      }
    }
  }
  // Note [softmax as trees]: the row max and the row sum reduce their 32 values a thread as trees
  // (depth 5), not as chains of 16 or 32 dependent FMNMX or FADD: with two consumer warps a
  // scheduler there is little else to issue meanwhile, and ncu counted "wait" (fixed-latency
  // dependency) as the top stall of the chained version.
  constexpr int per_half = wgmma_block_kv / 4;  // this thread's scores in each of its two rows
  const auto max_of = [](float a, float b) { return fmaxf(a, b); };
  const auto sum_of = [](float a, float b) { return a + b; };
  float tree[2][per_half];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
#pragma unroll
    for (int i = 0; i < per_half; ++i) tree[half][i] = scores[4 * (i / 2) + 2 * half + i % 2];
  }
  float subtract[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float tile_max = tree_reduce<per_half / 2>(tree[half], max_of);
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffU, tile_max, 1));
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffU, tile_max, 2));
    const float new_max = fmaxf(row_max[half], tile_max);
    // All keys so far masked: subtract 0, so no -inf - -inf.
    subtract[half] = new_max == -INFINITY ? 0.0f : new_max * rows.scale_log2;
    rescale[half] = exp2_ftz(row_max[half] * rows.scale_log2 - subtract[half]);
    row_max[half] = new_max;
  }
#pragma unroll
  for (int half = 0; half < 2; ++half) {
#pragma unroll
    for (int i = 0; i < per_half; ++i) {
      float& x = scores[4 * (i / 2) + 2 * half + i % 2];
      x = exp2_ftz(fmaf(x, rows.scale_log2, -subtract[half]));
      tree[half][i] = x;
    }
    row_sum[half] = row_sum[half] * rescale[half] + tree_reduce<per_half / 2>(tree[half], sum_of);
  }
}

template <int Dim>
__device__ __forceinline__ void rescale_output(float (&o)[Dim / 2], const float (&rescale)[2]) {
#pragma unroll
  for (int j = 0; j < Dim / 8; ++j) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      o[4 * j + 2 * half] *= rescale[half];
      o[4 * j + 2 * half + 1] *= rescale[half];
    }
  }
}

// P's A fragment for keys 16c .. 16c + 15 is n-blocks 2c and 2c + 1 of the scores.
__device__ __forceinline__ void pack_p(const float (&scores)[wgmma_block_kv / 2], std::uint32_t (&pa)[wgmma_block_kv / 16][4]) {
#pragma unroll
  for (int c = 0; c < wgmma_block_kv / 16; ++c) {
#pragma unroll
    for (int r = 0; r < 4; ++r) pa[c][r] = ptx::pack_bf16(scores[8 * c + 2 * r], scores[8 * c + 2 * r + 1]);
  }
}

// Note [output through TMA]: a consumer's output rows go to global memory as TMA stores from
// its own rows of the Q buffer, free once its last Q K^T has completed: normalized, converted to
// bf16 and written in the 128-byte swizzled layout of a 64-row box (Note [attention smem map]),
// then one thread stores the d / 64 boxes. A barrier over the warpgroup first, so that no warp
// writes Q's rows before all four are past their last wgmma wait (racecheck reported those
// writes against the wgmma reads without it). Stores from registers wrote each 32-byte sector in two
// 16-byte halves (ncu: 3.4 M L2 write requests a call at fwd_hd128 against 0.5 M), and each CTA's
// exit waited for them to drain.
template <int Dim>
__device__ __forceinline__ void store_rows_through_tma(const float (&o)[Dim / 2], const float (&row_sum)[2], std::uint32_t rows_smem,
                                                       int q_box_bytes, const CUtensorMap* map_o, int q0, int q_plane,
                                                       int consumer, int warp, int g, int t) {
  const auto acc = reinterpret_cast<const float(&)[Dim / 8][4]>(o);
  // Every warp of the warpgroup is past its last wgmma wait before any overwrites Q's rows.
  hopper::named_barrier_sync(8 + consumer, 128);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const float inverse = inverse_row_sum(row_sum[half]);
    const int row = warp * 16 + g + 8 * half;  // of the consumer's 64
#pragma unroll
    for (int j = 0; j < Dim / 8; ++j) {
      const int chunk = j % 8;  // 16-byte chunk of the 128-byte row, swizzled by the row
      const std::uint32_t at = rows_smem + (j / 8) * q_box_bytes + row * 128 + ((chunk ^ (row % 8)) * 16) + 4 * t;
      const std::uint32_t packed = ptx::pack_bf16(acc[j][2 * half] * inverse, acc[j][2 * half + 1] * inverse);
      asm volatile("st.shared.b32 [%0], %1;" ::"r"(at), "r"(packed) : "memory");
    }
  }
  hopper::fence_proxy_async_shared();
  hopper::named_barrier_sync(8 + consumer, 128);  // the warpgroup's rows are all written
  if (threadIdx.x % 128 == 0) {
#pragma unroll
    for (int box = 0; box < Dim / 64; ++box) {
      hopper::tma_store_3d(map_o, rows_smem + box * q_box_bytes, box * 64, q0 + consumer * 64, q_plane);
    }
    hopper::bulk_commit();
    hopper::bulk_wait_reads();  // the shared memory must outlive the reads
  }
}

// A tile's place in the ring: its stage (tile % stages) and its phase parity ((tile / stages) & 1),
// which kv_ring::next advances a tile at a time without a division.
struct ring_slot {
  int stage;
  std::uint32_t phase;
};

// The K/V ring of Note [attention smem map]: stage `tile % stages` holds key tile `tile`'s K and
// V, with its full and empty barriers 8 bytes apart from stage 0's; its phase parity follows
// from the tile's index.
template <int Dim>
struct kv_ring {
  using geo = wgmma_geometry<Dim>;
  std::uint32_t k0, full0, empty0;
  [[nodiscard]] __device__ static ring_slot slot(int tile) {
    return {tile % geo::stages, static_cast<std::uint32_t>(tile / geo::stages) & 1u};
  }
  [[nodiscard]] __device__ static ring_slot next(ring_slot s) {
    return s.stage + 1 == geo::stages ? ring_slot{0, s.phase ^ 1u} : ring_slot{s.stage + 1, s.phase};
  }
  [[nodiscard]] __device__ std::uint32_t k(ring_slot s) const { return k0 + s.stage * 2 * geo::kv_tile_bytes; }
  [[nodiscard]] __device__ std::uint32_t v(ring_slot s) const { return k(s) + geo::kv_tile_bytes; }
  [[nodiscard]] __device__ std::uint32_t full(ring_slot s) const { return full0 + 8 * s.stage; }
  [[nodiscard]] __device__ std::uint32_t empty(ring_slot s) const { return empty0 + 8 * s.stage; }
  __device__ void wait_full(ring_slot s) const { hopper::mbar_wait(full(s), s.phase); }
  __device__ void wait_empty(ring_slot s) const { hopper::mbar_wait(empty(s), s.phase ^ 1u); }
  // A consumer warpgroup is done with the tile's K and V (one arrival of the `consumers` expected).
  __device__ void release(ring_slot s) const {
    if (threadIdx.x % 128 == 0) hopper::mbar_arrive(empty(s));
  }
  // The producer: the tile's K and V for the KV plane's keys from `key0`, onto its full barrier.
  __device__ void load(ring_slot s, const CUtensorMap* map_k, const CUtensorMap* map_v, int key0, int kv_plane) const {
    hopper::mbar_arrive_expect_tx(full(s), 2 * geo::kv_tile_bytes);
    for (int box = 0; box < geo::d_boxes; ++box) {
      hopper::tma_load_3d(k(s) + box * geo::kv_box_bytes, map_k, full(s), box * geo::box_cols, key0, kv_plane);
      hopper::tma_load_3d(v(s) + box * geo::kv_box_bytes, map_v, full(s), box * geo::box_cols, key0, kv_plane);
    }
  }
  // The same by the tile's index.
  [[nodiscard]] __device__ std::uint32_t k(int tile) const { return k(slot(tile)); }
  [[nodiscard]] __device__ std::uint32_t v(int tile) const { return v(slot(tile)); }
  [[nodiscard]] __device__ std::uint32_t full(int tile) const { return full(slot(tile)); }
  [[nodiscard]] __device__ std::uint32_t empty(int tile) const { return empty(slot(tile)); }
  __device__ void wait_full(int tile) const { wait_full(slot(tile)); }
  __device__ void wait_empty(int tile) const { wait_empty(slot(tile)); }
  __device__ void release(int tile) const { release(slot(tile)); }
  __device__ void load(int tile, const CUtensorMap* map_k, const CUtensorMap* map_v, int key0, int kv_plane) const {
    load(slot(tile), map_k, map_v, key0, kv_plane);
  }
};

// Ping-pong (Note [softmax overlap]): the consumers take turns to issue their GEMMs; named barrier
// 1 + c is consumer c's turn, and each hands over to the next in a ring.
struct ping_pong {
  int consumer, consumers;
  __device__ void mine() const { hopper::named_barrier_sync(1 + consumer, 256); }
  __device__ void yours() const { hopper::named_barrier_arrive(1 + (consumer + 1) % consumers, 256); }
};

// Note [peeled last tile]: the persistent kernel (persistent_attention.cuh) needs a hook after a
// block's last Q K^T. Inside the tile loop (a branch on the tile index, an mbarrier arrive and a
// named barrier) it made the loop ~56-78 ns a tile slower than step 5's (H100 GPU-3faf993b,
// 2026-12-06, thirtieth session: 3.3% slower than step 5 at fwd_hd128); with the last tile peeled
// out of the loop, the ring's slots advanced a tile at a time instead of divided out of the
// tile's index, and the hook only in the peeled copy, the kernel ran 1.8% faster than step 5 and
// 101.0% of cuDNN (H100 GPU-d44ad993, 2026-12-06, labs/attention/README.md). Step 5 keeps its
// loop (no hook: no_hook): with the peel, the slots and a first wgmma that overwrote its
// accumulators (scale-d 0, which ptxas already does for the zeroed scores: no CS2R in the loop's
// SASS) it ran 0.4% slower at d 128 and 1.5% causal in the same run, its SASS 35% larger.
struct no_hook {
  __device__ void operator()() const {}
};

// Step 5's schedule for one consumer over its block's kv_tiles key tiles (Note [softmax overlap]):
// leaves the unnormalized output in `o` and the row sums in `row_sum`. The block's tiles are the
// ring's `first` .. first + kv_tiles - 1 (a persistent CTA's ring runs on across its blocks). The
// last turn is handed over only where `hand_over_at_end` (the last consumer's last turn has
// nobody to take it: no arrival is left behind). `after_last_qk` runs once the block's last Q K^T
// has completed (Q's rows are free); the last tile's stage is released here only where
// `release_last` (the persistent kernel stages its output in it first).
template <int Dim, class AfterLastQk>
__device__ __forceinline__ void overlapped_tiles(float (&o)[Dim / 2], float (&row_sum)[2], const kv_ring<Dim>& ring, int first,
                                                 int kv_tiles, std::uint32_t q_rows, const softmax_rows& rows, const ping_pong& turns,
                                                 bool hand_over_at_end, bool release_last, AfterLastQk after_last_qk) {
  using geo = wgmma_geometry<Dim>;
  namespace h = aisp::hopper;
#pragma unroll
  for (int i = 0; i < Dim / 2; ++i) o[i] = 0.0f;
  float row_max[2] = {-INFINITY, -INFINITY};  // raw scores; scaled inside exp2
  row_sum[0] = row_sum[1] = 0.0f;
  float rescale[2];
  float scores[geo::block_kv / 2];
  std::uint32_t pa[geo::block_kv / 16][4];
  ring_slot now = ring.slot(first);
  ring.wait_full(now);
  turns.mine();
  issue_qk<Dim>(scores, q_rows, ring.k(now), geo::q_box_bytes, geo::kv_box_bytes);
  turns.yours();
  h::wgmma_wait<0>();
  h::fence_accumulators(scores);
  if (kv_tiles == 1) after_last_qk();
  online_softmax(scores, row_max, row_sum, rescale, rows, 0);
  pack_p(scores, pa);
  // Key tile `tile` (in slot `now`) with the previous one's P V (in `before`).
  const auto steady_tile = [&](int tile, ring_slot before, auto hook) {
    ring.wait_full(now);
    turns.mine();
    issue_qk<Dim>(scores, q_rows, ring.k(now), geo::q_box_bytes, geo::kv_box_bytes);
    issue_pv<Dim>(o, pa, ring.v(before), geo::kv_box_bytes);
    turns.yours();
    h::wgmma_wait<1>();  // Q K^T of this tile is done; P V of the previous one may still run
    h::fence_accumulators(scores);
    hook();
    online_softmax(scores, row_max, row_sum, rescale, rows, tile * geo::block_kv);
    h::wgmma_wait<0>();
    h::fence_accumulators(o);
    ring.release(before);
    rescale_output<Dim>(o, rescale);
    pack_p(scores, pa);
  };
  if constexpr (!std::is_same_v<AfterLastQk, no_hook>) {  // Note [peeled last tile]
    for (int tile = 1; tile < kv_tiles - 1; ++tile) {
      const ring_slot before = now;
      now = ring.next(now);
      steady_tile(tile, before, [] {});
    }
    if (kv_tiles > 1) {
      const ring_slot before = now;
      now = ring.next(now);
      steady_tile(kv_tiles - 1, before, after_last_qk);
    }
  } else {  // step 5
    for (int tile = 1; tile < kv_tiles; ++tile) {
      now = ring.slot(first + tile);
      steady_tile(tile, ring.slot(first + tile - 1), no_hook{});
    }
  }
  turns.mine();
  issue_pv<Dim>(o, pa, ring.v(now), geo::kv_box_bytes);
  if (hand_over_at_end) turns.yours();
  h::wgmma_wait<0>();
  h::fence_accumulators(o);
  if (release_last) ring.release(now);
}

// The 1024-aligned base of a CTA's dynamic shared memory (the 128-byte swizzle's atoms).
__device__ __forceinline__ std::uint32_t aligned_smem_base(const std::uint8_t* dynamic_smem) {
  const std::uint32_t raw = hopper::smem_u32(dynamic_smem);
  return raw + (1024u - raw % 1024u) % 1024u;
}

__device__ __forceinline__ void prefetch_attention_maps(const CUtensorMap* map_q, const CUtensorMap* map_k, const CUtensorMap* map_v,
                                                        const CUtensorMap* map_o) {
  hopper::prefetch_tensor_map(map_q);
  hopper::prefetch_tensor_map(map_k);
  hopper::prefetch_tensor_map(map_v);
  hopper::prefetch_tensor_map(map_o);
}

#endif  // AISP_HOPPER_DEVICE

template <int Dim, bool Overlap>
__global__ void __launch_bounds__(wgmma_geometry<Dim>::threads, 1)
    wgmma_attention_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                           const __grid_constant__ CUtensorMap map_v, const __grid_constant__ CUtensorMap map_o,
                           const attention_problem p) {
#if AISP_HOPPER_DEVICE
  namespace h = aisp::hopper;
  using geo = wgmma_geometry<Dim>;
  extern __shared__ std::uint8_t dynamic_smem[];
  const std::uint32_t base = aligned_smem_base(dynamic_smem);
  const std::uint32_t q_smem = base;
  const std::uint32_t q_full = base + geo::barrier_offset;
  const kv_ring<Dim> ring{.k0 = base + geo::q_bytes, .full0 = q_full + 8, .empty0 = q_full + 8 + 8 * geo::stages};

  const int q_blocks = (p.seq + geo::block_q - 1) / geo::block_q;
  // Causal: the longest rows (the last query blocks) start first, so short blocks fill the tail.
  const int q_block = p.causal ? q_blocks - 1 - static_cast<int>(blockIdx.x) : static_cast<int>(blockIdx.x);
  const int q0 = q_block * geo::block_q;
  const int head = static_cast<int>(blockIdx.y);
  const int batch = static_cast<int>(blockIdx.z);
  const int q_plane = batch * p.heads() + head;
  const int kv_plane = batch * p.kv_heads + head / p.group;
  const int kv_end = p.causal ? min(p.seq, q0 + geo::block_q) : p.seq;
  const int kv_tiles = (kv_end + geo::block_kv - 1) / geo::block_kv;
  const int warpgroup = static_cast<int>(threadIdx.x / 128);

  if (threadIdx.x == 0) {
    prefetch_attention_maps(&map_q, &map_k, &map_v, &map_o);
    h::mbar_init(q_full, 1);
    for (int s = 0; s < geo::stages; ++s) {
      h::mbar_init(ring.full(s), 1);   // the producer's arrive.expect_tx
      h::mbar_init(ring.empty(s), geo::consumers);  // one release per consumer warpgroup
    }
    h::fence_barrier_init();
  }
  __syncthreads();

  if (warpgroup == 0) {  // the producer (Note [ring phases] in labs/gemm/steps_hopper.cuh)
    h::warpgroup_release_registers<geo::producer_registers>();
    if (threadIdx.x == 0) {
      h::mbar_arrive_expect_tx(q_full, geo::q_bytes);
      for (int box = 0; box < geo::d_boxes; ++box) {
        h::tma_load_3d(q_smem + box * geo::q_box_bytes, &map_q, q_full, box * geo::box_cols, q0, q_plane);
      }
      for (int tile = 0; tile < kv_tiles; ++tile) {
        ring.wait_empty(tile);
        ring.load(tile, &map_k, &map_v, tile * geo::block_kv, kv_plane);
      }
    }
    return;
  }

  h::warpgroup_claim_registers<geo::consumer_registers>();
  const int consumer = warpgroup - 1;
  const int warp = static_cast<int>(threadIdx.x / 32) % 4;
  const int lane = static_cast<int>(threadIdx.x % 32);

  const softmax_rows rows{.warp_q0 = q0 + consumer * 64 + warp * 16, .g = lane / 4, .t = lane % 4, .seq = p.seq,
                          .causal = p.causal, .scale_log2 = p.scale * 1.4426950408889634f};
  const std::uint32_t q_rows = q_smem + consumer * 64 * 128;  // this warpgroup's 64 rows of each Q box

  float o[Dim / 2];
  float row_sum[2] = {0.0f, 0.0f};
  h::mbar_wait(q_full, 0);

  if constexpr (!Overlap) {  // step 4: each GEMM waited for before the softmax or the next GEMM
#pragma unroll
    for (int i = 0; i < Dim / 2; ++i) o[i] = 0.0f;
    float row_max[2] = {-INFINITY, -INFINITY};  // raw scores; scaled inside exp2
    float rescale[2];
    float scores[geo::block_kv / 2];
    std::uint32_t pa[geo::block_kv / 16][4];
    for (int tile = 0; tile < kv_tiles; ++tile) {
      ring.wait_full(tile);
      issue_qk<Dim>(scores, q_rows, ring.k(tile), geo::q_box_bytes, geo::kv_box_bytes);
      h::wgmma_wait<0>();
      h::fence_accumulators(scores);
      online_softmax(scores, row_max, row_sum, rescale, rows, tile * geo::block_kv);
      rescale_output<Dim>(o, rescale);
      pack_p(scores, pa);
      issue_pv<Dim>(o, pa, ring.v(tile), geo::kv_box_bytes);
      h::wgmma_wait<0>();
      h::fence_accumulators(o);
      ring.release(tile);
    }
  } else {  // step 5: Note [softmax overlap]; consumer 0 takes the first turn
    const ping_pong turns{consumer, geo::consumers};
    if (consumer == geo::consumers - 1) turns.yours();
    overlapped_tiles<Dim>(o, row_sum, ring, 0, kv_tiles, q_rows, rows, turns, consumer != geo::consumers - 1, true, no_hook{});
  }

  store_rows_through_tma<Dim>(o, row_sum, q_rows, geo::q_box_bytes, &map_o, q0, q_plane, consumer, warp, rows.g, rows.t);
#else
  (void)map_q, (void)map_k, (void)map_v, (void)map_o, (void)p;
  __trap();
#endif
}

// ---- Host side ----
// A (planes, tokens, d) bf16 tensor as a 3-D map: box 64 columns x `box_rows` tokens x 1 plane,
// 128-byte swizzle, zeros out of bounds. Encoded on the stack each call (~1 us, no allocation).
inline CUtensorMap attention_tensor_map(const __nv_bfloat16* data, int dim, int tokens, int planes, int box_rows) {
  CUtensorMap map{};
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(dim), static_cast<cuuint64_t>(tokens), static_cast<cuuint64_t>(planes)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(dim) * sizeof(__nv_bfloat16),
                                 static_cast<cuuint64_t>(dim) * tokens * sizeof(__nv_bfloat16)};
  const cuuint32_t box[3] = {64, static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult status = tensor_map_encode_function()(
      &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<__nv_bfloat16*>(data), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  AISP_EXPECTS(status == CUDA_SUCCESS, "cuTensorMapEncodeTiled rejected an attention operand");
  return map;
}

inline void expect_tma_operands(const attention_problem& p) {
  const auto aligned16 = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
  AISP_EXPECTS(aligned16(p.q) && aligned16(p.k) && aligned16(p.v) && aligned16(p.o), "TMA needs 16-byte aligned buffers");
}

// setup(): the driver entry point and the shared-memory opt-in, once, not in a timed call.
template <int Dim, bool Overlap>
void prepare_wgmma_attention() {
  (void)tensor_map_encode_function();
  AISP_CUDA_CHECK(cudaFuncSetAttribute(wgmma_attention_kernel<Dim, Overlap>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       wgmma_geometry<Dim>::smem_bytes));
}

template <int Dim, bool Overlap>
void launch_wgmma_attention(const attention_problem& p, cudaStream_t stream) {
  using geo = wgmma_geometry<Dim>;
  AISP_EXPECTS(p.offsets == nullptr && p.window == 0, "the wgmma attention kernel takes fixed lengths and no window");
  expect_tma_operands(p);
  const CUtensorMap map_q = attention_tensor_map(p.q, Dim, p.seq, p.batch * p.heads(), geo::block_q);
  const CUtensorMap map_k = attention_tensor_map(p.k, Dim, p.seq, p.batch * p.kv_heads, geo::block_kv);
  const CUtensorMap map_v = attention_tensor_map(p.v, Dim, p.seq, p.batch * p.kv_heads, geo::block_kv);
  const CUtensorMap map_o = attention_tensor_map(p.o, Dim, p.seq, p.batch * p.heads(), 64);
  const dim3 grid(static_cast<unsigned>((p.seq + geo::block_q - 1) / geo::block_q), static_cast<unsigned>(p.heads()),
                  static_cast<unsigned>(p.batch));
  wgmma_attention_kernel<Dim, Overlap><<<grid, geo::threads, geo::smem_bytes, stream>>>(map_q, map_k, map_v, map_o, p);
  AISP_CHECK_LAUNCH();
}

}  // namespace aisp::labs_attention
