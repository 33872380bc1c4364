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
#include "decoder_shapes.cuh"

namespace aisp::decode {
namespace {

constexpr int row_block_threads = 256;
constexpr int norm_block_threads = 128;  // rms_norm_rows_kernel's
constexpr int attention_max_head_dim = 128;

// The elements of a key each lane of attention_rows_kernel holds: 2 up to a head of 64, else 4
// (two kernels, so a head of 64 holds no registers for dimensions it lacks).
constexpr int attention_head_lanes(int head_dim) { return head_dim <= 64 ? 2 : 4; }

// Note [paged cache]: a cache of pages (pages, layers, page_tokens, kv_width), where slot s's
// position p lives in page table[s * pages_per_slot + p / page_tokens] (kv_pages.hpp keeps the
// table). The kernels take the cache's layout as a template argument: contiguous_cache is
// model_dims::cache_offset's (decoder_shapes.cuh), the arithmetic it always had; paged_cache
// reads the table.
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

// Sum over a block that plays Copies times its threads, thread t + c blockDim.x holding values[c],
// in one fixed order: each played warp's warp_sum, then the played warps in order. So a block of
// 256 threads playing 512 gets the bits of a block of 512 (Note [attention waves]). Every thread
// gets the total. `shared` holds a float per played warp.
template <int Copies>
__device__ float block_sum_played(const float (&values)[Copies], float* shared) {
  float warp_totals[Copies];
#pragma unroll
  for (int c = 0; c < Copies; ++c) warp_totals[c] = warp_sum(values[c]);
  const int warps = static_cast<int>(blockDim.x) / 32;
  __syncthreads();  // `shared` may still be read by a previous call
  if (threadIdx.x % 32 == 0) {
#pragma unroll
    for (int c = 0; c < Copies; ++c) shared[c * warps + static_cast<int>(threadIdx.x) / 32] = warp_totals[c];
  }
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < Copies * warps; ++w) total += shared[w];
  return total;
}

// Sum over a block of row_block_threads, norm_block_threads or attention_threads, in one fixed order; every thread
// gets the total. `shared` holds a float per warp.
__device__ float block_sum(float value, float* shared) { return block_sum_played<1>({value}, shared); }

__device__ float block_max(float value, float* shared) {
  for (int offset = 16; offset > 0; offset /= 2) value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  __syncthreads();
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = value;
  __syncthreads();
  float largest = shared[0];
  for (int w = 1; w < static_cast<int>(blockDim.x) / 32; ++w) largest = fmaxf(largest, shared[w]);
  return largest;
}

// Note [dependent row kernels]: the row kernels between matvecs (the norms and SwiGLU at more
// than one row, the final norm and the argmax) are dependent launches that wait for the kernel
// before them at their start, as every matvec is: a plain launch is not even scheduled until the
// kernel before it has drained. The embedding stays a plain launch: it is each forward's
// barrier (Note [reads before the wait]).

// x[r, :] = embedding[token[r], :]
__global__ void embed_rows_kernel(const __nv_bfloat16* embedding, row_meta rows, float* x, int d_model) {
  ptx::let_next_kernel_start();  // the matvec after this one may load its weights now (Note [weights before the wait])
  const int token = rows.token[blockIdx.x];
  for (int i = static_cast<int>(threadIdx.x); i < d_model; i += static_cast<int>(blockDim.x))
    x[static_cast<std::int64_t>(blockIdx.x) * d_model + i] = __bfloat162float(embedding[static_cast<std::int64_t>(token) * d_model + i]);
}

// 1 / sqrt(mean(row^2) + eps) over the first norm_block_threads of a block: thread t sums t, t +
// 128, ... in order, then block_sum (a larger block's other warps add +0.0f, which changes no
// sum of squares). The final norm before the head; the layers' normed matvecs scale their sums
// instead (Note [norm as an output scale] in decode_matvec.cuh).
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
  ptx::wait_for_previous_kernel();  // a dependent launch (Note [dependent row kernels]): x is the kernels' before it
  __shared__ float partial[norm_block_threads / 32];
  const std::int64_t src = gather != nullptr ? gather[blockIdx.x] : blockIdx.x;
  const float* row = x + src * d_model;
  const float scale = rms_scale(row, d_model, eps, partial);
  for (int i = static_cast<int>(threadIdx.x); i < d_model; i += norm_block_threads)
    out[static_cast<std::int64_t>(blockIdx.x) * d_model + i] = __fmul_rn(row[i], scale);
}

