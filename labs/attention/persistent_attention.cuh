// Step 6: step 5's kernel (wgmma_attention.cuh) with persistent CTAs, for masks whose blocks of
// query rows all cost the same (no causal mask).
//
// Note [persistent attention]: step 5 runs one CTA a block of query rows (2048 blocks at
// fwd_hd128, one CTA an SM: 224 KB of shared memory). Each CTA waits for its Q and its first K/V
// tile before its first wgmma, and the next CTA on that SM starts only once the last one's output
// stores have drained: a ramp and a drain per block, with the tensor cores idle. Step 6 launches
// one CTA an SM; CTA i of G walks the blocks i, i + G, i + 2G, ... (the blocks of one head are
// adjacent, so the CTAs in flight share K and V in the L2, as step 5's grid order does). The
// producer runs on into the next block's K/V tiles while the consumers finish this one, and
// reloads a consumer's 64 Q rows as soon as that consumer's last Q K^T of the block has
// completed (its own pair of barriers: the consumers release their rows at different times),
// while it still runs its last softmax, its last P V and its epilogue. Q's rows therefore hold
// the next block's queries by the time the output is ready, and the output leaves from registers
// (`store_normalized_rows`), not through TMA from Q's rows as in step 5. Causal blocks differ in
// length (1 to 32 key tiles at fwd_hd128_causal): a fixed walk would leave some SMs with twice
// the work of others, where step 5's grid lets the hardware hand out the longest blocks first.
//
// Shared memory is step 5's (Note [attention smem map]) with one pair of Q barriers a consumer:
// q_full[c] (the producer's arrive.expect_tx of the consumer's rows) and q_empty[c] (one arrival
// a warp of the consumer, after its last Q K^T of the block), then the ring's full and empty.
#pragma once

#include <algorithm>

#include "wgmma_attention.cuh"

