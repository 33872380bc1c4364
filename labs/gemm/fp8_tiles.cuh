// The e4m3 operand type of labs/gemm's fp8 steps (fp8_gemm.cu): the e4m3 wgmma shapes, the
// e4m3_operands that run steps_hopper.cuh's persistent kernel on 8-bit operands, and the k-block
// with fp32 promotion (Note [fp32 promotion]).
#pragma once

#include <cuda.h>  // CUtensorMapDataType only (aisp/tensor_map_encoder.hpp)
#include <cuda_fp8.h>

#include <cstdint>

#include "aisp/hopper_ptx.cuh"
#include "hopper_tiles.cuh"

namespace aisp::labs_gemm::hopper {

#if AISP_HOPPER_DEVICE

// D(64 x 256, fp32) += A(64 x 32) B(256 x 32)^T, A and B K-major e4m3 in shared memory. The
// operands are d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b: the 8-bit shapes have no
// imm-trans operands (only 16-bit types can be read transposed), so fp8 A and B must be
// K-major, as ours are. 32 e4m3 are 32 bytes: the same bytes per row and slice as m64n256k16
// bf16, so the descriptors are unchanged. Accumulators as m64n256k16 (aisp/hopper_ptx.cuh).
__device__ __forceinline__ void wgmma_m64n256k32_e4m3(float (&d)[128], std::uint64_t desc_a,
                                                      std::uint64_t desc_b) {
  asm volatile(
      "{\n"
      "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
      "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "
      "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, "
      "%87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, "
      "%104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, "
      "%118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, 1, 1, 1;\n"
      "}\n"
      : AISP_ACC8(0), AISP_ACC8(8), AISP_ACC8(16), AISP_ACC8(24),
        AISP_ACC8(32), AISP_ACC8(40), AISP_ACC8(48), AISP_ACC8(56),
        AISP_ACC8(64), AISP_ACC8(72), AISP_ACC8(80), AISP_ACC8(88),
        AISP_ACC8(96), AISP_ACC8(104), AISP_ACC8(112), AISP_ACC8(120)
      : "l"(desc_a), "l"(desc_b));
}

// D(64 x 128, fp32) = A(64 x 32) B(128 x 32)^T + (ScaleD ? D : 0), e4m3 K-major in shared
// memory: ScaleD = 0 starts a fresh accumulator (scale-d false: D = A B). Accumulators as the
// first 16 column blocks of m64n256: d[4j + 0..1] row 16w + l/4, columns 8j + 2(l%4) + {0, 1}.
template <int ScaleD>
__device__ __forceinline__ void wgmma_m64n128k32_e4m3(float (&d)[64], std::uint64_t desc_a,
                                                      std::uint64_t desc_b) {
  static_assert(ScaleD == 0 || ScaleD == 1);
  asm volatile(
      "{\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, %66, 1, 1;\n"
      "}\n"
      : AISP_ACC8(0), AISP_ACC8(8), AISP_ACC8(16), AISP_ACC8(24),
        AISP_ACC8(32), AISP_ACC8(40), AISP_ACC8(48), AISP_ACC8(56)
      : "l"(desc_a), "l"(desc_b), "n"(ScaleD));
}


#endif  // AISP_HOPPER_DEVICE

// Note [fp32 promotion]: Hopper's fp8 wgmma does not keep an fp32 sum. Its products are exact
// (two 4-bit significands), but the running sum it carries from one k32 step to the next keeps
// about 13 fraction bits (e8m13; DeepSeek-V3's report measured "around 14 bits" retained and a
// maximum relative error of nearly 2% at K = 4096), truncated rather than rounded. Over a long
// K the truncations add up, with a bias towards zero that follows the sign of the running sum.
// The fix DeepSeek published, and cuBLASLt's default (CUBLASLT_MATMUL_DESC_FAST_ACCUM = 0:
// "intermediate results ... periodically promoted to a higher precision"): accumulate only
// N_C = 128 k in the tensor core, then add that partial sum into fp32 registers with FADD, so
// the reduced-precision sum never spans more than 4 wgmmas. Here N_C is one 128-byte k-block.
// Registers: the 128 fp32 totals stay live across the k loop; a fresh 64 x 256 wgmma
// accumulator would add 128 more, past the 232 a consumer thread has. So each k-block runs as
// two 64 x 128 halves (m64n128k32, B rows 0-127 then 128-255) into one 64-register partial,
// each half completed (wait_group 0) and added before the next starts: 192 accumulator
// registers. A warpgroup's tensor work stalls while it adds, but the other consumer warpgroup's
// queued wgmmas (256 cycles of tensor time per half at the full rate) cover its ~100-cycle wait
// and 64 FADDs; the cost is an extra read of the A rows per k-block from shared memory (96
// instead of 80 B/clk of operand reads at the full rate).
struct e4m3_operands {
  using element = __nv_fp8_e4m3;
  static constexpr int block_k = block_k_bytes;  // 128 e4m3 per 128-byte k-block
  static constexpr int mma_k = 32;                // K per wgmma: 32 e4m3 = 32 bytes
  static constexpr CUtensorMapDataType tma_type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
#if AISP_HOPPER_DEVICE
  __device__ static void mma(float (&acc)[128], std::uint64_t desc_a, std::uint64_t desc_b) {
    wgmma_m64n256k32_e4m3(acc, desc_a, desc_b);
  }

  // One k-block with fp32 promotion (Note [fp32 promotion]): total += A(64 x 128) B(256 x 128)^T,
  // each 128-column half summed in `partial` by the tensor core, then added in fp32; Scaled:
  // added times scale[half][row], the thread's top rows (registers i % 4 < 2) and the rows 8
  // below (Note [block scales]). When it returns every wgmma reading the slot has completed:
  // the caller may release it.
  template <bool Scaled>
  __device__ static void mma_k_block_promoted(float (&total)[128], float (&partial)[64],
                                              std::uint32_t a_rows, std::uint32_t b_tile,
                                              const float (&scale)[2][2]) {
    const std::uint64_t desc_a = sw128_kmajor_desc(a_rows);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      // B rows 128 half .. 128 half + 127: 16 KB further, 16 whole 1024-byte swizzle atoms, so
      // the descriptor's base offset stays 0.
      const std::uint64_t desc_b = sw128_kmajor_desc(b_tile + half * (block_n / 2) * block_k_bytes);
      wgmma_fence();  // the previous half's FADDs have read `partial` before it is overwritten
      wgmma_m64n128k32_e4m3<0>(partial, desc_a, desc_b);
#pragma unroll
      for (int slice = 1; slice < block_k / mma_k; ++slice) {
        wgmma_m64n128k32_e4m3<1>(partial, desc_a + 2 * slice, desc_b + 2 * slice);
      }
      wgmma_commit();
      wgmma_wait<0>();
      fence_accumulators(partial);
#pragma unroll
      for (int i = 0; i < 64; ++i) {
        if constexpr (Scaled) {
          total[64 * half + i] = fmaf(partial[i], scale[half][(i % 4) / 2], total[64 * half + i]);
        } else {
          total[64 * half + i] += partial[i];
        }
      }
    }
  }
#endif
};
static_assert(e4m3_operands::mma_k * sizeof(e4m3_operands::element) == 32);
static_assert((block_n / 2) * block_k_bytes % smem_align == 0, "a B half starts on a swizzle atom");

}  // namespace aisp::labs_gemm::hopper
