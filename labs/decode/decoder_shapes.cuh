// What labs/decode's kernels and their host callers share of a launch: where each row belongs,
// the model's shape and attention's block sizes. A named namespace, so gpu_decoder's declaration
// (gpu_decoder.cuh) and its one compiled unit (gpu_decoder.cu) agree on them (Note [one decoder
// unit]).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace aisp::decode {

// Attention's block sizes: wide, and narrow where one wave of wide blocks would not hold a launch
// (a narrow block plays two of a wide one's threads; Notes [attention latency], [attention waves]).
constexpr int attention_threads = 512;
constexpr int attention_narrow_threads = 256;

// Where each processed row belongs; device arrays of the launch's row count.
struct row_meta {
  const int* token;
  const int* slot;
  const int* position;
};

// The model's shape as the kernels need it.
struct model_dims {
  int d_model, heads, kv_heads, head_dim, ffn, vocab, layers;
  int max_len;  // positions a cache slot holds
  [[nodiscard]] __host__ __device__ int q_width() const { return heads * head_dim; }
  [[nodiscard]] __host__ __device__ int kv_width() const { return kv_heads * head_dim; }
  [[nodiscard]] __host__ __device__ int qkv_width() const { return q_width() + 2 * kv_width(); }
  // Element offset of (slot, layer, position) in a cache of (slots, layers, max_len, kv_width).
  [[nodiscard]] __host__ __device__ std::int64_t cache_offset(int slot, int layer, int position) const {
    return ((static_cast<std::int64_t>(slot) * layers + layer) * max_len + position) * kv_width();
  }
};

}  // namespace aisp::decode
