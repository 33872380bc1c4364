// labs/decode's GPU decoder, kernel by kernel (issue 21): the model of decoder_reference.hpp with
// bf16 weights (an input: Note [weights as an input]) and a bf16 KV cache, fp32 activations and fp32 accumulation. A launch processes
// `rows`: tokens, each of some sequence (its cache slot) at some position, so one set of kernels
// serves a prefill (a prompt's positions), a decode step (a position of each live sequence), a
// recomputed prefix and a continuous batch alike.
//
// Note [batch-invariant rows]
// Every kernel computes a row exactly the same whatever else is in the launch: a row's sums run in
// one fixed order (a matvec: Note [split order]; attention: a fixed block shape over the row's own positions), never
// split by how many rows there are. So two schedulers that batch the same requests differently
// produce the same tokens bit for bit, which is what lets the serving pairs verify a scheduler by
// its tokens (a scheduler that drops or shortens a request cannot match), and what makes the
// KV cache's tokens equal to a recomputed prefix's. cuBLAS picks kernels by shape, and its rows
// change with their batch-mates: it would not give this. The price is that the matvec is the
// one kernel for every batch size: at decode it streams weights (the job), at a long prefill it
// is an fp32 SIMT matmul, far from the tensor cores.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "aisp/check.hpp"
#include "decoder_reference.hpp"

namespace aisp::decode {
namespace {

constexpr int matvec_warps = 4;  // output features a block: one a warp
constexpr int row_block_threads = 256;
constexpr int norm_block_threads = 128;  // rms_norm_rows_kernel and the split matvec that folds it in (Note [folded norm])
constexpr int attention_threads = 128;

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

__device__ __forceinline__ uint4 load_streaming(const uint4* address) {
  uint4 v;  // weights are read once a step: keep them out of L1, where x lives
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(address));
  return v;
}

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
  const int token = rows.token[blockIdx.x];
  for (int i = static_cast<int>(threadIdx.x); i < d_model; i += static_cast<int>(blockDim.x))
    x[static_cast<std::int64_t>(blockIdx.x) * d_model + i] = __bfloat162float(embedding[static_cast<std::int64_t>(token) * d_model + i]);
}

// 1 / sqrt(mean(row^2) + eps) over a block of norm_block_threads: thread t sums t, t + 128, ... in
// order, then block_sum. One function, so the norm kernel and the matvec that folds the norm in
// (Note [folded norm]) compute the same bits.
__device__ float rms_scale(const float* row, int d_model, float eps, float* shared) {
  float square = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < d_model; i += norm_block_threads) square = fmaf(row[i], row[i], square);
  return 1.0f / sqrtf(block_sum(square, shared) / static_cast<float>(d_model) + eps);
}

// out[i, :] = x[src, :] / sqrt(mean(x[src, :]^2) + eps), src = gather ? gather[i] : i (the gains are ones).
__global__ void __launch_bounds__(norm_block_threads) rms_norm_rows_kernel(const float* x, float* out, int d_model, const int* gather,
                                                                           float eps) {
  __shared__ float partial[norm_block_threads / 32];
  const std::int64_t src = gather != nullptr ? gather[blockIdx.x] : blockIdx.x;
  const float* row = x + src * d_model;
  const float scale = rms_scale(row, d_model, eps, partial);
  for (int i = static_cast<int>(threadIdx.x); i < d_model; i += norm_block_threads)
    out[static_cast<std::int64_t>(blockIdx.x) * d_model + i] = __fmul_rn(row[i], scale);
}

// Note [split order]: a matvec row's sum runs over k in splits of matvec_split_chunks 16-byte
// chunks (1024 k). In split s, lane l sums chunks s C + l, s C + l + 32, ... (eight products each,
// in order) and one xor-shuffle tree makes the split's total; the totals are added in split
// order (rounded adds), then scaled once. The order depends on k alone, never on the rows or on
// which kernel runs, so matvec_rows_kernel (a warp walks every split of its rows and features)
// and matvec_split_kernel (a warp two splits of one row, the totals met in shared memory) give
// the same bits (Note [batch-invariant rows]). Why splits: at a decode step of one row, a warp a
// feature over all of k gives down (2048 x 8192) only 2048 warps, 16 an SM; split, a feature can
// take four warps. Measured (ncu, H200, 2026-11-29, the four matvecs of a layer): before, QKV 7.2
// us, wo and down 22.7 together, gate/up 21.3, plus two norm launches of ~3.4 us; after (four
// warps for down, and the norms folded in: Note [folded norm]), QKV with its norm 8.7, wo 8.3,
// down 16.6, gate/up with its norm 22.8: 58 -> 56.4 us a layer. The gain is the folded norms;
// wo and down together did not get faster (22.7 -> 24.9 us). A warp a split (four loads a lane)
// was tried first and lost on the k = 2048 projections (gate/up 3.15 -> 2.77, head 3.67 -> 3.22
// TB/s): so a warp takes two splits. Below 1024 k (the validation models) there is one split and
// the order is the plain one: lane l takes chunks l, l + 32, ..., then the tree.
constexpr int matvec_split_chunks = 128;
// matvec_split_kernel: a block's warps; a folded norm's block is rms_norm_rows_kernel's (128
// threads). Eight warps a block measured the same (wo 8.27 against 8.30 us; ncu, H200, 2026-11-29).
constexpr int matvec_split_block_warps = 4;

