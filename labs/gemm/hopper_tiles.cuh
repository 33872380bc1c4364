// Shared pieces of the Hopper GEMM steps 5-7 (steps_hopper.cuh) and the fp8 steps (fp8_tiles.cuh):
// the tile geometry, the shared-memory map, the bf16 operand type, one k-block of wgmma, the
// epilogue, and the SIMT fallback every step uses for shapes TMA cannot describe.
#pragma once

#include <cuda.h>  // CUtensorMapDataType only: aisp does not link libcuda (aisp/tensor_map_encoder.hpp)
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstring>

#include "aisp/hopper_ptx.cuh"
#include "aisp/mma_sync.cuh"

namespace aisp::labs_gemm::hopper {

using namespace aisp::hopper;  // the PTX wrappers (aisp/hopper_ptx.cuh), shared with labs/attention

// Block tile 128 x 256 x 64 (bf16; 128 x 256 x 128 for e4m3): two consumer warpgroups, each
// owning 64 rows x 256 columns (one m64n256k16 wgmma per 16-wide K slice, 128 fp32 accumulators
// per thread). The tiles are sized in bytes: a k-block is 128 bytes of every row whatever the
// element type, so the smem map, the ring and the descriptors are the same for both types.
constexpr int block_m = 128;
constexpr int block_n = 256;
constexpr int block_k_bytes = 128;  // one 128-byte swizzle row per tile row
constexpr int block_k = block_k_bytes / 2;  // 64 bf16 (bf16_operands::block_k)
constexpr int stages = 4;
constexpr int consumer_warpgroups = 2;
constexpr int consumer_warps = 4 * consumer_warpgroups;
constexpr int warpgroup_rows = block_m / consumer_warpgroups;  // 64

constexpr int a_tile_bytes = block_m * block_k_bytes;         // 16 KB
constexpr int b_tile_bytes = block_n * block_k_bytes;         // 32 KB
constexpr int stage_bytes = a_tile_bytes + b_tile_bytes;      // 48 KB, 1024-byte multiple
constexpr int a_warpgroup_bytes = warpgroup_rows * block_k_bytes;  // 8 KB
constexpr int staging_bytes_per_warp = 16 * 64 * 2;           // 16 rows x 64 columns of bf16
constexpr int staging_offset = stages * stage_bytes;
constexpr int barrier_offset = staging_offset + consumer_warps * staging_bytes_per_warp;
constexpr int smem_align = 1024;  // 128-byte swizzle atoms are 8 rows x 128 B
// + smem_align: the dynamic buffer is rounded up to the alignment inside the kernel.
constexpr int smem_bytes = barrier_offset + 2 * stages * 8 + smem_align;  // 214,080 B
static_assert(smem_bytes <= 227 * 1024, "must fit one CTA per SM (227 KB opt-in)");
static_assert(stage_bytes % smem_align == 0 && a_tile_bytes % smem_align == 0);

// Note [smem map]: from a 1024-aligned base: `stages` slots of A (128 rows x 128 B) then B (256
// rows x 128 B), both as TMA wrote them (128-byte swizzle); 8 per-warp epilogue staging buffers
// of 2 KB; then the full and empty mbarriers of each slot.
struct smem_map {
  std::uint8_t* base;  // generic pointer, for plain loads of the staging buffers
  std::uint32_t addr;  // the same byte in the shared window, for PTX operands

