// labs/decode's GPU decoder, kernel by kernel (issue 21): the model of decoder_reference.hpp with
// bf16 weights (an input: Note [weights as an input]) and a bf16 KV cache, fp32 activations and fp32 accumulation. A launch processes
// `rows`: tokens, each of some sequence (its cache slot) at some position, so one set of kernels
// serves a prefill (a prompt's positions), a decode step (a position of each live sequence), a
// recomputed prefix and a continuous batch alike.
//
// Note [batch-invariant rows]
// Every kernel computes a row exactly the same whatever else is in the launch: a row's sums run in
// one fixed order (a matvec: Note [tensor-core rows] in decode_matvec.cuh; attention: a fixed
// block shape over the row's own positions), never split by how many rows there are. So two schedulers that batch the same requests differently
// produce the same tokens bit for bit, which is what lets the serving pairs verify a scheduler by
// its tokens (a scheduler that drops or shortens a request cannot match), and what makes the
// KV cache's tokens equal to a recomputed prefix's. cuBLAS picks kernels by shape, and its rows
// change with their batch-mates: it would not give this. The price is that the matvec is the
// one kernel for every batch size: at decode it streams weights (the job), at a long prefill it
// is a split-tf32 matmul of 16 or 32 rows a block, far from a tuned GEMM.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/dependent_launch.cuh"
#include "decoder_reference.hpp"