[[nodiscard]] __host__ __device__ inline int matvec_splits(int k) { return (k / 8 + matvec_split_chunks - 1) / matvec_split_chunks; }

// acc += w_chunk . x_chunk, the chunk's eight products in order; x scaled first (rounded) where
// a norm is folded in (Note [folded norm]).
template <bool ScaleX = false>
__device__ __forceinline__ void fma_chunk(const uint4& packed, const float* x_row, int c, float& acc, float x_scale = 1.0f) {
  const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&packed);
  const auto* x_chunk = reinterpret_cast<const float4*>(x_row) + 2 * c;
  const float4 a = x_chunk[0];
  const float4 b = x_chunk[1];
  float values[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  if constexpr (ScaleX) {
#pragma unroll
    for (int e = 0; e < 8; ++e) values[e] = __fmul_rn(values[e], x_scale);
  }
#pragma unroll
  for (int p = 0; p < 4; ++p) {
    const float2 two = __bfloat1622float2(pairs[p]);
    acc = fmaf(two.x, values[2 * p], acc);
    acc = fmaf(two.y, values[2 * p + 1], acc);
  }
}

// The rounded end of a row's sum: scaled, then stored or added (Note [split order]). Rounded
// intrinsics: a plain `*out + sum * scale` may be contracted into an FMA in one kernel and not in
// another, and the rows would differ by batch size.
__device__ __forceinline__ void store_matvec(float* out, float total, float scale, bool accumulate) {
  const float scaled = __fmul_rn(total, scale);
  *out = accumulate ? __fadd_rn(*out, scaled) : scaled;
}

// A power-of-two output_scale scales the rounded 1/sqrt(k) exactly: 1 leaves it as it was.
__device__ __forceinline__ float matvec_scale(float output_scale, int k) { return output_scale / sqrtf(static_cast<float>(k)); }

// y[r, n] = (accumulate ? y[r, n] : 0) + output_scale sum_k x[r, k] w[n, k] / sqrt(k) (Note [weights
// as an input]; output_scale a power of two, Note [controlled acceptance]): w (n_out, k) bf16, x (rows, k) fp32, k % 8 == 0. A warp owns Features output features
// and RowsPerPass rows of x, and walks every split of k (Note [split order]); each x chunk a lane
// loads serves the Features weight chunks. blockIdx.x runs over the passes, so blocks reading the
// same weights are scheduled together and share them in L2.
template <int RowsPerPass, int Features>
__global__ void __launch_bounds__(matvec_warps * 32) matvec_rows_kernel(const __nv_bfloat16* __restrict__ w, const float* __restrict__ x,
                                                                        float* __restrict__ y, int n_out, int k, int rows, int ldy,
                                                                        bool accumulate, float output_scale) {
  const int first_n = (static_cast<int>(blockIdx.y) * matvec_warps + static_cast<int>(threadIdx.x) / 32) * Features;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int first_row = static_cast<int>(blockIdx.x) * RowsPerPass;
  if (first_n >= n_out) return;
  const float scale = matvec_scale(output_scale, k);
  float total[Features][RowsPerPass] = {};
  const int chunks = k / 8;
  for (int split = 0; split * matvec_split_chunks < chunks; ++split) {
    const int end = min(chunks, (split + 1) * matvec_split_chunks);
    float acc[Features][RowsPerPass] = {};
#pragma unroll(Features == 1 ? 4 : 2)
    for (int c = split * matvec_split_chunks + lane; c < end; c += 32) {
      uint4 packed[Features];
#pragma unroll
      for (int f = 0; f < Features; ++f) {
        const int n = min(first_n + f, n_out - 1);  // a missing feature rereads the last row, and is not stored
        packed[f] = load_streaming(reinterpret_cast<const uint4*>(w + static_cast<std::int64_t>(n) * k) + c);
      }
#pragma unroll
      for (int r = 0; r < RowsPerPass; ++r) {
        if (first_row + r >= rows) break;
        const float* x_row = x + static_cast<std::int64_t>(first_row + r) * k;
#pragma unroll
        for (int f = 0; f < Features; ++f) fma_chunk(packed[f], x_row, c, acc[f][r]);
      }
    }
#pragma unroll
    for (int f = 0; f < Features; ++f) {
#pragma unroll
      for (int r = 0; r < RowsPerPass; ++r) {
        const float split_total = warp_sum(acc[f][r]);
        total[f][r] = split == 0 ? split_total : __fadd_rn(total[f][r], split_total);
      }
    }
  }
#pragma unroll
  for (int f = 0; f < Features; ++f) {
#pragma unroll
    for (int r = 0; r < RowsPerPass; ++r) {
      if (lane == 0 && first_row + r < rows && first_n + f < n_out)
        store_matvec(y + static_cast<std::int64_t>(first_row + r) * ldy + first_n + f, total[f][r], scale, accumulate);
    }
  }
}