  __device__ explicit smem_map(std::uint8_t* dynamic_smem) {
    const std::uint32_t raw = smem_u32(dynamic_smem);
    const std::uint32_t pad = (smem_align - (raw % smem_align)) % smem_align;
    base = dynamic_smem + pad;
    addr = raw + pad;
  }
  __device__ std::uint32_t a(int slot) const { return addr + slot * stage_bytes; }
  __device__ std::uint32_t b(int slot) const { return a(slot) + a_tile_bytes; }
  __device__ std::uint8_t* staging(int consumer_warp) const {
    return base + staging_offset + consumer_warp * staging_bytes_per_warp;
  }
  __device__ std::uint32_t full(int slot) const { return addr + barrier_offset + 8 * slot; }
  __device__ std::uint32_t empty(int slot) const { return full(stages + slot); }
};

__host__ __device__ constexpr int ceil_div(int x, int y) { return (x + y - 1) / y; }

using ptx::pack_bf16;  // two accumulators as a bf16 pair, fragment order (aisp/mma_sync.cuh)

// Note [operand types]: what the kernels need to know about an element type: the k extent of a
// 128-byte k-block, the TMA element type, and the wgmma that reads one 32-byte K slice of both
// operands (m64n256k16 for bf16; m64n256k32 for e4m3, fp8_tiles.cuh). Every slice is 32 bytes
// of each row, two 16-byte core-matrix columns, whatever the type, so the descriptors and their
// +2 (32 B >> 4) step per slice are shared (Note [wgmma descriptor] in aisp/hopper_ptx.cuh).
struct bf16_operands {
  using element = __nv_bfloat16;
  static constexpr int block_k = block_k_bytes / 2;  // 64
  static constexpr int mma_k = 16;                    // K per wgmma
  static constexpr CUtensorMapDataType tma_type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
#if AISP_HOPPER_DEVICE
  __device__ static void mma(float (&acc)[128], std::uint64_t desc_a, std::uint64_t desc_b) {
    wgmma_m64n256k16(acc, desc_a, desc_b);
  }
#endif
};
static_assert(bf16_operands::mma_k * 2 == 32 && bf16_operands::block_k == block_k);

#if AISP_HOPPER_DEVICE

// One 128-byte k-block for one consumer warpgroup: four wgmmas (m64n256k16 for bf16, k32 for
// e4m3), one commit group. a_rows: this warpgroup's 64 rows of the A slot; b_tile: the 256-row
// B slot. (The default keeps the bf16 call sites, ch15's among them, as they were.)
template <class Operands = bf16_operands>
__device__ __forceinline__ void mma_k_block(float (&acc)[128], std::uint32_t a_rows,
                                            std::uint32_t b_tile) {
  static_assert(Operands::mma_k * static_cast<int>(sizeof(typename Operands::element)) == 32);
  const std::uint64_t desc_a = sw128_kmajor_desc(a_rows);
  const std::uint64_t desc_b = sw128_kmajor_desc(b_tile);
  wgmma_fence();
#pragma unroll
  for (int slice = 0; slice < Operands::block_k / Operands::mma_k; ++slice) {
    // One slice = 32 bytes further along K = +2 in the descriptor's address field (>> 4).
    Operands::mma(acc, desc_a + 2 * slice, desc_b + 2 * slice);
  }
  wgmma_commit();
}

// Note [epilogue]: each warp owns 16 rows x 256 columns of the warpgroup's accumulators. Per
// 64-column chunk it converts to bf16 and writes the chunk with 4 stmatrix.x4 into its 2 KB
// staging buffer (rows of 128 B, 16-byte chunk c of row r at c ^ (r % 8): conflict-free for
// both the stmatrix rows and the 16-byte reads), then reads it back as 16-byte rows and stores
// them coalesced: each store instruction writes 4 full 128-byte row segments of C. Rows >= m
// and columns >= n are skipped (TMA zero-filled their inputs).
__device__ __forceinline__ void store_warp_rows(const float (&acc)[128], std::uint8_t* staging,
                                                __nv_bfloat16* __restrict__ c, int m, int n,
                                                int row0, int col0) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::uint32_t staging_addr = smem_u32(staging);
  const bool vector_ok = n % 8 == 0 && reinterpret_cast<std::uintptr_t>(c) % 16 == 0;
  const int matrix = lane / 8;                        // stmatrix: lane gives a row of matrix l/8
  const int matrix_row = lane % 8 + 8 * (matrix & 1);  // matrices 1, 3: rows 8-15
  const int matrix_chunk = matrix >> 1;                // matrices 2, 3: the next 8 columns
#pragma unroll
  for (int chunk64 = 0; chunk64 < 4; ++chunk64) {
    __syncwarp();  // the previous chunk's reads are done before the buffer is rewritten
#pragma unroll
    for (int pair = 0; pair < 4; ++pair) {
      const int j = 8 * chunk64 + 2 * pair;  // first of the two 8-column blocks
      const int chunk = 2 * pair + matrix_chunk;
      stmatrix_x4(staging_addr + matrix_row * 128 + ((chunk ^ (lane % 8)) << 4),
                  pack_bf16(acc[4 * j], acc[4 * j + 1]), pack_bf16(acc[4 * j + 2], acc[4 * j + 3]),
                  pack_bf16(acc[4 * j + 4], acc[4 * j + 5]),
                  pack_bf16(acc[4 * j + 6], acc[4 * j + 7]));
    }
    __syncwarp();
#pragma unroll
    for (int pass = 0; pass < 4; ++pass) {
      const int unit = lane + 32 * pass;  // 16 rows x 8 chunks of 16 bytes
      const int r = unit / 8;
      const int chunk = unit % 8;
      const uint4 v = *reinterpret_cast<const uint4*>(staging + r * 128 + ((chunk ^ (r % 8)) << 4));
      const int row = row0 + r;
      const int col = col0 + 64 * chunk64 + 8 * chunk;
      if (row >= m || col >= n) continue;
      __nv_bfloat16* dst = c + static_cast<std::int64_t>(row) * n + col;
      if (vector_ok && col + 8 <= n) {
        *reinterpret_cast<uint4*>(dst) = v;
      } else {
        __nv_bfloat16 values[8];
        std::memcpy(values, &v, sizeof(values));
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          if (col + e < n) dst[e] = values[e];
        }
      }
    }
  }
}

#endif  // AISP_HOPPER_DEVICE

// Fallback for shapes the TMA path cannot describe (the row stride k x sizeof(Element) of A and
// B must be a multiple of 16 bytes) and for devices other than sm_90: one thread per C element,
// fp32 accumulation of exact products. Correct, not tuned; the validation sizes with such a k
// run it. (A template, like every kernel here, so the header can sit in more than one
// translation unit.)
__device__ __forceinline__ float element_to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float element_to_float(__nv_fp8_e4m3 x) { return static_cast<float>(x); }

template <int Edge, class Element = __nv_bfloat16>
__global__ void __launch_bounds__(Edge* Edge)
    gemm_simt_fallback_kernel(const Element* __restrict__ a, const Element* __restrict__ b,
                              __nv_bfloat16* __restrict__ c, int m, int n, int k) {
  const int col = static_cast<int>(blockIdx.x) * Edge + static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.y) * Edge + static_cast<int>(threadIdx.y);
  if (row >= m || col >= n) return;
  const Element* a_row = a + static_cast<std::int64_t>(row) * k;
  const Element* b_row = b + static_cast<std::int64_t>(col) * k;
  float acc = 0.0f;
  for (int i = 0; i < k; ++i) {
    acc = fmaf(element_to_float(a_row[i]), element_to_float(b_row[i]), acc);
  }
  c[static_cast<std::int64_t>(row) * n + col] = __float2bfloat16_rn(acc);
}

}  // namespace aisp::labs_gemm::hopper