namespace aisp::decode {
namespace {

constexpr int row_block_threads = 256;
constexpr int norm_block_threads = 128;  // rms_norm_rows_kernel and the matvec that folds it in (Note [folded norm])
constexpr int attention_threads = 512;  // Note [attention latency]
constexpr int attention_max_head_dim = 128;

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

// Note [paged cache]: a cache of pages (pages, layers, page_tokens, kv_width), where slot s's
// position p lives in page table[s * pages_per_slot + p / page_tokens] (kv_pages.hpp keeps the
// table). The kernels take the cache's layout as a template argument: contiguous_cache is the
// layout above, with the arithmetic it always had; paged_cache reads the table.
struct contiguous_cache {
  [[nodiscard]] __device__ std::int64_t offset(const model_dims& m, int slot, int layer, int position) const {
    return m.cache_offset(slot, layer, position);
  }
};

struct paged_cache {
  const int* table;
  int page_tokens;
  int pages_per_slot;
  [[nodiscard]] __device__ std::int64_t offset(const model_dims& m, int slot, int layer, int position) const {
    const int page = table[slot * pages_per_slot + position / page_tokens];
    return ((static_cast<std::int64_t>(page) * m.layers + layer) * page_tokens + position % page_tokens) * m.kv_width();
  }
};

// ---- the row kernels ----

__device__ __forceinline__ float warp_sum(float value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// Sum over a block of row_block_threads, norm_block_threads or attention_threads, in one fixed order; every thread
// gets the total. `shared` holds a float per warp.
__device__ float block_sum(float value, float* shared) {
  value = warp_sum(value);
  const int warps = static_cast<int>(blockDim.x) / 32;
  __syncthreads();  // `shared` may still be read by a previous call
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = value;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < warps; ++w) total += shared[w];
  return total;
}

__device__ float block_max(float value, float* shared) {
  for (int offset = 16; offset > 0; offset /= 2) value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  __syncthreads();
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = value;
  __syncthreads();
  float largest = shared[0];
  for (int w = 1; w < static_cast<int>(blockDim.x) / 32; ++w) largest = fmaxf(largest, shared[w]);
  return largest;
}

// x[r, :] = embedding[token[r], :]
__global__ void embed_rows_kernel(const __nv_bfloat16* embedding, row_meta rows, float* x, int d_model) {
  ptx::let_next_kernel_start();  // the matvec after this one may load its weights now (Note [weights before the wait])
  const int token = rows.token[blockIdx.x];
  for (int i = static_cast<int>(threadIdx.x); i < d_model; i += static_cast<int>(blockDim.x))
    x[static_cast<std::int64_t>(blockIdx.x) * d_model + i] = __bfloat162float(embedding[static_cast<std::int64_t>(token) * d_model + i]);
}

// 1 / sqrt(mean(row^2) + eps) over the first norm_block_threads of a block: thread t sums t, t +
// 128, ... in order, then block_sum (a larger block's other warps add +0.0f, which changes no
// sum of squares). One function, so the norm kernel and the matvec that folds the norm in (Note
// [folded norm]) compute the same bits.
__device__ float rms_scale(const float* row, int d_model, float eps, float* shared) {
  float square = 0.0f;
  if (threadIdx.x < norm_block_threads) {
    for (int i = static_cast<int>(threadIdx.x); i < d_model; i += norm_block_threads) square = fmaf(row[i], row[i], square);
  }
  return 1.0f / sqrtf(block_sum(square, shared) / static_cast<float>(d_model) + eps);
}

// out[i, :] = x[src, :] / sqrt(mean(x[src, :]^2) + eps), src = gather ? gather[i] : i (the gains are ones).
__global__ void __launch_bounds__(norm_block_threads) rms_norm_rows_kernel(const float* x, float* out, int d_model, const int* gather,
                                                                           float eps) {
  ptx::let_next_kernel_start();  // the matvec after this one may load its weights now (Note [weights before the wait])
  __shared__ float partial[norm_block_threads / 32];
  const std::int64_t src = gather != nullptr ? gather[blockIdx.x] : blockIdx.x;
  const float* row = x + src * d_model;
  const float scale = rms_scale(row, d_model, eps, partial);
  for (int i = static_cast<int>(threadIdx.x); i < d_model; i += norm_block_threads)
    out[static_cast<std::int64_t>(blockIdx.x) * d_model + i] = __fmul_rn(row[i], scale);
}

// The pair (i, i + half) of a head rotated to `position` (RoPE, half-split pairs), with angles in
// double as the reference takes them: (low, high).
__device__ __forceinline__ float2 rope_pair(double a, double b, int position, int i, int head_dim, double theta) {
  const double angle = position * pow(theta, -2.0 * i / head_dim);
  double sine = 0;
  double cosine = 0;
  sincos(angle, &sine, &cosine);
  return make_float2(static_cast<float>(a * cosine - b * sine), static_cast<float>(a * sine + b * cosine));
}

// Rotate each row's query and key heads (rope_pair at its position), then store its K and V as
// bf16 in its slot's cache. qkv (rows, qkv_width) fp32: q heads, then k heads, then v heads. A
// block a (row, head) of head_dim / 2 threads, one pair each: one block a row once took 10.6 us
// a layer at batch 1, 10% of the step (ncu, H200, 2026-11-29); every value is computed as it
// was, bit for bit. A launch of one row folds this into attention (Note [rope in attention]).
template <class Cache>
__global__ void rope_and_cache_kernel(float* qkv, row_meta rows, __nv_bfloat16* k_cache, __nv_bfloat16* v_cache, model_dims m,
                                      Cache cache, int layer, double theta) {
  ptx::let_next_kernel_start();
  ptx::wait_for_previous_kernel();  // a dependent launch: qkv is the matvec's before it
  const int r = static_cast<int>(blockIdx.x);
  const int h = static_cast<int>(blockIdx.y);  // q heads, then k heads, then v heads
  const int i = static_cast<int>(threadIdx.x);
  const int half = m.head_dim / 2;
  const int position = rows.position[r];
  float* head = qkv + static_cast<std::int64_t>(r) * m.qkv_width() + static_cast<std::int64_t>(h) * m.head_dim;
  const std::int64_t at = cache.offset(m, rows.slot[r], layer, position);
  if (h >= m.heads + m.kv_heads) {  // a v head: stored as it is
    const std::int64_t e = static_cast<std::int64_t>(h - m.heads - m.kv_heads) * m.head_dim + i;
    v_cache[at + e] = __float2bfloat16_rn(head[i]);
    v_cache[at + e + half] = __float2bfloat16_rn(head[i + half]);
    return;
  }
  const float2 rotated = rope_pair(head[i], head[i + half], position, i, m.head_dim, theta);
  head[i] = rotated.x;
  head[i + half] = rotated.y;
  if (h >= m.heads) {  // a k head: its rotated values into the cache
    const std::int64_t e = static_cast<std::int64_t>(h - m.heads) * m.head_dim + i;
    k_cache[at + e] = __float2bfloat16_rn(rotated.x);
    k_cache[at + e + half] = __float2bfloat16_rn(rotated.y);
  }
}

// attended[r, head] = softmax_j(q . k_j / sqrt(head_dim)) v_j over positions 0..position(r) of
// the row's slot at `layer`; query head h reads KV head h / (heads / kv_heads). A block a (row,
// head); dynamic shared memory: max_len scores, then q, the new k and the new v (head_dim each).
//
// Note [rope in attention]: a launch of one row (RopeHere) rotates its q head and its KV head's
// new key itself, as rope_and_cache_kernel does (rope_pair, the same bf16 roundings), takes the
// new key and value from shared memory, and the first query head of each KV group stores them in
// the cache; the other blocks of the group read the cache only below the row's position. That
// spares a launch and a kernel boundary a layer. A launch of several rows must not: a row reads
// the keys that other rows of its slot append in the same launch, so rope_and_cache_kernel runs
// first.
template <class Cache, bool RopeHere>
__global__ void __launch_bounds__(attention_threads) attention_rows_kernel(const float* qkv, row_meta rows, __nv_bfloat16* k_cache,
                                                                           __nv_bfloat16* v_cache, float* attended, model_dims m,
                                                                           Cache cache, int layer, double theta) {
  ptx::let_next_kernel_start();  // the matvec after this one may load its weights now (Note [weights before the wait])
  ptx::wait_for_previous_kernel();  // a dependent launch: qkv (and the cache) are the kernels' before it
  extern __shared__ float scores[];
  __shared__ float partial[attention_threads / 32];
  const int r = static_cast<int>(blockIdx.x);
  const int head = static_cast<int>(blockIdx.y);
  const int keys = rows.position[r] + 1;
  float* q = scores + m.max_len;
  float* new_k = q + m.head_dim;
  float* new_v = new_k + m.head_dim;
  const float* q_row = qkv + static_cast<std::int64_t>(r) * m.qkv_width() + head * m.head_dim;
  const int group = m.heads / m.kv_heads;
  const int kv_head = head / group;
  const int slot = rows.slot[r];
  const int head_offset = kv_head * m.head_dim;
  if constexpr (RopeHere) {
    const int half = m.head_dim / 2;
    const float* k_row = qkv + static_cast<std::int64_t>(r) * m.qkv_width() + static_cast<std::int64_t>(m.heads + kv_head) * m.head_dim;
    const float* v_row = k_row + static_cast<std::int64_t>(m.kv_heads) * m.head_dim;
    const std::int64_t at = cache.offset(m, slot, layer, keys - 1) + head_offset;
    for (int i = static_cast<int>(threadIdx.x); i < half; i += attention_threads) {
      const float2 rotated_q = rope_pair(q_row[i], q_row[i + half], keys - 1, i, m.head_dim, theta);
      q[i] = rotated_q.x;
      q[i + half] = rotated_q.y;
      const float2 rotated_k = rope_pair(k_row[i], k_row[i + half], keys - 1, i, m.head_dim, theta);
      const __nv_bfloat16 k_pair[2] = {__float2bfloat16_rn(rotated_k.x), __float2bfloat16_rn(rotated_k.y)};
      const __nv_bfloat16 v_pair[2] = {__float2bfloat16_rn(v_row[i]), __float2bfloat16_rn(v_row[i + half])};
      for (int e = 0; e < 2; ++e) {
        new_k[i + e * half] = __bfloat162float(k_pair[e]);
        new_v[i + e * half] = __bfloat162float(v_pair[e]);
        if (head % group == 0) {
          k_cache[at + i + e * half] = k_pair[e];
          v_cache[at + i + e * half] = v_pair[e];
        }
      }
    }
  } else {
    for (int i = static_cast<int>(threadIdx.x); i < m.head_dim; i += attention_threads) q[i] = q_row[i];
  }
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const float scale = 1.0f / sqrtf(static_cast<float>(m.head_dim));
  // Note [attention latency]: a warp takes keys_a_round keys at once and loads all their values
  // before it multiplies any, so a round costs one trip to memory, not one a key; each key's dot
  // is still the lane's fmas over i = lane, lane + 32, ... and one warp_sum. 512 threads a block:
  // a launch of one row is 32 blocks, and the V loop's parts walk a quarter of the keys each.
  // 32.8 -> 14.0 us a layer at one row, the batch-1 step 1.220 -> 0.977 ms (64 cached
  // positions; H200s, 2026-12-02, labs/decode/README.md).
  constexpr int keys_a_round = 4;
  constexpr int dims_a_lane = attention_max_head_dim / 32;
  constexpr int warps = attention_threads / 32;
  for (int first = warp * keys_a_round; first < keys; first += warps * keys_a_round) {
    float values[keys_a_round][dims_a_lane];
#pragma unroll
    for (int u = 0; u < keys_a_round; ++u) {
      const int j = first + u;
      const __nv_bfloat16* key = k_cache + cache.offset(m, slot, layer, j < keys ? j : 0) + head_offset;
      const bool fresh = RopeHere && j == keys - 1;
#pragma unroll
      for (int e = 0; e < dims_a_lane; ++e) {
        const int i = lane + 32 * e;
        values[u][e] = j < keys && i < m.head_dim ? (fresh ? new_k[i] : __bfloat162float(key[i])) : 0.0f;
      }
    }
#pragma unroll
    for (int u = 0; u < keys_a_round; ++u) {
      float dot = 0.0f;
#pragma unroll
      for (int e = 0; e < dims_a_lane; ++e) {
        if (lane + 32 * e < m.head_dim) dot = fmaf(q[lane + 32 * e], values[u][e], dot);
      }
      dot = warp_sum(dot);
      if (lane == 0 && first + u < keys) scores[first + u] = dot * scale;
    }
  }
  __syncthreads();
  float largest = -INFINITY;
  for (int j = static_cast<int>(threadIdx.x); j < keys; j += attention_threads) largest = fmaxf(largest, scores[j]);
  largest = block_max(largest, partial);
  float total = 0.0f;
  for (int j = static_cast<int>(threadIdx.x); j < keys; j += attention_threads) {
    scores[j] = __expf(scores[j] - largest);
    total += scores[j];
  }
  total = block_sum(total, partial);  // its barriers also publish the exponentials
  // Thread t sums dim t % head_dim over positions part, part + parts, ...; the parts meet in q.
  const int parts = attention_threads / m.head_dim;
  const int dim = static_cast<int>(threadIdx.x) % m.head_dim;
  const int part = static_cast<int>(threadIdx.x) / m.head_dim;
  float sum = 0.0f;
  if (part < parts) {
#pragma unroll 8
    for (int j = part; j < keys; j += parts) {  // unrolled: the loads run ahead of the adds, whose order stays
      const float value = RopeHere && j == keys - 1 ? new_v[dim] : __bfloat162float(v_cache[cache.offset(m, slot, layer, j) + head_offset + dim]);
      sum = fmaf(scores[j], value, sum);
    }
  }
  __syncthreads();
  float* by_part = scores;  // the scores are spent
  if (part < parts) by_part[part * m.head_dim + dim] = sum;
  __syncthreads();
  if (part == 0) {
    float value = 0.0f;
    for (int p = 0; p < parts; ++p) value += by_part[p * m.head_dim + dim];
    attended[static_cast<std::int64_t>(r) * m.q_width() + head * m.head_dim + dim] = value / total;
  }
}

// silu(gate) up, one expression, so the matvec that folds it in (Note [folded swiglu]) gets these bits.
__device__ __forceinline__ float swiglu_value(float gate, float up) { return gate / (1.0f + expf(-gate)) * up; }

// act[r, i] = silu(gate[r, i]) * up[r, i]; gate_up (rows, 2 ffn): the gate, then up. Blocks
// (row, a block's span of i): one block a row looped over 8192 values with a load's latency
// each, 26.8 us a layer at batch 1, a quarter of the step (ncu, H200, 2026-11-29).
__global__ void swiglu_rows_kernel(const float* gate_up, float* act, int ffn) {
  ptx::let_next_kernel_start();  // the matvec after this one may load its weights now (Note [weights before the wait])
  const float* row = gate_up + static_cast<std::int64_t>(blockIdx.x) * 2 * ffn;
  const int i = static_cast<int>(blockIdx.y * blockDim.x + threadIdx.x);
  if (i >= ffn) return;
  act[static_cast<std::int64_t>(blockIdx.x) * ffn + i] = swiglu_value(row[i], row[ffn + i]);
}

// next[s] = argmax of logits[s, :], the lowest id on a tie (as the reference's greedy).
__global__ void __launch_bounds__(row_block_threads) argmax_rows_kernel(const float* logits, int vocab, int* next) {
  __shared__ float best_value[row_block_threads];
  __shared__ int best_id[row_block_threads];
  const float* row = logits + static_cast<std::int64_t>(blockIdx.x) * vocab;
  float value = -INFINITY;
  int id = vocab;
  for (int t = static_cast<int>(threadIdx.x); t < vocab; t += row_block_threads) {
    if (row[t] > value || id == vocab) {
      value = row[t];
      id = t;
    }
  }
  best_value[threadIdx.x] = value;
  best_id[threadIdx.x] = id;
  __syncthreads();
  for (int stride = row_block_threads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) {
      const float other = best_value[threadIdx.x + stride];
      const int other_id = best_id[threadIdx.x + stride];
      if (other > best_value[threadIdx.x] || (other == best_value[threadIdx.x] && other_id < best_id[threadIdx.x])) {
        best_value[threadIdx.x] = other;
        best_id[threadIdx.x] = other_id;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) next[blockIdx.x] = best_id[0] < vocab ? best_id[0] : 0;
}

}  // namespace
}  // namespace aisp::decode