// The same sums for one row (a decode step of one sequence), a warp two splits (Note [split
// order]): eight chunk loads a lane in flight, both splits' loads issued before either's math. A
// feature takes ceil(splits / 2) warps, a block of matvec_split_block_warps warps as many
// features as fit; where a feature takes more than one warp the split totals meet in shared
// memory and the feature's first lane adds them in split order. Needs matvec_splits(k) <= 2 x
// matvec_split_block_warps.
constexpr int matvec_splits_a_warp = 2;
// The warps a feature takes in matvec_split_kernel, and the features a block of them holds.
[[nodiscard]] __host__ __device__ inline int matvec_warps_a_feature(int k) {
  return (matvec_splits(k) + matvec_splits_a_warp - 1) / matvec_splits_a_warp;
}
[[nodiscard]] __host__ __device__ inline int matvec_block_features(int k) { return matvec_split_block_warps / matvec_warps_a_feature(k); }

template <bool FoldNorm>
__global__ void __launch_bounds__(matvec_split_block_warps * 32) matvec_split_kernel(const __nv_bfloat16* __restrict__ w,
                                                                                     const float* __restrict__ x, float* __restrict__ y,
                                                                                     int n_out, int k, bool accumulate, float output_scale,
                                                                                     float eps) {
  static_assert(matvec_split_block_warps * 32 == norm_block_threads, "the folded norm is rms_norm_rows_kernel's block");
  constexpr int loads = matvec_splits_a_warp * matvec_split_chunks / 32;  // 8 chunks a lane
  constexpr int per_split = matvec_split_chunks / 32;
  __shared__ float split_totals[matvec_split_block_warps * matvec_splits_a_warp];
  float x_scale = 1.0f;
  if constexpr (FoldNorm) {
    __shared__ float norm_partial[matvec_split_block_warps];  // apart from split_totals: no warp waits for the norm's readers
    x_scale = rms_scale(x, k, eps, norm_partial);  // every thread of the block
  }
  const int splits = matvec_splits(k);
  const int warps_a_feature = matvec_warps_a_feature(k);
  const int block_features = matvec_block_features(k);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int local_feature = warp / warps_a_feature;
  const int first_split = (warp % warps_a_feature) * matvec_splits_a_warp;
  const int n = static_cast<int>(blockIdx.x) * block_features + local_feature;
  const bool works = local_feature < block_features && n < n_out;
  const int chunks = k / 8;
  float split_total[matvec_splits_a_warp] = {};
  if (works) {
    const auto* w_row = reinterpret_cast<const uint4*>(w + static_cast<std::int64_t>(n) * k);
    uint4 packed[loads] = {};
#pragma unroll
    for (int u = 0; u < loads; ++u) {
      const int c = (first_split + u / per_split) * matvec_split_chunks + lane + 32 * (u % per_split);
      if (c < chunks) packed[u] = load_streaming(w_row + c);
    }
#pragma unroll
    for (int h = 0; h < matvec_splits_a_warp; ++h) {
      float acc = 0.0f;
#pragma unroll
      for (int u = h * per_split; u < (h + 1) * per_split; ++u) {
        const int c = (first_split + h) * matvec_split_chunks + lane + 32 * (u % per_split);
        if (c < chunks) fma_chunk<FoldNorm>(packed[u], x, c, acc, x_scale);
      }
      split_total[h] = warp_sum(acc);
    }
  }
  const auto add_in_order = [&](float total, int from, int to, const float* totals) {
    for (int s = from; s < to; ++s) total = __fadd_rn(total, totals[s]);
    return total;
  };
  if (warps_a_feature == 1) {  // the warp holds every split of its feature: no shared memory
    if (works && lane == 0) {
      const float total = add_in_order(split_total[0], 1, splits, split_total);
      store_matvec(y + n, total, matvec_scale(output_scale, k), accumulate);
    }
    return;
  }
  if (works && lane == 0) {
    for (int h = 0; h < matvec_splits_a_warp; ++h) split_totals[warp * matvec_splits_a_warp + h] = split_total[h];
  }
  __syncthreads();
  if (works && first_split == 0 && lane == 0) {
    const float* totals = split_totals + warp * matvec_splits_a_warp;  // the feature's splits, in order
    store_matvec(y + n, add_in_order(totals[0], 1, splits, totals), matvec_scale(output_scale, k), accumulate);
  }
}

