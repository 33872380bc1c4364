// Kernels of ch18:paged_decode: one query token per sequence against its KV cache, stored in
// pages of `page` tokens that a page table scatters over a pool (paged_decode.cu).
//
// Cache layout: k_cache and v_cache are (pool pages, hkv, page, d) bf16: one KV head's page is
// page x d contiguous values (16 KB at 64 x 128). Token t of sequence s lives in physical page
// table[s][t / page], slot t % page. Queries and outputs are (b, hkv, group, d): the group query
// heads of a KV head are adjacent.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "aisp/check.hpp"

namespace aisp::ch18 {
// Internal linkage: two pair files include these kernels (non-template __global__ functions).
namespace {

struct decode_problem {
  const __nv_bfloat16* q = nullptr;
  const __nv_bfloat16* k_cache = nullptr;
  const __nv_bfloat16* v_cache = nullptr;
  const __nv_fp8_e4m3* k_fp8 = nullptr;  // the same caches in fp8 (ch18:fp8_kv_decode), else null
  const __nv_fp8_e4m3* v_fp8 = nullptr;
  const std::int32_t* page_table = nullptr;  // (b, pages)
  __nv_bfloat16* o = nullptr;
  int batch = 0;
  int kv_heads = 0;
  int group = 0;
  int pages = 0;  // per sequence
  int page = 0;   // tokens per page
  float scale = 1.0f;        // on the scores: 1/sqrt(d), over the fp8 K copy's scale where K is read from it
  float value_scale = 1.0f;  // on the output: 1 over the fp8 V copy's scale where V is read from it, else 1
  [[nodiscard]] __host__ __device__ int heads() const { return kv_heads * group; }
  [[nodiscard]] __host__ __device__ int tokens() const { return pages * page; }
  // The first value of token `token`'s row for KV head `kv_head` of sequence `sequence`.
  [[nodiscard]] __device__ std::size_t row_of(int sequence, int kv_head, int token) const {
    const int physical = page_table[static_cast<std::size_t>(sequence) * pages + token / page];
    return ((static_cast<std::size_t>(physical) * kv_heads + kv_head) * page + token % page) * static_cast<std::size_t>(128);
  }
};

constexpr int head_dim = 128;  // the chapter's pairs; checked in paged_decode.cu
constexpr int decode_threads = 128;

// ---- Baseline: one block per (sequence, query head), walking the pages ----
// Each of the 4 warps takes every 4th token; a lane holds 4 of the 128 dims of q and of the
// output. Per token the warp loads 8 bytes a lane of K, reduces the dot product with five
// shuffles, updates its online softmax (m, l) and adds p v to its accumulators; at the end the
// four warps' states are merged in shared memory.
__global__ void __launch_bounds__(decode_threads) decode_per_head(decode_problem p) {
  __shared__ float partial_acc[decode_threads / 32][head_dim];
  __shared__ float partial_max[decode_threads / 32];
  __shared__ float partial_sum[decode_threads / 32];
  const int head = blockIdx.x;
  const int sequence = blockIdx.y;
  const int kv_head = head / p.group;
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const __nv_bfloat16* q = p.q + (static_cast<std::size_t>(sequence) * p.heads() + head) * head_dim;
  float query[4];
  float acc[4] = {};
#pragma unroll
  for (int i = 0; i < 4; ++i) query[i] = __bfloat162float(q[lane * 4 + i]);
  float running_max = -INFINITY;
  float running_sum = 0.0f;
  for (int token = warp; token < p.tokens(); token += decode_threads / 32) {
    const std::size_t row = p.row_of(sequence, kv_head, token) + lane * 4;
    const uint2 k_raw = *reinterpret_cast<const uint2*>(p.k_cache + row);
    const auto* k4 = reinterpret_cast<const __nv_bfloat162*>(&k_raw);
    float dot = query[0] * __low2float(k4[0]) + query[1] * __high2float(k4[0]) + query[2] * __low2float(k4[1]) +
                query[3] * __high2float(k4[1]);
    for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffU, dot, offset);
    const float score = dot * p.scale;
    const float new_max = fmaxf(running_max, score);
    const float rescale = __expf(running_max - new_max);
    const float weight = __expf(score - new_max);
    running_max = new_max;
    running_sum = running_sum * rescale + weight;
    const uint2 v_raw = *reinterpret_cast<const uint2*>(p.v_cache + row);
    const auto* v4 = reinterpret_cast<const __nv_bfloat162*>(&v_raw);
    acc[0] = acc[0] * rescale + weight * __low2float(v4[0]);
    acc[1] = acc[1] * rescale + weight * __high2float(v4[0]);
    acc[2] = acc[2] * rescale + weight * __low2float(v4[1]);
    acc[3] = acc[3] * rescale + weight * __high2float(v4[1]);
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) partial_acc[warp][lane * 4 + i] = acc[i];
  if (lane == 0) {
    partial_max[warp] = running_max;
    partial_sum[warp] = running_sum;
  }
  __syncthreads();
  const int dim = threadIdx.x;  // 128 threads, one output dim each
  float largest = -INFINITY;
  for (int w = 0; w < decode_threads / 32; ++w) largest = fmaxf(largest, partial_max[w]);
  float total = 0.0f;
  float value = 0.0f;
  for (int w = 0; w < decode_threads / 32; ++w) {
    if (partial_max[w] == -INFINITY) continue;  // a warp with no token (fewer tokens than warps)
    const float weight = __expf(partial_max[w] - largest);
    total += partial_sum[w] * weight;
    value += partial_acc[w][dim] * weight;
  }
  p.o[(static_cast<std::size_t>(sequence) * p.heads() + head) * head_dim + dim] = __float2bfloat16_rn(value / total);
}

inline void launch_decode_per_head(const decode_problem& p, cudaStream_t stream) {
  decode_per_head<<<dim3(static_cast<unsigned>(p.heads()), static_cast<unsigned>(p.batch)), decode_threads, 0, stream>>>(p);
  AISP_CHECK_LAUNCH();
}

// ---- Optimized: split-K over the pages (flash-decoding), one block per KV head ----
// Note [split decode]: a block owns one (sequence, KV head, split of pages_per_split pages) and
// all `group` query heads of that KV head, so each K and V byte is read once, not once per query
// head. A half-warp takes two tokens a step, each lane 16 bytes (8 dims) of each K row and V row, all
// four loads issued before any is used: sixteen tokens (8 KB) in flight a block. Each
// half-warp keeps an online softmax per query head; the block merges its half-warps into one
// (max, sum, 128 partial outputs) per query head and split, and decode_combine merges the splits.
constexpr int pages_per_split = 8;
constexpr int half_warps = decode_threads / 16;

// 8 dims of one cache row, as a lane loads them (16 bytes of bf16, 8 of fp8) and widens them.
template <class Cache>
struct cache_slice;
template <>
struct cache_slice<__nv_bfloat16> {
  using raw = uint4;
  __device__ static void widen(const raw& bits, float (&out)[8]) {
    const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&bits);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      out[2 * i] = __low2float(pairs[i]);
      out[2 * i + 1] = __high2float(pairs[i]);
    }
  }
};
template <>
struct cache_slice<__nv_fp8_e4m3> {
  using raw = uint2;
  __device__ static void widen(const raw& bits, float (&out)[8]) {
    const auto* pairs = reinterpret_cast<const __nv_fp8x2_e4m3*>(&bits);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 two = static_cast<float2>(pairs[i]);
      out[2 * i] = two.x;
      out[2 * i + 1] = two.y;
    }
  }
};

