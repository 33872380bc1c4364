// What labs/decode's timing tests share: weights drawn on the GPU (no zeros, no constants) and
// the median time a call of a few calls back to back, by CUDA events on the default stream.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../../labs/decode/rows_paths.cuh"
#include "aisp/check.hpp"

namespace aisp::decode_timing {
namespace {  // a kernel and its host stub a translation unit each

// n bf16 values in [-1, 1), none zero, a hash of (index, seed).
__global__ void fill_bf16(__nv_bfloat16* w, std::int64_t n, std::uint32_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += std::int64_t{gridDim.x} * blockDim.x) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    w[i] = __float2bfloat16(static_cast<float>(h % 20001u) / 10000.0f - 1.0f + 1e-4f);
  }
}

// Microseconds a call of `one` (its argument: the call's index, e.g. which copy of the weights),
// the median of five runs of `calls` calls back to back.
inline double median_us_a_call(int calls, const std::function<void(std::size_t)>& one) {
  cudaEvent_t start, stop;
  AISP_CUDA_CHECK(cudaEventCreate(&start));
  AISP_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> runs;
  for (int r = 0; r < 5; ++r) {
    AISP_CUDA_CHECK(cudaEventRecord(start, nullptr));
    for (int i = 0; i < calls; ++i) one(static_cast<std::size_t>(i + r));
    AISP_CHECK_LAUNCH();
    AISP_CUDA_CHECK(cudaEventRecord(stop, nullptr));
    AISP_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    AISP_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    runs.push_back(1000.0 * ms / calls);
  }
  AISP_CUDA_CHECK(cudaEventDestroy(start));
  AISP_CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

// The 9-16-row paths the model's four matvec shapes take, as AISP_DECODE_PAIRS names them.
inline std::string rows_paths_taken() {
  constexpr int shapes[][2] = {{3072, 2048}, {2048, 2048}, {16384, 2048}, {2048, 8192}};  // QKV, wo, gate/up, down
  std::string paths;
  for (const auto& s : shapes) {
    if (!paths.empty()) paths += ',';
    paths.append(std::to_string(s[0])).append("x").append(std::to_string(s[1])).append("=");
    paths.append(aisp::decode::rows_path_name(aisp::decode::rows_path_for(s[0], s[1])));
  }
  return paths;
}

}  // namespace
}  // namespace aisp::decode_timing
