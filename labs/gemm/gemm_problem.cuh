// The GEMM that every step of labs/gemm computes, and the launcher signature they share.
//   C (m, n) = A (m, k) · B(n, k)^T, fp32 accumulation, bf16 output; bf16 inputs (bf16_gemm.cu)
//   or e4m3 inputs (fp8_gemm.cu).
// Layouts (all row-major): A is (m, k) with k contiguous; B is stored as (n, k) with k
// contiguous (the "TN" GEMM: both operands K-major, the layout mma.sync and wgmma read without
// transposes, and the one cuBLASLt calls op(A) = T on column-major data); C is (m, n).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <limits>
#include <string_view>

#include "aisp/check.hpp"
#include "aisp/run_context.hpp"

namespace aisp::labs_gemm {

template <class Element>
struct basic_gemm_problem {
  const Element* a;  // (m, k)
  const Element* b;  // (n, k)
  __nv_bfloat16* c;  // (m, n)
  int m;
  int n;
  int k;
};

using gemm_problem = basic_gemm_problem<__nv_bfloat16>;
using fp8_gemm_problem = basic_gemm_problem<__nv_fp8_e4m3>;

// The problem a variant's buffers hold: operands `a_name` (m, k) and `b_name` (n, k) of type
// Element, output "c" (m, n), sizes from the workload.
template <class Element>
[[nodiscard]] basic_gemm_problem<Element> gemm_problem_of(run_context& ctx, std::string_view a_name,
                                                          std::string_view b_name) {
  const std::int64_t m = ctx.param("m");
  const std::int64_t n = ctx.param("n");
  const std::int64_t k = ctx.param("k");
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  // The kernels index rows with int and offsets with size_t: each dimension must fit an int.
  AISP_EXPECTS(m <= int_max && n <= int_max && k <= int_max && m * k <= int_max &&
                   n * k <= int_max && m * n <= int_max,
               "labs/gemm kernels need each matrix to hold < 2^31 elements");
  return {ctx.as<const Element>(a_name), ctx.as<const Element>(b_name), ctx.as<__nv_bfloat16>("c"),
          static_cast<int>(m),           static_cast<int>(n),           static_cast<int>(k)};
}

// Every step: `void launch_<step>(const gemm_problem&, cudaStream_t)` (the fp8 steps take an
// fp8_gemm_problem). It must be correct for every m, n, k >= 1 (edge tiles predicated, or a
// documented fallback for shapes its fast path cannot take), check its launch, and allocate
// nothing.

}  // namespace aisp::labs_gemm
