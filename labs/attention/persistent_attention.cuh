// Step 6: step 5's kernel (wgmma_attention.cuh) with persistent CTAs, for masks whose blocks of
// query rows all cost the same (no causal mask).
//
// Note [persistent attention]: step 5 runs one CTA a block of 128 query rows (2048 blocks at
// fwd_hd128, one CTA an SM: 224 KB of shared memory). Each CTA waits for its Q and its first K/V
// tiles before its first wgmma, and the next CTA on that SM starts only once the last one's
// output has left: a ramp and a drain a block with the tensor cores idle. Measured, that is
// what separates it from cuDNN: at 2x the keys a block (fwd_gqa, the same 2048 blocks) step 5
// goes from 99.1% to 101.0% of cuDNN (H100 GPU-ca303cc8, 2026-12-06), ~1 us a block.
// Step 6 launches one CTA an SM; CTA i of G walks the blocks i, i + G, i + 2G, ... (a head's
// blocks are adjacent, so the CTAs in flight share K and V in the L2 as step 5's grid does).
// - The producer runs on into the next block's K/V tiles (the ring's index runs on across
//   blocks), and reloads a consumer's 64 Q rows as soon as that consumer's last Q K^T of the
//   block has completed (a pair of barriers a consumer), while it still runs its last softmax,
//   its last P V and its epilogue.
// - The output cannot be staged in Q's rows (they hold the next block's queries by then), so it
//   is staged in the K half of the block's last ring stage, consumer c in its 16 KB (d 128),
//   once every consumer's last Q K^T has read it (Note [last Q K^T barriers]), and leaves by TMA
//   stores as in step 5 (Note [output through TMA]). That stage is released only once the
//   stores have read it.
// The first try (2026-12-06, H200: 7% slower than step 5) stored the output from registers and
// reloaded Q into the rows the output needed; the second (this kernel with the hook inside the
// tile loop, H100, thirtieth session) was 3.3% slower; with the last tile peeled (Note [peeled
// last tile] in wgmma_attention.cuh) it is 1.8% faster than step 5 at fwd_hd128 and 101.0% of
// cuDNN there and at fwd_gqa (H100 GPU-d44ad993, 2026-12-06), 101.1% in issue 18's command
// (GPU-0b5b1328; labs/attention/README.md).
// Causal blocks differ in length (1 to 32 key tiles at fwd_hd128_causal): a fixed walk leaves
// some SMs with twice the work of others (that try: 530 against 490 us), where step 5's grid lets
// the hardware hand out the longest blocks first, so causal attention keeps step 5's launch.
#pragma once

#include <algorithm>

#include "aisp/launch_shape.hpp"
#include "wgmma_attention.cuh"