// Note [rope table]: RoPE's angles in double, as the reference takes them: entry (position, i)
// holds the cosine and sine of position * theta^(-2i / head_dim), computed once on the device
// when the model is built (rope_table_kernel), so every launch reads the same bits it used to
// compute in each block with pow and sincos in double: a chain of ~200 dependent double
// instructions on the critical path of every layer's attention at one row. The table depends on
// theta, head_dim and max_len only, never on an input.
__global__ void rope_table_kernel(double2* table, int head_dim, double theta) {  // a block a position
  const int position = static_cast<int>(blockIdx.x);
  const int half = head_dim / 2;
  for (int i = static_cast<int>(threadIdx.x); i < half; i += static_cast<int>(blockDim.x)) {
    const double angle = position * pow(theta, -2.0 * i / head_dim);
    double sine = 0;
    double cosine = 0;
    sincos(angle, &sine, &cosine);
    table[static_cast<std::int64_t>(position) * half + i] = make_double2(cosine, sine);
  }
}

// The pair (i, i + half) of a head rotated by the table's (cosine, sine) for its position and i
// (RoPE, half-split pairs), in double: (low, high).
__device__ __forceinline__ float2 rope_pair(double a, double b, double2 angle) {
  return make_float2(static_cast<float>(a * angle.x - b * angle.y), static_cast<float>(a * angle.y + b * angle.x));
}