// Where one row's matvec runs as matvec_split_kernel: its splits fit a block.
[[nodiscard]] inline bool one_row_splits_fit(int k, int rows) {
  return rows == 1 && matvec_warps_a_feature(k) <= matvec_split_block_warps;
}

template <bool FoldNorm>
void launch_split_matvec(const __nv_bfloat16* w, const float* x, float* y, int n_out, int k, bool accumulate, float output_scale,
                         float eps, cudaStream_t stream) {
  const int block_features = matvec_block_features(k);
  matvec_split_kernel<FoldNorm><<<static_cast<unsigned>((n_out + block_features - 1) / block_features), matvec_split_block_warps * 32, 0,
                                  stream>>>(w, x, y, n_out, k, accumulate, output_scale, eps);
  AISP_CHECK_LAUNCH();
}

// y (rows, n_out) from x (rows, k) and w (n_out, k), as matvec_rows_kernel defines it. The rows of
// a pass: one row at a decode step of one sequence (a warp two splits: the most loads in flight),
// more where rows share the weights (two features a warp: each x load serves both).
inline void launch_matvec(const __nv_bfloat16* w, const float* x, float* y, int n_out, int k, int rows, bool accumulate,
                          float output_scale, cudaStream_t stream) {
  AISP_EXPECTS(k % 8 == 0 && k > 0 && n_out > 0 && rows > 0, "labs/decode: a matvec of k % 8 == 0 and at least one row and feature");
  const auto launch = [&](auto kernel, int per_pass, int features) {
    const int warps = (n_out + features - 1) / features;
    kernel<<<dim3(static_cast<unsigned>((rows + per_pass - 1) / per_pass), static_cast<unsigned>((warps + matvec_warps - 1) / matvec_warps)),
             matvec_warps * 32, 0, stream>>>(w, x, y, n_out, k, rows, n_out, accumulate, output_scale);
    AISP_CHECK_LAUNCH();
  };
  if (one_row_splits_fit(k, rows)) {
    launch_split_matvec<false>(w, x, y, n_out, k, accumulate, output_scale, 0.0f, stream);
  } else if (rows == 1) {
    launch(matvec_rows_kernel<1, 1>, 1, 1);
  } else if (rows <= 4) {
    launch(matvec_rows_kernel<4, 2>, 4, 2);
  } else if (rows <= 8) {
    launch(matvec_rows_kernel<8, 2>, 8, 2);
  } else {
    launch(matvec_rows_kernel<16, 2>, 16, 2);
  }
}

// Note [folded norm]: y = W rms_norm(x) (no accumulation, output scale 1). At a decode step of
// one row the norm is folded into the split matvec: each block computes the row's scale as
// rms_norm_rows_kernel does (the same block shape and rms_scale, so the same bits) and scales x
// as it reads it, which spares a launch a norm (33 a token, ~3.4 us each: 9% of a batch-1 step's
// kernel time, ncu, H200, 2026-11-29) for one more read of the 8 KB row from L2 a block. Other
// row counts run the norm kernel into `normed`, then the matvec.
inline void launch_normed_matvec(const __nv_bfloat16* w, const float* x, float* normed, float* y, int n_out, int k, int rows, float eps,
                                 cudaStream_t stream) {
  if (one_row_splits_fit(k, rows)) {
    launch_split_matvec<true>(w, x, y, n_out, k, false, 1.0f, eps, stream);
    return;
  }
  rms_norm_rows_kernel<<<static_cast<unsigned>(rows), norm_block_threads, 0, stream>>>(x, normed, k, nullptr, eps);
  AISP_CHECK_LAUNCH();
  launch_matvec(w, normed, y, n_out, k, rows, false, 1.0f, stream);
}