namespace aisp::labs_attention {

// Step 5's shared memory (Note [attention smem map]) with a pair of Q barriers a consumer:
// q_full[c] (the producer's arrive.expect_tx of the consumer's rows) and q_empty[c] (one arrival
// a warp of the consumer, past its last Q K^T of the block); then the ring's full and empty.
template <int Dim>
struct persistent_geometry {
  using geo = wgmma_geometry<Dim>;
  static constexpr int consumer_box_bytes = 64 * 128;  // a consumer's 64 rows of one 64-column box
  static constexpr int consumer_q_bytes = geo::d_boxes * consumer_box_bytes;
  static constexpr int barriers = 2 * geo::consumers + 2 * geo::stages;
  static constexpr int smem_bytes = geo::barrier_offset + barriers * 8 + 1024;  // + alignment slack
  static_assert(smem_bytes <= 227 * 1024);
  // d 128 only: at d 64 three consumers' rows (24 KB) outgrow a K tile (16 KB).
  static_assert(geo::consumers * consumer_q_bytes <= geo::kv_tile_bytes, "the output is staged in one K tile");
};

#if AISP_HOPPER_DEVICE

// Where each block sits: block u is query block u % q_blocks of plane u / q_blocks (batch x head).
struct persistent_blocks {
  int q_blocks, blocks, kv_tiles;
  int heads, kv_heads, group;
  [[nodiscard]] __device__ int q0(int u, int block_q) const { return (u % q_blocks) * block_q; }
  [[nodiscard]] __device__ int q_plane(int u) const { return u / q_blocks; }
  [[nodiscard]] __device__ int kv_plane(int u) const { return (u / q_blocks / heads) * kv_heads + (u / q_blocks % heads) / group; }
};

#endif  // AISP_HOPPER_DEVICE

template <int Dim>
__global__ void __launch_bounds__(wgmma_geometry<Dim>::threads, 1)
    persistent_attention_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                                const __grid_constant__ CUtensorMap map_v, const __grid_constant__ CUtensorMap map_o,
                                const attention_problem p) {
#if AISP_HOPPER_DEVICE
  namespace h = aisp::hopper;
  using geo = wgmma_geometry<Dim>;
  using pgeo = persistent_geometry<Dim>;
  extern __shared__ std::uint8_t dynamic_smem[];
  const std::uint32_t base = aligned_smem_base(dynamic_smem);
  const std::uint32_t q_smem = base;
  const std::uint32_t barriers = base + geo::barrier_offset;
  const auto q_full = [barriers](int consumer) { return barriers + 8 * consumer; };
  const auto q_empty = [barriers](int consumer) { return barriers + 8 * (geo::consumers + consumer); };
  const std::uint32_t ring_barriers = barriers + 16 * geo::consumers;
  const kv_ring<Dim> ring{.k0 = base + geo::q_bytes, .full0 = ring_barriers, .empty0 = ring_barriers + 8 * geo::stages};
  const int q_blocks = (p.seq + geo::block_q - 1) / geo::block_q;
  const persistent_blocks walk{q_blocks, q_blocks * p.heads() * p.batch, (p.seq + geo::block_kv - 1) / geo::block_kv,
                               p.heads(), p.kv_heads, p.group};
  const int stride = static_cast<int>(gridDim.x);
  const int warpgroup = static_cast<int>(threadIdx.x / 128);

  if (threadIdx.x == 0) {
    prefetch_attention_maps(&map_q, &map_k, &map_v, &map_o);
    for (int c = 0; c < geo::consumers; ++c) {
      h::mbar_init(q_full(c), 1);   // the producer's arrive.expect_tx
      h::mbar_init(q_empty(c), 4);  // each warp of the consumer, past its last Q K^T
    }
    for (int s = 0; s < geo::stages; ++s) {
      h::mbar_init(ring.full(s), 1);
      h::mbar_init(ring.empty(s), geo::consumers);
    }
    h::fence_barrier_init();
  }
  __syncthreads();

  if (warpgroup == 0) {  // the producer
    h::warpgroup_release_registers<geo::producer_registers>();
    if (threadIdx.x == 0) {
      ring_slot at = ring.slot(0);  // the ring runs on over every block
      for (int u = static_cast<int>(blockIdx.x), round = 0; u < walk.blocks; u += stride, ++round) {
        const int kv_plane = walk.kv_plane(u);
        const int q0 = walk.q0(u, geo::block_q);
        const int q_plane = walk.q_plane(u);
        for (int tile = 0; tile < walk.kv_tiles; ++tile, at = ring.next(at)) {
          ring.wait_empty(at);
          ring.load(at, &map_k, &map_v, tile * geo::block_kv, kv_plane);
          if (tile != 0) continue;
          // After the block's first K/V tile: each consumer's Q rows, once it has let go of its last block's.
          for (int c = 0; c < geo::consumers; ++c) {
            if (round > 0) h::mbar_wait(q_empty(c), static_cast<std::uint32_t>(round - 1) & 1u);
            h::mbar_arrive_expect_tx(q_full(c), pgeo::consumer_q_bytes);
            for (int box = 0; box < geo::d_boxes; ++box) {
              h::tma_load_3d(q_smem + box * geo::q_box_bytes + c * pgeo::consumer_box_bytes, &map_q, q_full(c),
                             box * geo::box_cols, q0 + c * 64, q_plane);
            }
          }
        }
      }
    }
    return;
  }

  h::warpgroup_claim_registers<geo::consumer_registers>();
  const int consumer = warpgroup - 1;
  const int warp = static_cast<int>(threadIdx.x / 32) % 4;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::uint32_t q_rows = q_smem + consumer * pgeo::consumer_box_bytes;
  const ping_pong turns{consumer, geo::consumers};
  const bool last_consumer = consumer == geo::consumers - 1;
  if (last_consumer) turns.yours();  // consumer 0 takes the first turn
  // Note [last Q K^T barriers]: consumer c arrives on named barrier last_qk_barrier + c, the others
  // wait there. Two sets, by the block's parity: with one key tile a block, a consumer can reach
  // the next block's arrival before a slower one has waited on this block's (ids 4-6 and 11-13,
  // beside the ping-pong's 1-3 and the stores' 8-10).
  const int last_qk_threads = 128 * geo::consumers;
  for (int u = static_cast<int>(blockIdx.x), round = 0; u < walk.blocks; u += stride, ++round) {
    const int last_qk_barrier = round % 2 == 0 ? 4 : 11;
    const int q0 = walk.q0(u, geo::block_q);
    const softmax_rows rows{.warp_q0 = q0 + consumer * 64 + warp * 16, .g = lane / 4, .t = lane % 4, .seq = p.seq,
                            .causal = false, .scale_log2 = p.scale * 1.4426950408889634f};
    float o[Dim / 2];
    float row_sum[2];
    h::mbar_wait(q_full(consumer), static_cast<std::uint32_t>(round) & 1u);
    const int first = round * walk.kv_tiles;
    const bool final_block = u + stride >= walk.blocks;
    overlapped_tiles<Dim>(o, row_sum, ring, first, walk.kv_tiles, q_rows, rows, turns, !(last_consumer && final_block), false, [&] {
      if (lane == 0) h::mbar_arrive(q_empty(consumer));
      h::named_barrier_arrive(last_qk_barrier + consumer, last_qk_threads);
    });
    // Every consumer's last Q K^T has read the last K tile before any output lands in it.
    for (int other = 0; other < geo::consumers; ++other) {
      if (other != consumer) h::named_barrier_sync(last_qk_barrier + other, last_qk_threads);
    }
    const int last = first + walk.kv_tiles - 1;
    store_rows_through_tma<Dim>(o, row_sum, ring.k(last) + consumer * pgeo::consumer_q_bytes, pgeo::consumer_box_bytes, &map_o,
                                q0, walk.q_plane(u), consumer, warp, rows.g, rows.t);
    ring.release(last);  // by the thread that waited for the stores to read it
  }
#else
  (void)map_q, (void)map_k, (void)map_v, (void)map_o, (void)p;
  __trap();
#endif
}