// Rotate each row's query and key heads (rope_pair at its position), then store its K and V as
// bf16 in its slot's cache. qkv (rows, qkv_width) fp32: q heads, then k heads, then v heads. A
// block a (row, head) of head_dim / 2 threads, one pair each: one block a row once took 10.6 us
// a layer at batch 1, 10% of the step (ncu, H200, 2026-11-29); every value is computed as it
// was, bit for bit. A launch of one row folds this into attention (Note [rope in attention]).
template <class Cache>
__global__ void rope_and_cache_kernel(float* qkv, row_meta rows, const double2* rope, __nv_bfloat16* k_cache, __nv_bfloat16* v_cache,
                                      model_dims m, Cache cache, int layer) {
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
  const float2 rotated = rope_pair(head[i], head[i + half], rope[static_cast<std::int64_t>(position) * half + i]);
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
//
// Note [attention latency]: a warp takes keys_a_round keys at once and loads all their values
// before it multiplies any, so a round costs one trip to memory, not one a key; each key's dot
// is the lane's fmas over i = lane, lane + 32, ... and one warp_sum, whichever warp takes it.
// 512 threads a block; the V loop's parts each walk every parts-th key, in order, the first
// values_ahead of them loaded with the keys. 32.8 -> 14.0 us a layer at one row (four keys a
// warp, V after the softmax), the batch-1 step 1.220 -> 0.977 ms (64 cached positions; H200s,
// 2026-12-02, docs/results/issue21.md). Then (sixth session) every load without a condition, V's
// first values with the keys, the RoPE table and the reads before the wait: 13.3 -> 7.3 us a
// layer at one row and 21.0 -> 14.6 at 16 (Nsight Compute, each launch alone), the step's GPU
// time 0.975 -> 0.860 ms at one row, 1.341 -> 1.289 at 8, 1.744 -> 1.637 at 16, 2.610 -> 2.411
// at 32 (H200 GPU-4647951d), every logit's bits unchanged.
//
// Note [attention waves]: a launch of many rows runs narrow blocks when wide ones would not fit
// in one wave (gpu_decoder::attention_narrow): at 16 rows, 32 heads of 512 threads a block are 512
// blocks at two an SM, two waves on 132 SMs, 14.8 us a layer against 8.8 at 8 rows (Nsight
// Compute, H200, 2026-12-02). A narrow block of attention_narrow_threads runs four an SM and
// plays two threads of the wide block, t and t + 256: the exponentials' sums and the values'
// parts of both, in the wide block's order (block_sum_played, by_part indexed by the played
// thread). So a row's bits are the same in every launch (Note [batch-invariant rows]).
//
// Note [reads before the wait]: at one row the keys and values below the row's position, the
// row metadata and the RoPE table were all written before this step's first launch (a plain
// launch, which every earlier kernel has finished), and no kernel of the step writes them: the
// only cache entry a one-row launch writes is its own position, which this kernel supplies from
// shared memory (Note [rope in attention]). So the block loads its first round of keys, its
// values ahead and its RoPE angles before it waits for the QKV matvec, and those trips to memory
// overlap that kernel. A launch of several rows waits first: rope_and_cache_kernel, the kernel
// before it, appends keys its rows read.
template <class Cache, bool RopeHere, int HeadLanes, int Threads = attention_threads, bool ValuesEarly = false>
__global__ void __launch_bounds__(Threads, RopeHere ? 1 : 2 * attention_threads / Threads)
    attention_rows_kernel(const float* qkv, row_meta rows, const double2* rope, __nv_bfloat16* k_cache, __nv_bfloat16* v_cache,
                          float* attended, model_dims m, Cache cache, int layer) {
  static_assert(Threads == attention_threads || (!RopeHere && Threads == attention_narrow_threads));
  ptx::let_next_kernel_start();  // the matvec after this one may load its weights now (Note [weights before the wait])
  constexpr int copies = attention_threads / Threads;  // the wide block's threads each thread plays (Note [attention waves])
  // A launch of many rows keeps 64 registers a thread (two wide or four narrow blocks an SM).
  constexpr int keys_a_round = RopeHere ? 8 : (copies == 1 ? 4 : 8 / (HeadLanes / 2));
  constexpr int dims_a_lane = HeadLanes;  // attention_head_lanes(head_dim)
  constexpr int warps = Threads / 32;
  // A played thread's values loaded with the keys: what fits in 64 or 128 registers beside them
  // (a narrow block's two played threads, a paged cache's offsets: 1 or 2, no spill).
  constexpr int values_ahead = RopeHere ? 16 : (copies == 1 ? 8 / (HeadLanes / 2) : 4 / HeadLanes);
  // Note [values before the softmax]: with ValuesEarly (AISP_DECODE_ATTENTION_EARLY=1, off by
  // default: timing_switches.hpp) a launch of several rows loads more values a played thread
  // before the softmax's barriers, in the registers the keys left, and more a trip after them: as
  // many as fit in 64 registers without a spill (a narrow block's two played threads, a paged
  // cache's offsets). Measured without the guard on load_early below (decode_step.*, H100
  // GPU-e2c0a1fc, 2026-12-07): after 128-position caches the 16-row step 5.7 us faster, the 8-row
  // one 7.5; after 16-position caches the 8-row step 10 us slower (the values ahead already cover
  // them). With the guard (GPU-3cb9573a, 2026-12-08): -4.8 and -5.6 us at 8 and 16 rows after 128
  // positions, +1.7 and -1.6 after 16: a few us either way, so it stays off.
  constexpr bool early_values = ValuesEarly && !RopeHere;
  constexpr int values_a_trip = early_values ? (copies == 1 ? 16 : 8) : 8 / copies;
  constexpr int values_early = early_values ? (copies == 1 ? 8 : 6) : 0;
  extern __shared__ float scores[];
  __shared__ float partial[attention_threads / 32];
  const int r = static_cast<int>(blockIdx.x);
  const int head = static_cast<int>(blockIdx.y);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  if constexpr (!RopeHere) ptx::wait_for_previous_kernel();  // Note [reads before the wait]: the row metadata too, to keep it simple
  const int keys = rows.position[r] + 1;
  const int slot = rows.slot[r];
  const int group = m.heads / m.kv_heads;
  const int kv_head = head / group;
  const int head_offset = kv_head * m.head_dim;
  const int cached = RopeHere ? keys - 1 : keys;  // the keys the cache holds for this launch; at one row the last is new_k
  // Every load of the cache below has an address that is always valid (a key past the row's
  // reads position 0, whose value is then never used; a dimension past head_dim the head's last)
  // and no condition: a load under a condition compiled to a branch a load, each waiting for its
  // value before the next was issued (Nsight Compute's source view, H200, 2026-12-02). Which
  // values count is decided where they are used. A round of keys: warp w holds keys base + w *
  // keys_a_round + u, element i = lane + 32 e in e.
  __nv_bfloat16 held[keys_a_round][dims_a_lane];
  const auto load_round = [&](int base) {
#pragma unroll
    for (int u = 0; u < keys_a_round; ++u) {
      const int j = base + warp * keys_a_round + u;
      const __nv_bfloat16* key = k_cache + cache.offset(m, slot, layer, j < cached ? j : 0) + head_offset;
#pragma unroll
      for (int e = 0; e < dims_a_lane; ++e) held[u][e] = key[min(lane + 32 * e, m.head_dim - 1)];
    }
  };
  // Played thread p = threadIdx.x + c Threads sums dim p % head_dim over positions part, part +
  // parts, ... with part = p / head_dim; the parts meet in shared memory. A narrow block's head_dim
  // divides it (gpu_decoder::attention_narrow), so a thread's played threads share their dim.
  const int parts = attention_threads / m.head_dim;
  const int dim = static_cast<int>(threadIdx.x) % m.head_dim;
  int part[copies];
#pragma unroll
  for (int c = 0; c < copies; ++c) part[c] = static_cast<int>(threadIdx.x) / m.head_dim + c * (Threads / m.head_dim);
  const auto value_at = [&](int j) { return v_cache[cache.offset(m, slot, layer, j < cached ? j : 0) + head_offset + dim]; };
  __nv_bfloat16 ahead[copies][values_ahead];
#pragma unroll
  for (int c = 0; c < copies; ++c) {
#pragma unroll
    for (int t = 0; t < values_ahead; ++t) ahead[c][t] = value_at(part[c] + parts * t);
  }
  load_round(0);
  float* q = scores + m.max_len;
  float* new_k = q + m.head_dim;
  float* new_v = new_k + m.head_dim;
  if constexpr (RopeHere) {
    const int half = m.head_dim / 2;
    const double2 angle = rope[static_cast<std::int64_t>(keys - 1) * half + min(static_cast<int>(threadIdx.x), half - 1)];
    ptx::wait_for_previous_kernel();  // qkv is the QKV matvec's
    const float* q_row = qkv + static_cast<std::int64_t>(r) * m.qkv_width() + head * m.head_dim;
    const float* k_row = qkv + static_cast<std::int64_t>(r) * m.qkv_width() + static_cast<std::int64_t>(m.heads + kv_head) * m.head_dim;
    const float* v_row = k_row + static_cast<std::int64_t>(m.kv_heads) * m.head_dim;
    const std::int64_t at = cache.offset(m, slot, layer, keys - 1) + head_offset;
    const int i = static_cast<int>(threadIdx.x);
    if (i < half) {
      const float2 rotated_q = rope_pair(q_row[i], q_row[i + half], angle);
      q[i] = rotated_q.x;
      q[i + half] = rotated_q.y;
      const float2 rotated_k = rope_pair(k_row[i], k_row[i + half], angle);
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
    const float* q_row = qkv + static_cast<std::int64_t>(r) * m.qkv_width() + head * m.head_dim;
    for (int i = static_cast<int>(threadIdx.x); i < m.head_dim; i += Threads) q[i] = q_row[i];
  }
  __syncthreads();
  const float scale = 1.0f / sqrtf(static_cast<float>(m.head_dim));
  for (int base = 0; base < keys; base += warps * keys_a_round) {
    if (base > 0) load_round(base);
#pragma unroll
    for (int u = 0; u < keys_a_round; ++u) {
      const int j = base + warp * keys_a_round + u;
      float dot = 0.0f;
#pragma unroll
      for (int e = 0; e < dims_a_lane; ++e) {
        const int i = lane + 32 * e;
        if (i < m.head_dim) dot = fmaf(q[i], RopeHere && j == cached ? new_k[i] : __bfloat162float(held[u][e]), dot);
      }
      dot = warp_sum(dot);
      if (lane == 0 && j < keys) scores[j] = dot * scale;
    }
  }
  // Only where the values ahead leave some (one branch a block: a short cache lost 10 us a step).
  const bool load_early = values_early > 0 && parts * values_ahead < keys;
  __nv_bfloat16 early[copies][values_early > 0 ? values_early : 1];
  if (load_early) {
#pragma unroll
    for (int c = 0; c < copies; ++c) {
#pragma unroll
      for (int t = 0; t < values_early; ++t) early[c][t] = value_at(part[c] + parts * (values_ahead + t));
    }
  }
  __syncthreads();
  float largest = -INFINITY;
  for (int j = static_cast<int>(threadIdx.x); j < keys; j += Threads) largest = fmaxf(largest, scores[j]);
  largest = block_max(largest, partial);
  float totals[copies];
#pragma unroll
  for (int c = 0; c < copies; ++c) {
    totals[c] = 0.0f;
    for (int j = static_cast<int>(threadIdx.x) + c * Threads; j < keys; j += attention_threads) {
      scores[j] = __expf(scores[j] - largest);
      totals[c] += scores[j];
    }
  }
  const float total = block_sum_played<copies>(totals, partial);  // its barriers also publish the exponentials
  // A thread past the last whole part (head_dim not dividing 512: a wide block) sums nothing.
  const int summed = part[0] < parts ? keys : 0;
  float sum[copies];
#pragma unroll
  for (int c = 0; c < copies; ++c) sum[c] = 0.0f;
  const auto add = [&](int c, int j, __nv_bfloat16 value) {
    if (j < summed) sum[c] = fmaf(scores[j], RopeHere && j == cached ? new_v[dim] : __bfloat162float(value), sum[c]);
  };
#pragma unroll
  for (int c = 0; c < copies; ++c) {
#pragma unroll
    for (int t = 0; t < values_ahead; ++t) add(c, part[c] + parts * t, ahead[c][t]);
  }
  if (load_early) {
#pragma unroll
    for (int c = 0; c < copies; ++c) {
#pragma unroll
      for (int t = 0; t < values_early; ++t) add(c, part[c] + parts * (values_ahead + t), early[c][t]);
    }
  }
  // A thread's first played thread has its lowest part, so it walks the most keys.
  for (int step = values_ahead + (load_early ? values_early : 0); part[0] + parts * step < summed; step += values_a_trip) {
    __nv_bfloat16 values[copies][values_a_trip];
#pragma unroll
    for (int c = 0; c < copies; ++c) {
#pragma unroll
      for (int t = 0; t < values_a_trip; ++t) values[c][t] = value_at(part[c] + parts * (step + t));
    }
#pragma unroll
    for (int c = 0; c < copies; ++c) {
#pragma unroll
      for (int t = 0; t < values_a_trip; ++t) add(c, part[c] + parts * (step + t), values[c][t]);
    }
  }
  __syncthreads();
  float* by_part = scores;  // the scores are spent; played thread p's sum at p = part * head_dim + dim
#pragma unroll
  for (int c = 0; c < copies; ++c) by_part[static_cast<int>(threadIdx.x) + c * Threads] = sum[c];
  __syncthreads();
  if (part[0] == 0) {
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
  ptx::wait_for_previous_kernel();  // a dependent launch (Note [dependent row kernels]): gate_up is the matvec's before it
  const float* row = gate_up + static_cast<std::int64_t>(blockIdx.x) * 2 * ffn;
  const int i = static_cast<int>(blockIdx.y * blockDim.x + threadIdx.x);
  if (i >= ffn) return;
  act[static_cast<std::int64_t>(blockIdx.x) * ffn + i] = swiglu_value(row[i], row[ffn + i]);
}

// next[s] = argmax of logits[s, :], the lowest id on a tie (as the reference's greedy).
__global__ void __launch_bounds__(row_block_threads) argmax_rows_kernel(const float* logits, int vocab, int* next) {
  ptx::wait_for_previous_kernel();  // a dependent launch (Note [dependent row kernels]): the logits are the head's
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
