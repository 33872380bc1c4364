// ch18:fp8_kv_decode's optimized: decode_mma_kernels.cuh's tensor-core split decode reading the
// fp8 e4m3 copies of K and V. Same grid, same softmax once per 16 tokens, same partial records
// and decode_combine; the pages are half the bytes, so twice as many stages fit in the ring.
//
// Note [fp8 decode fragments]: mma.sync has no e4m3 x bf16 form, so the fragments are widened
// to fp16 in registers (cvt.rn.f16x2.e4m3x2: exact, e4m3 fits in fp16) and the MMAs take fp16
// (Q and P rounded to fp16 too: 2^-11 relative, far inside Note [fp8 KV tolerance]). Shared
// memory is read with the b16 ldmatrix, each b16 being two adjacent fp8 values of one token:
// - K (S^T = K Q^T, k = dims): a plain ldmatrix hands lane (g, t) bytes 4t .. 4t + 3 of a
//   16-byte chunk of token g: dims 4t .. 4t + 3. The k order within a 16-dim step is free as long
//   as Q^T uses the same: logical k 2t, 2t + 1 are dims 4t, 4t + 1 (the low b16, a0 / a1) and
//   2t + 8, 2t + 9 are dims 4t + 2, 4t + 3 (the high b16, a2 / a3). Q^T's b0 and b1 are then
//   Q[16 ks + 4t, + 1] and Q[16 ks + 4t + 2, + 3]: one 8-byte load.
// - V (O^T += V^T P^T, k = tokens): ldmatrix.trans hands lane (g, t) b16 column g of rows
//   2t, 2t + 1: token 2t's dims 2g, 2g + 1 in the low half and token 2t + 1's in the high. A byte
//   permute gives (token 2t, 2t + 1) at dim 2g and at dim 2g + 1: the A fragments of two
//   m-tiles, one of even dims and one of odd. So m-tile 2b holds dims 32 b + 2g (rows g) and
//   32 b + 16 + 2g (rows g + 8), m-tile 2b + 1 the same plus one (dim_of below).
// Rows are padded to 144 bytes: 8 consecutive rows start 16 bytes apart modulo 128, so each
// 8-row phase of an ldmatrix hits 8 distinct bank quads, as Note [decode mma tiles] does.
// No lo halves for P (Note [P in two bf16 halves]): fp16 P is 2^-11 relative, and the pair's
// tolerance is fp8's.
#pragma once

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "decode_mma_kernels.cuh"

namespace aisp::ch18 {
namespace {  // as paged_decode_kernels.cuh

constexpr int fp8_row_bytes = head_dim + 16;  // padded (Note [fp8 decode fragments])
constexpr int fp8_tile_bytes = mma_page * fp8_row_bytes;
constexpr int fp8_stages = 6;  // 18 KB a stage: 108 KB in flight a block, two blocks an SM
constexpr std::size_t fp8_shared_bytes = static_cast<std::size_t>(2) * fp8_tile_bytes * fp8_stages;
constexpr int fp8_chunks_a_row = head_dim / 16;  // 16-byte cp.async chunks of a 128-byte fp8 row
static_assert(mma_page % (mma_threads / fp8_chunks_a_row) == 0, "rows copied evenly");

// Two e4m3 values (the low byte first) as fp16x2, exactly.
__device__ __forceinline__ unsigned int widen_e4m3x2(unsigned int two_bytes) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(two_bytes & 0xffffU), __NV_E4M3);
  return static_cast<unsigned int>(h.x) | (static_cast<unsigned int>(h.y) << 16);
}