// ---- Host side ----
template <int Dim>
void prepare_persistent_attention() {
  (void)tensor_map_encode_function();
  AISP_CUDA_CHECK(cudaFuncSetAttribute(persistent_attention_kernel<Dim>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       persistent_geometry<Dim>::smem_bytes));
}

template <int Dim>
void launch_persistent_attention(const attention_problem& p, cudaStream_t stream) {
  using geo = wgmma_geometry<Dim>;
  AISP_EXPECTS(p.offsets == nullptr && p.window == 0 && !p.causal,
               "the persistent attention kernel takes fixed lengths, no window and no causal mask");
  expect_tma_operands(p);
  const int blocks = (p.seq + geo::block_q - 1) / geo::block_q * p.heads() * p.batch;
  // Q in a consumer's 64 rows at a time (Note [persistent attention]), the output likewise.
  const CUtensorMap map_q = attention_tensor_map(p.q, Dim, p.seq, p.batch * p.heads(), 64);
  const CUtensorMap map_k = attention_tensor_map(p.k, Dim, p.seq, p.batch * p.kv_heads, geo::block_kv);
  const CUtensorMap map_v = attention_tensor_map(p.v, Dim, p.seq, p.batch * p.kv_heads, geo::block_kv);
  const CUtensorMap map_o = attention_tensor_map(p.o, Dim, p.seq, p.batch * p.heads(), 64);
  persistent_attention_kernel<Dim><<<std::min(blocks, device_sm_count()), geo::threads, persistent_geometry<Dim>::smem_bytes, stream>>>(
      map_q, map_k, map_v, map_o, p);
  AISP_CHECK_LAUNCH();
}

}  // namespace aisp::labs_attention