// Rotate each row's query and key heads (RoPE at its position, half-split pairs, angles in
// double as the reference takes them), then store its K and V as bf16 in its slot's cache.
// qkv (rows, qkv_width) fp32: q heads, then k heads, then v heads. A block a (row, head) of
// head_dim / 2 threads, one pair each: one block a row once took 10.6 us a layer at batch 1,
// 10% of the step (ncu, H200, 2026-11-29); every value is computed as it was, bit for bit.
template <class Cache>
__global__ void rope_and_cache_kernel(float* qkv, row_meta rows, __nv_bfloat16* k_cache, __nv_bfloat16* v_cache, model_dims m,
                                      Cache cache, int layer, double theta) {
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
  const double angle = position * pow(theta, -2.0 * i / m.head_dim);
  double sine = 0;
  double cosine = 0;
  sincos(angle, &sine, &cosine);
  const double a = head[i];
  const double b = head[i + half];
  const auto low = static_cast<float>(a * cosine - b * sine);
  const auto high = static_cast<float>(a * sine + b * cosine);
  head[i] = low;
  head[i + half] = high;
  if (h >= m.heads) {  // a k head: its rotated values into the cache
    const std::int64_t e = static_cast<std::int64_t>(h - m.heads) * m.head_dim + i;
    k_cache[at + e] = __float2bfloat16_rn(low);
    k_cache[at + e + half] = __float2bfloat16_rn(high);
  }
}

// attended[r, head] = softmax_j(q . k_j / sqrt(head_dim)) v_j over positions 0..position(r) of
// the row's slot at `layer`; query head h reads KV head h / (heads / kv_heads). A block a (row,
// head); dynamic shared memory: max_len scores and head_dim floats of q.
template <class Cache>
__global__ void __launch_bounds__(attention_threads) attention_rows_kernel(const float* qkv, row_meta rows, const __nv_bfloat16* k_cache,
                                                                           const __nv_bfloat16* v_cache, float* attended, model_dims m,
                                                                           Cache cache, int layer) {
  extern __shared__ float scores[];
  __shared__ float partial[attention_threads / 32];
  const int r = static_cast<int>(blockIdx.x);
  const int head = static_cast<int>(blockIdx.y);
  const int keys = rows.position[r] + 1;
  float* q = scores + m.max_len;
  const float* q_row = qkv + static_cast<std::int64_t>(r) * m.qkv_width() + head * m.head_dim;
  for (int i = static_cast<int>(threadIdx.x); i < m.head_dim; i += attention_threads) q[i] = q_row[i];
  __syncthreads();
  const int kv_head = head / (m.heads / m.kv_heads);
  const int slot = rows.slot[r];
  const int head_offset = kv_head * m.head_dim;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const float scale = 1.0f / sqrtf(static_cast<float>(m.head_dim));
  for (int j = static_cast<int>(threadIdx.x) / 32; j < keys; j += attention_threads / 32) {
    const __nv_bfloat16* key = k_cache + cache.offset(m, slot, layer, j) + head_offset;
    float dot = 0.0f;
    for (int i = lane; i < m.head_dim; i += 32) dot = fmaf(q[i], __bfloat162float(key[i]), dot);
    dot = warp_sum(dot);
    if (lane == 0) scores[j] = dot * scale;
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
    for (int j = part; j < keys; j += parts) sum = fmaf(scores[j], __bfloat162float(v_cache[cache.offset(m, slot, layer, j) + head_offset + dim]), sum);
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

// act[r, i] = silu(gate[r, i]) * up[r, i]; gate_up (rows, 2 ffn): the gate, then up. Blocks
// (row, a block's span of i): one block a row looped over 8192 values with a load's latency
// each, 26.8 us a layer at batch 1, a quarter of the step (ncu, H200, 2026-11-29).
__global__ void swiglu_rows_kernel(const float* gate_up, float* act, int ffn) {
  const float* row = gate_up + static_cast<std::int64_t>(blockIdx.x) * 2 * ffn;
  const int i = static_cast<int>(blockIdx.y * blockDim.x + threadIdx.x);
  if (i >= ffn) return;
  const float gate = row[i];
  act[static_cast<std::int64_t>(blockIdx.x) * ffn + i] = gate / (1.0f + expf(-gate)) * row[ffn + i];
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