namespace aisp::labs_attention {

template <int Dim>
struct persistent_geometry {
  using geo = wgmma_geometry<Dim>;
  static constexpr int consumer_q_bytes = geo::d_boxes * 64 * 128;  // a consumer's 64 rows of each Q box
  static constexpr int barriers = 2 * geo::consumers + 2 * geo::stages;
  static constexpr int smem_bytes = geo::barrier_offset + barriers * 8 + 1024;  // + alignment slack
  static_assert(smem_bytes <= 227 * 1024);
};

template <int Dim>
__global__ void __launch_bounds__(wgmma_geometry<Dim>::threads, 1)
    persistent_attention_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                                const __grid_constant__ CUtensorMap map_v, const attention_problem p) {
#if AISP_HOPPER_DEVICE
  namespace h = aisp::hopper;
  using geo = wgmma_geometry<Dim>;
  extern __shared__ std::uint8_t dynamic_smem[];
  const std::uint32_t base = aligned_smem_base(dynamic_smem);
  const std::uint32_t q_smem = base;
  const std::uint32_t barriers = base + geo::barrier_offset;
  const auto q_full = [barriers](int consumer) { return barriers + 8 * consumer; };
  const auto q_empty = [barriers](int consumer) { return barriers + 8 * (geo::consumers + consumer); };
  const std::uint32_t ring_barriers = barriers + 16 * geo::consumers;
  const kv_ring<Dim> ring{.k0 = base + geo::q_bytes, .full0 = ring_barriers, .empty0 = ring_barriers + 8 * geo::stages};

  const int q_blocks = (p.seq + geo::block_q - 1) / geo::block_q;
  const int blocks = q_blocks * p.heads() * p.batch;
  const int kv_tiles = (p.seq + geo::block_kv - 1) / geo::block_kv;  // every block reads every key
  const int stride = static_cast<int>(gridDim.x);
  // Block u: query block u % q_blocks of plane u / q_blocks (batch * heads + head).
  const auto q0_of = [&](int u) { return (u % q_blocks) * geo::block_q; };
  const auto kv_plane_of = [&](int u) {
    const int plane = u / q_blocks;
    return (plane / p.heads()) * p.kv_heads + (plane % p.heads()) / p.group;
  };
  const int warpgroup = static_cast<int>(threadIdx.x / 128);

  if (threadIdx.x == 0) {
    h::prefetch_tensor_map(&map_q);
    h::prefetch_tensor_map(&map_k);
    h::prefetch_tensor_map(&map_v);
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
      int at = 0;  // ring tiles loaded so far
      for (int u = static_cast<int>(blockIdx.x), round = 0; u < blocks; u += stride, ++round) {
        const int kv_plane = kv_plane_of(u);
        for (int tile = 0; tile < kv_tiles; ++tile, ++at) {
          ring.wait_empty(at);
          ring.load(at, &map_k, &map_v, tile * geo::block_kv, kv_plane);
          if (tile != 0) continue;
          // After the block's first K/V tile: each consumer's Q rows, once it has let go of its last block's.
          for (int c = 0; c < geo::consumers; ++c) {
            if (round > 0) h::mbar_wait(q_empty(c), static_cast<std::uint32_t>(round - 1) & 1u);
            h::mbar_arrive_expect_tx(q_full(c), persistent_geometry<Dim>::consumer_q_bytes);
            for (int box = 0; box < geo::d_boxes; ++box) {
              h::tma_load_3d(q_smem + box * geo::q_box_bytes + c * 64 * 128, &map_q, q_full(c), box * geo::box_cols,
                             q0_of(u) + c * 64, u / q_blocks);
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
  const std::uint32_t q_rows = q_smem + consumer * 64 * 128;
  const ping_pong turns{consumer, geo::consumers};
  const bool last_consumer = consumer == geo::consumers - 1;
  if (last_consumer) turns.yours();  // consumer 0 takes the first turn
  for (int u = static_cast<int>(blockIdx.x), round = 0; u < blocks; u += stride, ++round) {
    const softmax_rows rows{.warp_q0 = q0_of(u) + consumer * 64 + warp * 16, .g = lane / 4, .t = lane % 4, .seq = p.seq,
                            .causal = false, .scale_log2 = p.scale * 1.4426950408889634f};
    float o[Dim / 2];
    float row_sum[2];
    h::mbar_wait(q_full(consumer), static_cast<std::uint32_t>(round) & 1u);
    const bool final_block = u + stride >= blocks;
    overlapped_tiles<Dim>(o, row_sum, ring, round * kv_tiles, kv_tiles, q_rows, rows, turns, !(last_consumer && final_block),
                          [&] {
                            if (lane == 0) h::mbar_arrive(q_empty(consumer));
                          });
    store_normalized_rows<Dim>(reinterpret_cast<const float(&)[Dim / 8][4]>(o), row_sum,
                               p.o + static_cast<std::size_t>(u / q_blocks) * p.seq * Dim, rows.warp_q0, p.seq, rows.g, rows.t);
  }
#else
  (void)map_q, (void)map_k, (void)map_v, (void)p;
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
  const auto aligned16 = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
  AISP_EXPECTS(aligned16(p.q) && aligned16(p.k) && aligned16(p.v) && aligned16(p.o), "TMA needs 16-byte aligned buffers");
  int device = 0;
  int sms = 0;
  AISP_CUDA_CHECK(cudaGetDevice(&device));
  AISP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int blocks = (p.seq + geo::block_q - 1) / geo::block_q * p.heads() * p.batch;
  // Q in a consumer's 64 rows at a time (Note [persistent attention]).
  const CUtensorMap map_q = attention_tensor_map(p.q, Dim, p.seq, p.batch * p.heads(), 64);
  const CUtensorMap map_k = attention_tensor_map(p.k, Dim, p.seq, p.batch * p.kv_heads, geo::block_kv);
  const CUtensorMap map_v = attention_tensor_map(p.v, Dim, p.seq, p.batch * p.kv_heads, geo::block_kv);
  persistent_attention_kernel<Dim><<<std::min(blocks, sms), geo::threads, persistent_geometry<Dim>::smem_bytes, stream>>>(
      map_q, map_k, map_v, p);
  AISP_CHECK_LAUNCH();
}

}  // namespace aisp::labs_attention
