// The wgmma shapes labs/attention's wgmma steps issue (wgmma_attention.cuh), beside labs/gemm's
// m64n256k16 in hopper_ptx.cuh: S = Q K^T with both operands K-major in shared memory (N = 128
// keys), and O += P V with P's A fragments in registers and V N-major in shared memory (N = the
// head dim, 128 or 64; imm-trans-b = 1: V is stored (key, dim), dim contiguous).
//
// Accumulators (warp w of the warpgroup, lane l, g = l / 4, t = l % 4, j = 0 .. N/8 - 1):
// d[4j + 0..1] hold row 16w + g, columns 8j + 2t + {0, 1}; d[4j + 2..3] row 16w + g + 8.
// A in registers (m64 x k16, bf16): a[0] = row g, columns 2t, 2t + 1; a[1] = row g + 8, the same
// columns; a[2], a[3]: the same rows, columns 2t + 8, 2t + 9 (each register two bf16, the lower
// column in the low half): per warp exactly mma.sync m16n8k16's A fragment, so a 16-column slice
// c of a score accumulator (n-blocks 2c and 2c + 1) is P's A fragment for keys 16c .. 16c + 15.
#pragma once

#include <cstdint>

#include "aisp/hopper_ptx.cuh"

namespace aisp::hopper {

#if AISP_HOPPER_DEVICE

// The 64 accumulator operands %0-%63 of the N = 128 shapes, and their constraints 8 at a time.
#define AISP_WGMMA_D64                                                                        \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                   \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "          \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "          \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
#define AISP_WGMMA_ACC8(i)                                                                  \
  "+f"(d[(i)]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), "+f"(d[(i) + 4]),     \
      "+f"(d[(i) + 5]), "+f"(d[(i) + 6]), "+f"(d[(i) + 7])

// D(64 x 128, fp32) += A(64 x 16) B(128 x 16)^T, both K-major in shared memory (descriptors).
__device__ __forceinline__ void wgmma_ss_m64n128k16(float (&d)[64], std::uint64_t desc_a, std::uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      AISP_WGMMA_D64
      "%64, %65, 1, 1, 1, 0, 0;\n"
      : AISP_WGMMA_ACC8(0), AISP_WGMMA_ACC8(8), AISP_WGMMA_ACC8(16), AISP_WGMMA_ACC8(24),
        AISP_WGMMA_ACC8(32), AISP_WGMMA_ACC8(40), AISP_WGMMA_ACC8(48), AISP_WGMMA_ACC8(56)
      : "l"(desc_a), "l"(desc_b));
}

// D(64 x 128, fp32) += A(64 x 16, registers) B(16 x 128), B N-major in shared memory (imm-trans-b 1).
__device__ __forceinline__ void wgmma_rs_m64n128k16_nmajor(float (&d)[64], const std::uint32_t (&a)[4],
                                                          std::uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      AISP_WGMMA_D64
      "{%64, %65, %66, %67}, %68, 1, 1, 1, 1;\n"
      : AISP_WGMMA_ACC8(0), AISP_WGMMA_ACC8(8), AISP_WGMMA_ACC8(16), AISP_WGMMA_ACC8(24),
        AISP_WGMMA_ACC8(32), AISP_WGMMA_ACC8(40), AISP_WGMMA_ACC8(48), AISP_WGMMA_ACC8(56)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}

// D(64 x 64, fp32) += A(64 x 16, registers) B(16 x 64), B N-major in shared memory (imm-trans-b 1).
__device__ __forceinline__ void wgmma_rs_m64n64k16_nmajor(float (&d)[32], const std::uint32_t (&a)[4],
                                                          std::uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "{%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"
      : AISP_WGMMA_ACC8(0), AISP_WGMMA_ACC8(8), AISP_WGMMA_ACC8(16), AISP_WGMMA_ACC8(24)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}

// D(64 x N, fp32) += A(64 x 8, registers) B(8 x N), tf32 (fp32 bits whose low 13 bits are clear),
// B K-major in shared memory without swizzle (no_swizzle_kmajor_desc). A's registers hold, warp
// by warp, mma.sync m16n8k8's tf32 A fragment (a[0] row g, k t; a[1] row g + 8, k t; a[2], a[3]
// the same rows at k t + 4). N: 8, 16 or 32 (d: N / 2 accumulators, laid out as above).
template <int N>
__device__ __forceinline__ void wgmma_rs_tf32_m64k8(float (&d)[N / 2], const std::uint32_t (&a)[4], std::uint64_t desc_b) {
  static_assert(N == 8 || N == 16 || N == 32, "the tf32 shapes built: n8, n16, n32");
  if constexpr (N == 8) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
  } else if constexpr (N == 16) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, 1, 1, 1;\n"
                 : AISP_WGMMA_ACC8(0)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
  } else {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, 1, 1, 1;\n"
        : AISP_WGMMA_ACC8(0), AISP_WGMMA_ACC8(8)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
  }
}

#undef AISP_WGMMA_ACC8
#undef AISP_WGMMA_D64

#endif  // AISP_HOPPER_DEVICE

}  // namespace aisp::hopper
