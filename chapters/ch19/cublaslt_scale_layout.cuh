// Where a block-scaled operand's fp32 scales sit in memory. ch19's pair stores them row-major,
// one row an operand row (A: 1 x 128 blocks) or 128-row block (B: 128 x 128 blocks), the k
// blocks of a row consecutive: scales[r * k_blocks + kb]. cuBLASLt's block-scaled fp8 GEMM
// reads them in its own layout (Note [cuBLASLt block scales] in cublaslt_block_scaled_peer.cuh);
// relayout_scales() writes one layout from the other.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "aisp/check.hpp"

namespace aisp::ch19 {
namespace {

struct scale_layout {
  bool outer_fastest = false;  // the row (or row block) index varies fastest; else the k block
  bool padded_to_4 = false;    // the fastest index's extent rounded up to a multiple of 4
};

inline constexpr scale_layout row_major_scales{};  // the pair's: scales[r * k_blocks + kb]

[[nodiscard]] __host__ __device__ inline std::int64_t round_up_4(std::int64_t extent) { return (extent + 3) / 4 * 4; }

// The distance between consecutive values of the slower index.
[[nodiscard]] __host__ __device__ inline std::int64_t scale_stride(scale_layout layout, std::int64_t rows, std::int64_t k_blocks) {
  const std::int64_t fastest = layout.outer_fastest ? rows : k_blocks;
  return layout.padded_to_4 ? round_up_4(fastest) : fastest;
}

[[nodiscard]] __host__ __device__ inline std::int64_t scale_index(scale_layout layout, std::int64_t rows, std::int64_t k_blocks,
                                                                  std::int64_t r, std::int64_t kb) {
  const std::int64_t stride = scale_stride(layout, rows, k_blocks);
  return layout.outer_fastest ? r + kb * stride : kb + r * stride;
}

[[nodiscard]] inline std::int64_t scale_entries(scale_layout layout, std::int64_t rows, std::int64_t k_blocks) {
  return scale_stride(layout, rows, k_blocks) * (layout.outer_fastest ? k_blocks : rows);
}

// What one step of the row (or row block) index and of the k block index move a scale.
[[nodiscard]] inline std::int64_t row_step(scale_layout layout, std::int64_t rows, std::int64_t k_blocks) {
  return layout.outer_fastest ? 1 : scale_stride(layout, rows, k_blocks);
}
[[nodiscard]] inline std::int64_t k_block_step(scale_layout layout, std::int64_t rows, std::int64_t k_blocks) {
  return layout.outer_fastest ? scale_stride(layout, rows, k_blocks) : 1;
}

// Both layouts put every scale of a rows x k_blocks tensor at the same place: the steps of the
// indexes that vary agree (one k block, padded to 4 or not, still spaces the rows apart).
[[nodiscard]] inline bool same_places(scale_layout a, scale_layout b, std::int64_t rows, std::int64_t k_blocks) {
  const bool rows_agree = rows == 1 || row_step(a, rows, k_blocks) == row_step(b, rows, k_blocks);
  const bool k_blocks_agree = k_blocks == 1 || k_block_step(a, rows, k_blocks) == k_block_step(b, rows, k_blocks);
  return rows_agree && k_blocks_agree;
}

__global__ void relayout_scales_kernel(const float* __restrict__ in, float* __restrict__ out, std::int64_t rows, std::int64_t k_blocks,
                                       scale_layout to) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * k_blocks) return;
  const std::int64_t r = i / k_blocks;
  const std::int64_t kb = i % k_blocks;
  out[scale_index(to, rows, k_blocks, r, kb)] = in[i];  // reads coalesced; the scales are a few MB at most
}

// out (scale_entries(to, ...) floats) from the pair's row-major `in` (rows x k_blocks). Padding
// entries are left as they were.
inline void relayout_scales(const float* in, float* out, std::int64_t rows, std::int64_t k_blocks, scale_layout to, cudaStream_t stream) {
  constexpr int threads = 256;
  const std::int64_t count = rows * k_blocks;
  relayout_scales_kernel<<<static_cast<unsigned>((count + threads - 1) / threads), threads, 0, stream>>>(in, out, rows, k_blocks, to);
  AISP_CHECK_LAUNCH();
}

}  // namespace
}  // namespace aisp::ch19
