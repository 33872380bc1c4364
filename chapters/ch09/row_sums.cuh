// The per-row sums that ch09:fused_l2_norm and ch09:fused_rmsnorm_residual share: squares of a
// float or a float4, and the sum over a warp and over a block, returned to every thread
// (butterfly shuffles, then one broadcast read per warp total).
#pragma once

namespace aisp::ch09 {
namespace {

[[nodiscard]] __device__ float squares(float v) { return v * v; }
[[nodiscard]] __device__ float squares(float4 v) {
  return fmaf(v.x, v.x, fmaf(v.y, v.y, fmaf(v.z, v.z, v.w * v.w)));
}

namespace warp {
[[nodiscard]] __device__ float reduce_sum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  return value;  // every lane holds the warp's sum
}
}  // namespace warp

namespace block {
// The block's sum, returned to every thread. Called once per block (one row per block).
template <int WarpsPerBlock>
[[nodiscard]] __device__ float reduce_sum(float value) {
  __shared__ float warp_sums[WarpsPerBlock];
  value = warp::reduce_sum(value);
  if (threadIdx.x % 32 == 0) {
    warp_sums[threadIdx.x / 32] = value;
  }
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < WarpsPerBlock; ++w) {
    total += warp_sums[w];  // the same word for all lanes: a broadcast, no bank conflict
  }
  return total;
}
}  // namespace block

}  // namespace
}  // namespace aisp::ch09
