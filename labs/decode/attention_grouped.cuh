// labs/decode's attention over a KV head's query heads in one block (Note [grouped attention]),
// for launches of many rows, and AISP_DECODE_ATTENTION, which turns it on for an A/B run.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <string>

#include "aisp/check.hpp"
#include "decoder_kernels.cuh"

namespace aisp::decode {
namespace {

// Note [grouped attention]: at 16 rows a launch of one block a (row, query head) is 512 blocks,
// two waves of wide blocks on 132 SMs, so it runs narrow ones that each play two threads of a
// wide block (Note [attention waves]): every SM does twice the work of the 8-row launch, and the
// 16-row attention costs ~1.3x the 8-row one (14.8 against 8.8 us a layer wide, 11.8 narrow:
// Nsight Compute, H200, 2026-12-02). But the `group` query heads of a KV head read the same
// keys and values (GQA). Here a block of attention_threads takes a (row, KV head): 128 blocks at
// 16 rows, one wave at one an SM. Each warp loads a round of keys once and makes every head's
// dot from it; each thread loads a value once and adds it to every head's sum. Every head's
// sums are the wide block's: the same lanes' fmas and warp_sum for a key's dot, the same
// block_max and block_sum_played<1> for its softmax, the same thread's values in the same order
// and the same by_part sum at the end. So a row's bits are those of every other launch (Note
// [batch-invariant rows]). Built on 2026-12-07, not yet run on a GPU: off unless
// AISP_DECODE_ATTENTION=grouped.
template <class Cache, int HeadLanes, int Group>
__global__ void __launch_bounds__(attention_threads, 1)
    attention_grouped_kernel(const float* qkv, row_meta rows, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache, float* attended,
                             model_dims m, Cache cache, int layer) {
  ptx::let_next_kernel_start();  // the matvec after this one may load its weights now (Note [weights before the wait])
  constexpr int keys_a_round = 4;  // the wide block's (Note [attention latency])
  constexpr int dims_a_lane = HeadLanes;
  constexpr int warps = attention_threads / 32;
  constexpr int values_ahead = 8 / (HeadLanes / 2);
  constexpr int values_a_trip = 8;
  extern __shared__ float grouped_shared[];
  __shared__ float partial[attention_threads / 32];
  const int r = static_cast<int>(blockIdx.x);
  const int kv_head = static_cast<int>(blockIdx.y);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  ptx::wait_for_previous_kernel();  // rope_and_cache_kernel appends keys this launch's rows read
  const int keys = rows.position[r] + 1;
  const int slot = rows.slot[r];
  const int head_offset = kv_head * m.head_dim;
  // Head g's scores (then its parts' sums) at g * stride; the heads' queries after them.
  const int stride = max(m.max_len, attention_threads);
  float* q = grouped_shared + Group * stride;
  const cached_head<Cache> head_kv{k_cache, v_cache, cache, m, slot, layer, head_offset, keys};
  __nv_bfloat16 held[keys_a_round][dims_a_lane];
  const auto load_round = [&](int base) { head_kv.load_round(held, base, warp, lane); };
  const int parts = attention_threads / m.head_dim;
  const int dim = static_cast<int>(threadIdx.x) % m.head_dim;
  const int part = static_cast<int>(threadIdx.x) / m.head_dim;
  const auto value_at = [&](int j) { return head_kv.value(j, dim); };
  __nv_bfloat16 ahead[values_ahead];
#pragma unroll
  for (int t = 0; t < values_ahead; ++t) ahead[t] = value_at(part + parts * t);
  load_round(0);
  const float* q_rows = qkv + static_cast<std::int64_t>(r) * m.qkv_width() + static_cast<std::int64_t>(kv_head) * Group * m.head_dim;
  for (int i = static_cast<int>(threadIdx.x); i < Group * m.head_dim; i += attention_threads) q[i] = q_rows[i];
  __syncthreads();
  const float scale = 1.0f / sqrtf(static_cast<float>(m.head_dim));
  for (int base = 0; base < keys; base += warps * keys_a_round) {
    if (base > 0) load_round(base);
#pragma unroll
    for (int u = 0; u < keys_a_round; ++u) {
      const int j = base + warp * keys_a_round + u;
#pragma unroll
      for (int g = 0; g < Group; ++g) {
        float dot = 0.0f;
#pragma unroll
        for (int e = 0; e < dims_a_lane; ++e) {
          const int i = lane + 32 * e;
          if (i < m.head_dim) dot = fmaf(q[g * m.head_dim + i], __bfloat162float(held[u][e]), dot);
        }
        dot = warp_sum(dot);
        if (lane == 0 && j < keys) grouped_shared[g * stride + j] = dot * scale;
      }
    }
  }
  __syncthreads();
  float total[Group];
#pragma unroll
  for (int g = 0; g < Group; ++g) {
    float* scores = grouped_shared + g * stride;
    float largest = -INFINITY;
    for (int j = static_cast<int>(threadIdx.x); j < keys; j += attention_threads) largest = fmaxf(largest, scores[j]);
    largest = block_max(largest, partial);
    float sum = 0.0f;
    for (int j = static_cast<int>(threadIdx.x); j < keys; j += attention_threads) {
      scores[j] = __expf(scores[j] - largest);
      sum += scores[j];
    }
    total[g] = block_sum_played<1>({sum}, partial);  // its barriers also publish the exponentials
  }
  // A thread past the last whole part (head_dim not dividing 512) sums nothing.
  const int summed = part < parts ? keys : 0;
  float sum[Group];
#pragma unroll
  for (int g = 0; g < Group; ++g) sum[g] = 0.0f;
  const auto add = [&](int j, __nv_bfloat16 value) {
    if (j >= summed) return;
    const float v = __bfloat162float(value);
#pragma unroll
    for (int g = 0; g < Group; ++g) sum[g] = fmaf(grouped_shared[g * stride + j], v, sum[g]);
  };
#pragma unroll
  for (int t = 0; t < values_ahead; ++t) add(part + parts * t, ahead[t]);
  for (int step = values_ahead; part + parts * step < summed; step += values_a_trip) {
    __nv_bfloat16 values[values_a_trip];
#pragma unroll
    for (int t = 0; t < values_a_trip; ++t) values[t] = value_at(part + parts * (step + t));
#pragma unroll
    for (int t = 0; t < values_a_trip; ++t) add(part + parts * (step + t), values[t]);
  }
  __syncthreads();  // the scores are spent; head g's played thread p's sum at g * stride + p
#pragma unroll
  for (int g = 0; g < Group; ++g) grouped_shared[g * stride + static_cast<int>(threadIdx.x)] = sum[g];
  __syncthreads();
  if (part == 0) {
#pragma unroll
    for (int g = 0; g < Group; ++g) {
      float value = 0.0f;
      for (int p = 0; p < parts; ++p) value += grouped_shared[g * stride + p * m.head_dim + dim];
      const int head = kv_head * Group + g;
      attended[static_cast<std::int64_t>(r) * m.q_width() + head * m.head_dim + dim] = value / total[g];
    }
  }
}

// The query heads a KV head serves that grouped attention is built for; others run narrow blocks.
constexpr bool attention_group_built(int group) { return group == 2 || group == 4; }

// Its dynamic shared memory: each head's scores (a stride of max(max_len, attention_threads)),
// then the heads' queries.
inline int attention_grouped_shared_bytes(int group, int max_len, int head_dim) {
  return static_cast<int>((static_cast<std::size_t>(group) * std::max(max_len, attention_threads) + static_cast<std::size_t>(group) * head_dim) *
                          sizeof(float));
}

// AISP_DECODE_ATTENTION, read as each model is built (so a test can set it): unset or "narrow"
// runs narrow blocks where wide ones would not fit one wave (Note [attention waves]); "grouped"
// runs attention_grouped_kernel there (Note [grouped attention]). Anything else is an error,
// never ignored.
inline bool attention_grouped_asked() {
  const char* value = std::getenv("AISP_DECODE_ATTENTION");
  const std::string chosen = value == nullptr ? "narrow" : value;
  AISP_EXPECTS(chosen == "narrow" || chosen == "grouped", "labs/decode: AISP_DECODE_ATTENTION takes narrow or grouped, not '" + chosen + "'");
  return chosen == "grouped";
}

}  // namespace
}  // namespace aisp::decode