template <int Group, class Cache = __nv_bfloat16>
__global__ void __launch_bounds__(decode_threads) decode_split(decode_problem p, float* partials, int splits) {
  using slice = cache_slice<Cache>;
  using raw = typename slice::raw;
  const Cache* k_cache;
  const Cache* v_cache;
  if constexpr (std::is_same_v<Cache, __nv_fp8_e4m3>) {
    k_cache = p.k_fp8;
    v_cache = p.v_fp8;
  } else {
    k_cache = p.k_cache;
    v_cache = p.v_cache;
  }
  __shared__ float merge_acc[half_warps][Group][head_dim];
  __shared__ float merge_max[half_warps][Group];
  __shared__ float merge_sum[half_warps][Group];
  const int split = blockIdx.x;
  const int kv_head = blockIdx.y;
  const int sequence = blockIdx.z;
  const int half = threadIdx.x / 16;
  const int sub = threadIdx.x % 16;  // lane within the half-warp: dims 8 sub .. 8 sub + 7
  const unsigned mask = 0xffffU << (16 * ((threadIdx.x / 16) % 2));
  float query[Group][8];
  float acc[Group][8] = {};
  float running_max[Group];
  float running_sum[Group] = {};
#pragma unroll
  for (int g = 0; g < Group; ++g) {
    const __nv_bfloat16* q = p.q + ((static_cast<std::size_t>(sequence) * p.kv_heads + kv_head) * Group + g) * head_dim + sub * 8;
    const uint4 raw = *reinterpret_cast<const uint4*>(q);
    const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      query[g][2 * i] = __low2float(pairs[i]) * p.scale;
      query[g][2 * i + 1] = __high2float(pairs[i]) * p.scale;
    }
    running_max[g] = -INFINITY;
  }
  const int first = split * pages_per_split * p.page;
  const int last = min(p.tokens(), first + pages_per_split * p.page);
  // One token's K and V row (16 bytes of each a lane) into the running softmax of every query head.
  const auto take = [&](const raw& k_raw, const raw& v_raw) {
    float key[8];
    float value[8];
    slice::widen(k_raw, key);
    slice::widen(v_raw, value);
#pragma unroll
    for (int g = 0; g < Group; ++g) {
      float dot = 0.0f;
#pragma unroll
      for (int i = 0; i < 8; ++i) dot += query[g][i] * key[i];
      for (int offset = 8; offset > 0; offset /= 2) dot += __shfl_xor_sync(mask, dot, offset);
      const float new_max = fmaxf(running_max[g], dot);
      const float rescale = __expf(running_max[g] - new_max);
      const float weight = __expf(dot - new_max);
      running_max[g] = new_max;
      running_sum[g] = running_sum[g] * rescale + weight;
#pragma unroll
      for (int i = 0; i < 8; ++i) acc[g][i] = acc[g][i] * rescale + weight * value[i];
    }
  };
  // Two tokens a half-warp per step, all four loads issued before either is used: 16 tokens
  // (8 KB) in flight a block.
  for (int token = first + half; token < last; token += 2 * half_warps) {
    const bool second = token + half_warps < last;
    const std::size_t row = p.row_of(sequence, kv_head, token) + sub * 8;
    const raw k0 = *reinterpret_cast<const raw*>(k_cache + row);
    const raw v0 = *reinterpret_cast<const raw*>(v_cache + row);
    raw k1{};
    raw v1{};
    if (second) {
      const std::size_t next = p.row_of(sequence, kv_head, token + half_warps) + sub * 8;
      k1 = *reinterpret_cast<const raw*>(k_cache + next);
      v1 = *reinterpret_cast<const raw*>(v_cache + next);
    }
    take(k0, v0);
    if (second) take(k1, v1);
  }
