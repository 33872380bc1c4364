// Device wrappers for the warp-level tensor-core path (sm_80+) that the mma.sync pairs share:
// ldmatrix (plain and transposed) and the bf16 and fp16 m16n8k16 MMAs with fp32 accumulators. One PTX
// instruction each. Fragment layouts: Note [m16n8k16 fragments] in labs/gemm/steps_mma.cuh.
// Also the fp32-pair-to-bf16 packing that turns accumulators into A fragments or stored pairs.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

namespace aisp::ptx {

// Two fp32 values as one register of two bf16 (round to nearest), `low` in the low half: the
// fragment order of mma.sync and wgmma (the lower column first).
__device__ __forceinline__ std::uint32_t pack_bf16(float low, float high) {
  const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
  std::uint32_t bits;
  std::memcpy(&bits, &pair, sizeof(bits));
  return bits;
}

// The same for two fp16.
__device__ __forceinline__ std::uint32_t pack_f16(float low, float high) {
  const __half2 pair = __floats2half2_rn(low, high);
  std::uint32_t bits;
  std::memcpy(&bits, &pair, sizeof(bits));
  return bits;
}

// Four 8 x 8 b16 matrices from shared memory; lanes 8j..8j+7 give the row addresses of matrix j,
// and register j of lane l receives row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1 of matrix j.
// volatile: it reads shared memory written by other threads, so it must not be merged or hoisted
// across the barriers that order those writes.
__device__ __forceinline__ void ldmatrix_x4(unsigned int (&fragment)[4], unsigned int address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
               : "r"(address));
}

// The same four matrices, each transposed on the way: register j of lane l receives rows
// 2 (l % 4) and 2 (l % 4) + 1 of column l / 4 of matrix j. It turns a row-major (k, n) tile
// (the V of attention) into the B fragments an (n, k) tile would give.
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned int (&fragment)[4], unsigned int address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
               : "r"(address));
}

// d += a · b on one 16 x 8 x 16 tile, bf16 operands, fp32 accumulators.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const unsigned int (&a)[4], const unsigned int (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// The same with fp16 operands (ch18's fp8 decode widens e4m3 to fp16, which holds it exactly).
__device__ __forceinline__ void mma_f16_16816(float (&d)[4], const unsigned int (&a)[4], const unsigned int (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace aisp::ptx
