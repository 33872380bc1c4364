// The attention lab's problem: O = softmax(Q K^T / sqrt(d) [+ causal mask]) V per (batch, head),
// bf16 in and out. Q and O are (b, h, s, d), K and V (b, hkv, s, d), all row-major, with
// h = hkv * group: the `group` query heads of one KV head are adjacent (GQA; group 1 is MHA).
#pragma once

#include <cuda_bf16.h>

#include <cstddef>

#include "aisp/run_context.hpp"

namespace aisp::labs_attention {

struct attention_problem {
  const __nv_bfloat16* q = nullptr;
  const __nv_bfloat16* k = nullptr;
  const __nv_bfloat16* v = nullptr;
  __nv_bfloat16* o = nullptr;
  int batch = 0;
  int kv_heads = 0;
  int group = 1;  // query heads per KV head
  int seq = 0;    // queries and keys alike
  int dim = 0;    // head dimension
  bool causal = false;
  // Sliding window (with causal): query i sees keys i - window + 1 .. i; 0 for none.
  int window = 0;
  // With a window: skip the key tiles wholly outside every query's window of the block (true), or
  // compute them and let the mask zero them (ch18:sliding_window's baseline).
  bool skip_outside_window = true;
  // Variable lengths (ch18:varlen_prefill, Note [variable lengths] in fused_mma.cuh): sequence b
  // has offsets[b + 1] - offsets[b] tokens (device memory, batch + 1 entries); `seq` is the
  // longest. Null: every sequence has `seq` tokens.
  const int* offsets = nullptr;
  bool packed = false;  // with offsets: each head's tokens of all sequences back to back, (h, total, d)
  int total = 0;        // packed: the tokens of all sequences
  float scale = 1.0f;  // 1 / sqrt(dim)

  [[nodiscard]] __host__ __device__ int heads() const { return kv_heads * group; }
};

// 1 / the row's sum of exponentials: each thread of a quad holds a partial sum of the row.
__device__ __forceinline__ float inverse_row_sum(float partial) {
  partial += __shfl_xor_sync(0xffffffffU, partial, 1);
  partial += __shfl_xor_sync(0xffffffffU, partial, 2);
  return partial > 0.0f ? 1.0f / partial : 0.0f;
}

// The epilogue of the mma.sync kernel: a warp's 16 output rows from accumulators in the
// m16n8 / wgmma layout (n-block j of row `warp_q0 + g + 8 half` at columns 8j + 2t, elements
// 2 half and 2 half + 1), each row divided by its softmax sum (the quad's 4 partial sums added
// first). `plane_o` is query 0 of this head's rows; rows at or past `rows_end` are not stored.
template <int Dim>
__device__ __forceinline__ void store_normalized_rows(const float (&acc)[Dim / 8][4], const float (&row_sum)[2],
                                                      __nv_bfloat16* plane_o, int warp_q0, int rows_end, int g, int t) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const float inverse = inverse_row_sum(row_sum[half]);
    const int query = warp_q0 + g + 8 * half;
    if (query >= rows_end) continue;
    __nv_bfloat16* row = plane_o + static_cast<std::size_t>(query) * Dim;
#pragma unroll
    for (int j = 0; j < Dim / 8; ++j) {
      *reinterpret_cast<__nv_bfloat162*>(row + 8 * j + 2 * t) =
          __floats2bfloat162_rn(acc[j][2 * half] * inverse, acc[j][2 * half + 1] * inverse);
    }
  }
}

// A problem whose q, k, v and o point at the pair's buffers of those names; the shape is the caller's.
[[nodiscard]] inline attention_problem with_attention_buffers(run_context& ctx) {
  attention_problem p;
  p.q = ctx.as<const __nv_bfloat16>("q");
  p.k = ctx.as<const __nv_bfloat16>("k");
  p.v = ctx.as<const __nv_bfloat16>("v");
  p.o = ctx.as<__nv_bfloat16>("o");
  return p;
}

}  // namespace aisp::labs_attention