#pragma unroll
  for (int g = 0; g < Group; ++g) {
#pragma unroll
    for (int i = 0; i < 8; ++i) merge_acc[half][g][sub * 8 + i] = acc[g][i];
    if (sub == 0) {
      merge_max[half][g] = running_max[g];
      merge_sum[half][g] = running_sum[g];
    }
  }
  __syncthreads();
  // Thread = one dim; each writes its dim of every query head's partial, thread 0 the statistics.
  const int dim = threadIdx.x;
  for (int g = 0; g < Group; ++g) {
    float largest = -INFINITY;
    for (int h = 0; h < half_warps; ++h) largest = fmaxf(largest, merge_max[h][g]);
    float total = 0.0f;
    float sum_value = 0.0f;
    for (int h = 0; h < half_warps; ++h) {
      if (merge_max[h][g] == -INFINITY) continue;  // a half-warp with no token in this split
      const float weight = __expf(merge_max[h][g] - largest);
      total += merge_sum[h][g] * weight;
      sum_value += merge_acc[h][g][dim] * weight;
    }
    // partials: (b, hkv, group, splits) records of head_dim values, then max and sum.
    float* record = partials + (((static_cast<std::size_t>(sequence) * p.kv_heads + kv_head) * Group + g) * splits + split) * (head_dim + 2);
    record[dim] = sum_value;
    if (dim == 0) {
      record[head_dim] = largest;
      record[head_dim + 1] = total;
    }
  }
}

