// The bf16 GEMM that every step of labs/gemm computes, and the launcher signature they share.
//   C (m, n) = A (m, k) · B(n, k)^T, bf16 inputs, fp32 accumulation, bf16 output.
// Layouts (all row-major): A is (m, k) with k contiguous; B is stored as (n, k) with k
// contiguous (the "TN" GEMM: both operands K-major, the layout mma.sync and wgmma read without
// transposes, and the one cuBLASLt calls op(A) = T on column-major data); C is (m, n).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace aisp::labs_gemm {

struct gemm_problem {
  const __nv_bfloat16* a;  // (m, k)
  const __nv_bfloat16* b;  // (n, k)
  __nv_bfloat16* c;        // (m, n)
  int m;
  int n;
  int k;
};

// Every step: `void launch_<step>(const gemm_problem&, cudaStream_t)`. It must be correct for
// every m, n, k >= 1 (edge tiles predicated, or a documented fallback for shapes its fast path
// cannot take), check its launch, and allocate nothing.

}  // namespace aisp::labs_gemm
