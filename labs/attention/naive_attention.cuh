// Step 1, the baseline: attention as a competent engineer first writes it from library parts.
// S = Q K^T (fp32) goes to HBM through cuBLASLt's batched bf16 GEMM, a softmax kernel reads S
// and writes P = softmax(S / sqrt(d)) in bf16, and cuBLASLt multiplies P V into O. The s x s
// score matrix of every head crosses HBM three times (written fp32, read, P written and read).
//
// Note [grouped rows]: with h = hkv * group, the group query heads of one KV head are adjacent in
// Q and O, so per (batch, KV head) Q is one (group * s, d) matrix and O one (group * s, d) matrix:
// one strided batch of b * hkv GEMMs serves MHA and GQA alike, and K and V are never repeated.
// Row r of such a matrix is query position r % s.
#pragma once

#include <cublasLt.h>
#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/cublaslt_plan.hpp"
#include "aisp/cublas_check.hpp"
#include "aisp/device_scratch.hpp"
#include "attention_problem.cuh"

namespace aisp::labs_attention {

constexpr int softmax_threads = 256;

__device__ __forceinline__ float block_reduce(float value, bool take_max, float* scratch) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffU, value, offset);
    value = take_max ? fmaxf(value, other) : value + other;
  }
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) scratch[warp] = value;
  __syncthreads();
  value = scratch[0];
  for (int w = 1; w < softmax_threads / 32; ++w) value = take_max ? fmaxf(value, scratch[w]) : value + scratch[w];
  __syncthreads();  // scratch is reused by the next reduction
  return value;
}

// One block per score row: P[row, j] = exp(S[row, j] * scale - max) / sum, 0 where masked.
__global__ void __launch_bounds__(softmax_threads) masked_softmax(const float* __restrict__ scores, __nv_bfloat16* __restrict__ probabilities,
                                                                  int seq, bool causal, float scale) {
  __shared__ float scratch[softmax_threads / 32];
  const std::size_t row = blockIdx.x;
  const int query = static_cast<int>(row % static_cast<std::size_t>(seq));  // Note [grouped rows]
  const int keys = causal ? query + 1 : seq;
  const float* in = scores + row * seq;
  __nv_bfloat16* out = probabilities + row * seq;
  float largest = -INFINITY;
  for (int j = threadIdx.x; j < keys; j += softmax_threads) largest = fmaxf(largest, in[j] * scale);
  largest = block_reduce(largest, true, scratch);
  float total = 0.0f;
  for (int j = threadIdx.x; j < keys; j += softmax_threads) total += __expf(in[j] * scale - largest);
  total = block_reduce(total, false, scratch);
  const float inverse = 1.0f / total;
  for (int j = threadIdx.x; j < seq; j += softmax_threads)
    out[j] = __float2bfloat16_rn(j < keys ? __expf(in[j] * scale - largest) * inverse : 0.0f);
}

// The s x s scores of every (batch, head): the baseline's S (fp32) and P (bf16) hold this many.
[[nodiscard]] inline std::size_t score_elements(const attention_problem& p) {
  return static_cast<std::size_t>(p.batch) * p.heads() * static_cast<std::size_t>(p.seq) * static_cast<std::size_t>(p.seq);
}

// The baseline's scratch and its two GEMM plans, made in setup.
struct naive_attention_state {
  explicit naive_attention_state(std::size_t scores_count)
      : s(scores_count * sizeof(float)), p(scores_count * sizeof(__nv_bfloat16)) {}
  cublaslt_plan scores{CUBLAS_COMPUTE_32F, CUDA_R_32F};   // S = Q K^T, fp32 out
  cublaslt_plan context{CUBLAS_COMPUTE_32F, CUDA_R_32F};  // O = P V, bf16 out
  device_scratch s;
  device_scratch p;
};

constexpr std::size_t naive_workspace_bytes = std::size_t{32} << 20;

// Row-major (r, c) is column-major (c, r) with the same bytes (Note [TN through cuBLASLt] in
// labs/gemm/bf16_gemm.cu). Per (batch, KV head), with m = group * s rows of Q:
//   S^T (s, m) = K (s, d) . Q^T (d, m): K read as column-major (d, s) with op T, Q as (d, m), op N;
//   O^T (d, m) = V^T (d, s) . P^T (s, m): V read as column-major (d, s), P as (s, m), both op N.
inline void plan_naive_attention(naive_attention_state& state, const attention_problem& p) {
  const std::int64_t s = p.seq;
  const std::int64_t d = p.dim;
  const std::int64_t m = static_cast<std::int64_t>(p.group) * s;
  const auto batches = static_cast<std::int32_t>(static_cast<std::int64_t>(p.batch) * p.kv_heads);
  const auto layout = [batches](cudaDataType_t type, std::int64_t rows, std::int64_t cols) {
    return cublaslt_plan::batched_column_major(type, rows, cols, rows, batches, rows * cols);  // packed: ld = rows
  };
  auto& scores = state.scores;
  const cublasOperation_t transpose = CUBLAS_OP_T;
  AISP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(scores.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)));
  scores.layout_a = layout(CUDA_R_16BF, d, s);
  scores.layout_b = layout(CUDA_R_16BF, d, m);
  scores.layout_c = layout(CUDA_R_32F, s, m);
  scores.allocate_workspace(naive_workspace_bytes);
  scores.choose_algorithm(naive_workspace_bytes, "the batched Q K^T of the naive attention");

  auto& context = state.context;
  context.layout_a = layout(CUDA_R_16BF, d, s);
  context.layout_b = layout(CUDA_R_16BF, s, m);
  context.layout_c = layout(CUDA_R_16BF, d, m);
  context.allocate_workspace(naive_workspace_bytes);
  context.choose_algorithm(naive_workspace_bytes, "the batched P V of the naive attention");
}

inline void run_naive_attention(const naive_attention_state& state, const attention_problem& p, cudaStream_t stream) {
  const float one = 1.0f;
  const float zero = 0.0f;  // beta 0: C is never read, so the poisoned output never enters the math
  const auto& scores = state.scores;
  auto* const s = static_cast<float*>(state.s.data());
  auto* const probabilities = static_cast<__nv_bfloat16*>(state.p.data());
  AISP_CUBLAS_CHECK(cublasLtMatmul(scores.handle, scores.desc, &one, p.k, scores.layout_a, p.q, scores.layout_b, &zero, s,
                                   scores.layout_c, s, scores.layout_c, &scores.algo, scores.workspace,
                                   scores.workspace_bytes, stream));
  const std::size_t rows = static_cast<std::size_t>(p.batch) * p.heads() * static_cast<std::size_t>(p.seq);
  masked_softmax<<<static_cast<unsigned>(rows), softmax_threads, 0, stream>>>(s, probabilities, p.seq, p.causal, p.scale);
  AISP_CHECK_LAUNCH();
  const auto& context = state.context;
  AISP_CUBLAS_CHECK(cublasLtMatmul(context.handle, context.desc, &one, p.v, context.layout_a, probabilities, context.layout_b, &zero, p.o,
                                   context.layout_c, p.o, context.layout_c, &context.algo, context.workspace,
                                   context.workspace_bytes, stream));
}

}  // namespace aisp::labs_attention