// One block per (sequence, query head): merges the splits' partial softmaxes into O.
__global__ void __launch_bounds__(head_dim) decode_combine(const float* partials, int splits, float value_scale, __nv_bfloat16* out) {
  const std::size_t head_index = blockIdx.x;  // (sequence, kv head, group member), flattened
  const float* records = partials + head_index * splits * (head_dim + 2);
  float largest = -INFINITY;
  for (int s = 0; s < splits; ++s) largest = fmaxf(largest, records[s * (head_dim + 2) + head_dim]);
  float total = 0.0f;
  float value = 0.0f;
  for (int s = 0; s < splits; ++s) {
    const float* record = records + s * (head_dim + 2);
    const float weight = __expf(record[head_dim] - largest);
    total += record[head_dim + 1] * weight;
    value += record[threadIdx.x] * weight;
  }
  out[head_index * head_dim + threadIdx.x] = __float2bfloat16_rn(value / total * value_scale);
}

// HF transformers' repeat_kv, as a serving path without a GQA-aware kernel runs it: every query
// head gets its own copy of its KV head's cache, written as (b, pages, h, page, d) through the page
// table (one thread per 16-byte chunk), so a group-1 kernel can read it as a plain paged cache.
__global__ void repeat_kv(decode_problem p, __nv_bfloat16* __restrict__ k_out, __nv_bfloat16* __restrict__ v_out) {
  constexpr int chunks_per_row = head_dim / 8;
  const std::size_t chunk = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t total = static_cast<std::size_t>(p.batch) * p.pages * p.heads() * p.page * chunks_per_row;
  if (chunk >= total) return;
  std::size_t rest = chunk;
  const int column = static_cast<int>(rest % chunks_per_row) * 8;
  rest /= chunks_per_row;
  const int slot = static_cast<int>(rest % p.page);
  rest /= p.page;
  const int head = static_cast<int>(rest % p.heads());
  rest /= p.heads();
  const int page_index = static_cast<int>(rest % p.pages);
  const auto sequence = static_cast<std::size_t>(rest / p.pages);
  const int physical = p.page_table[sequence * p.pages + page_index];
  const std::size_t from = ((static_cast<std::size_t>(physical) * p.kv_heads + head / p.group) * p.page + slot) * head_dim + column;
  *reinterpret_cast<uint4*>(k_out + chunk * 8) = *reinterpret_cast<const uint4*>(p.k_cache + from);
  *reinterpret_cast<uint4*>(v_out + chunk * 8) = *reinterpret_cast<const uint4*>(p.v_cache + from);
}

[[nodiscard]] inline int splits_of(const decode_problem& p) { return (p.pages + pages_per_split - 1) / pages_per_split; }

// The split-K grid with the kernel instantiated for the problem's query group (1, 4 or 8), then
// decode_combine. `launch(group, grid, splits)` launches the split kernel for
// decltype(group)::value; every split decode of the chapter goes through here.
template <class Launch>
void launch_split_and_combine(const decode_problem& p, float* partials, cudaStream_t stream, Launch launch) {
  const int splits = splits_of(p);
  const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(p.kv_heads), static_cast<unsigned>(p.batch));
  switch (p.group) {
    case 1: launch(std::integral_constant<int, 1>{}, grid, splits); break;
    case 4: launch(std::integral_constant<int, 4>{}, grid, splits); break;
    case 8: launch(std::integral_constant<int, 8>{}, grid, splits); break;
    default: AISP_EXPECTS(false, "ch18 decode kernels take query groups of 1, 4 or 8");
  }
  AISP_CHECK_LAUNCH();
  decode_combine<<<static_cast<unsigned>(p.batch * p.heads()), head_dim, 0, stream>>>(partials, splits, p.value_scale, p.o);
  AISP_CHECK_LAUNCH();
}

// Cache: __nv_bfloat16 reads p.k_cache / p.v_cache, __nv_fp8_e4m3 reads p.k_fp8 / p.v_fp8.
template <class Cache = __nv_bfloat16>
void launch_decode_split(const decode_problem& p, float* partials, cudaStream_t stream) {
  launch_split_and_combine(p, partials, stream, [&](auto group, dim3 grid, int splits) {
    decode_split<decltype(group)::value, Cache><<<grid, decode_threads, 0, stream>>>(p, partials, splits);
  });
}

}  // namespace
}  // namespace aisp::ch18
