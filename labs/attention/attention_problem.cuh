// The attention lab's problem: O = softmax(Q K^T / sqrt(d) [+ causal mask]) V per (batch, head),
// bf16 in and out. Q and O are (b, h, s, d), K and V (b, hkv, s, d), all row-major, with
// h = hkv * group: the `group` query heads of one KV head are adjacent (GQA; group 1 is MHA).
#pragma once

#include <cuda_bf16.h>

#include <cstddef>

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
  float scale = 1.0f;  // 1 / sqrt(dim)

  [[nodiscard]] __host__ __device__ int heads() const { return kv_heads * group; }
};

}  // namespace aisp::labs_attention