template <int Group>
__global__ void __launch_bounds__(mma_threads, 2) decode_split_mma_fp8(decode_problem p, float* partials, int splits) {
  static_assert(Group == 1 || Group == 2 || Group == 4 || Group == 8, "a group pads to the 8 columns of an n8 tile");
  constexpr float log2e = 1.4426950408889634f;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const auto [split, kv_head, sequence, page_count, my_page] = this_split_block(p);
  constexpr int rows_a_pass = mma_threads / fp8_chunks_a_row;
  const int copy_row = static_cast<int>(threadIdx.x) / fp8_chunks_a_row;
  const int copy_byte = (static_cast<int>(threadIdx.x) % fp8_chunks_a_row) * 16;
  const std::size_t page_bytes = static_cast<std::size_t>(mma_page) * head_dim;
  const std::size_t in_page = static_cast<std::size_t>(kv_head) * page_bytes + static_cast<std::size_t>(copy_row) * head_dim + copy_byte;
  const auto* const k_bytes = reinterpret_cast<const unsigned char*>(p.k_fp8);
  const auto* const v_bytes = reinterpret_cast<const unsigned char*>(p.v_fp8);
  const auto issue = [&](int page_index) {  // block-uniform call: all lanes reach the shuffle
    const int physical = __shfl_sync(0xffffffffU, my_page, page_index);
    const std::size_t from = static_cast<std::size_t>(physical) * p.kv_heads * page_bytes + in_page;
    unsigned char* const k_to = shared_raw + (page_index % fp8_stages) * 2 * fp8_tile_bytes + copy_row * fp8_row_bytes + copy_byte;
    unsigned char* const v_to = k_to + fp8_tile_bytes;
#pragma unroll
    for (int j = 0; j < mma_page / rows_a_pass; ++j) {
      ptx::cp_async_zfill16(k_to + j * rows_a_pass * fp8_row_bytes, k_bytes + from + static_cast<std::size_t>(j) * rows_a_pass * head_dim, 16);
      ptx::cp_async_zfill16(v_to + j * rows_a_pass * fp8_row_bytes, v_bytes + from + static_cast<std::size_t>(j) * rows_a_pass * head_dim, 16);
    }
  };
#pragma unroll
  for (int s = 0; s < fp8_stages - 1; ++s) {
    if (s < page_count) issue(s);
    ptx::cp_async_commit();  // empty groups too: the wait count below stays uniform
  }

  // Q^T's B fragments in fp16, k permuted as K's (Note [fp8 decode fragments]); column g holds
  // head g, columns past the group zeros.
  const bool column_real = g < Group;
  const __nv_bfloat16* const q =
      p.q + ((static_cast<std::size_t>(sequence) * p.kv_heads + kv_head) * Group + (column_real ? g : 0)) * head_dim + 4 * t;
  unsigned int q_fragment[8][2];
#pragma unroll
  for (int ks = 0; ks < 8; ++ks) {
    const uint2 four = column_real ? *reinterpret_cast<const uint2*>(q + 16 * ks) : make_uint2(0U, 0U);
    q_fragment[ks][0] = ptx::pack_f16(low_of(four.x), high_of(four.x));
    q_fragment[ks][1] = ptx::pack_f16(low_of(four.y), high_of(four.y));
  }
  const float scale_log2 = p.scale * log2e;

  float out[8][4] = {};  // O^T: m-tile mt at dims dim_of(mt, e) x columns 2t, 2t + 1
  float running_max[2] = {-INFINITY, -INFINITY};
  float running_sum[2] = {};
  // ldmatrix row addresses, the same lane pattern for K and V: lanes 0-7 tokens 0-7 and 8-15
  // tokens 8-15 of the warp's 16 at chunk 2c, lanes 16-31 the same at chunk 2c + 1.
  const unsigned int ring_address = ptx::shared_address(shared_raw);
  const auto lane_offset =
      static_cast<unsigned int>((warp * 16 + lane % 8 + 8 * ((lane / 8) % 2)) * fp8_row_bytes + (lane / 16) * 16);
  constexpr auto stage_bytes = static_cast<unsigned int>(2 * fp8_tile_bytes);

  for (int i = 0; i < page_count; ++i) {
    ptx::cp_async_wait<fp8_stages - 2>();
    __syncthreads();
    if (i + fp8_stages - 1 < page_count) issue(i + fp8_stages - 1);
    ptx::cp_async_commit();
    const unsigned int k_stage = ring_address + static_cast<unsigned int>(i % fp8_stages) * stage_bytes + lane_offset;
    const unsigned int v_stage = k_stage + fp8_tile_bytes;

    // S^T = K_tile . Q^T: one ldmatrix.x4 covers two k-steps (32 dims).
    float score_even[4] = {};
    float score_odd[4] = {};
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      unsigned int r[4];
      ptx::ldmatrix_x4(r, k_stage + static_cast<unsigned int>(c) * 32);
      const unsigned int a_first[4] = {widen_e4m3x2(r[0]), widen_e4m3x2(r[1]), widen_e4m3x2(r[0] >> 16), widen_e4m3x2(r[1] >> 16)};
      const unsigned int a_second[4] = {widen_e4m3x2(r[2]), widen_e4m3x2(r[3]), widen_e4m3x2(r[2] >> 16), widen_e4m3x2(r[3] >> 16)};
      ptx::mma_f16_16816(score_even, a_first, q_fragment[2 * c]);
      ptx::mma_f16_16816(score_odd, a_second, q_fragment[2 * c + 1]);
    }
    float score[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) score[e] = score_even[e] + score_odd[e];

    float weight[4];
    softmax_16_tokens(score, scale_log2, running_max, running_sum, out, weight);
    unsigned int p_fragment[2] = {movmatrix_trans(ptx::pack_f16(weight[0], weight[1])),   // tokens 0-7 of the k-step
                                  movmatrix_trans(ptx::pack_f16(weight[2], weight[3]))};  // tokens 8-15

    // O^T += V^T . P^T: one ldmatrix.x4.trans covers 32 dims, the even and the odd m-tile.
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      unsigned int r[4];
      ptx::ldmatrix_x4_trans(r, v_stage + static_cast<unsigned int>(b) * 32);
      unsigned int split_bytes[4];  // low b16: the even dim of tokens 2t, 2t + 1; high: the odd
#pragma unroll
      for (int j = 0; j < 4; ++j) split_bytes[j] = __byte_perm(r[j], 0U, 0x3120);
      // Matrices: r0 tokens 0-7 / r1 tokens 8-15 of dims 32b .. + 15; r2, r3 the same of + 16 .. + 31.
      const unsigned int a_even[4] = {widen_e4m3x2(split_bytes[0]), widen_e4m3x2(split_bytes[2]), widen_e4m3x2(split_bytes[1]),
                                      widen_e4m3x2(split_bytes[3])};
      const unsigned int a_odd[4] = {widen_e4m3x2(split_bytes[0] >> 16), widen_e4m3x2(split_bytes[2] >> 16),
                                     widen_e4m3x2(split_bytes[1] >> 16), widen_e4m3x2(split_bytes[3] >> 16)};
      ptx::mma_f16_16816(out[2 * b], a_even, p_fragment);
      ptx::mma_f16_16816(out[2 * b + 1], a_odd, p_fragment);
    }
  }

  const auto dim_of = [g](int mt, int e) { return 32 * (mt / 2) + mt % 2 + 2 * g + 16 * (e / 2); };
  float* const record = partials + ((static_cast<std::size_t>(sequence) * p.kv_heads + kv_head) * Group * splits + split) * (head_dim + 2);
  merge_warps_to_record<Group, fp8_shared_bytes>(out, running_max, running_sum, true, dim_of, shared_raw, record, splits);
}

// setup(): the shared-memory opt-in, once per kernel, not in a timed call.
inline void prepare_decode_split_mma_fp8() {
  for_each_group([](auto group) {
    AISP_CUDA_CHECK(cudaFuncSetAttribute(decode_split_mma_fp8<decltype(group)::value>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(fp8_shared_bytes)));
  });
}

// The fp8 caches p.k_fp8 / p.v_fp8; pages of other sizes than 64 take decode_split on them.
inline void launch_decode_split_mma_fp8(const decode_problem& p, float* partials, cudaStream_t stream) {
  if (p.page != mma_page) {
    launch_decode_split<__nv_fp8_e4m3>(p, partials, stream);
    return;
  }
  launch_split_and_combine(p, partials, stream, [&](auto group, dim3 grid, int splits) {
    decode_split_mma_fp8<decltype(group)::value><<<grid, mma_threads, fp8_shared_bytes, stream>>>(p, partials, splits);
  });
}

}  // namespace
}  // namespace aisp::ch18
