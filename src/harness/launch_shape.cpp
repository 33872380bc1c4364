#include "aisp/launch_shape.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "aisp/check.hpp"

namespace aisp {
namespace {

struct device_shape {
  int sm_count = 0;
  int threads_per_sm = 0;
};

const device_shape& current_shape() {
  static const device_shape shape = [] {
    int device = 0;
    AISP_CUDA_CHECK(cudaGetDevice(&device));
    device_shape s;
    AISP_CUDA_CHECK(cudaDeviceGetAttribute(&s.sm_count, cudaDevAttrMultiProcessorCount, device));
    AISP_CUDA_CHECK(cudaDeviceGetAttribute(&s.threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    return s;
  }();
  return shape;
}

}  // namespace

int device_sm_count() { return current_shape().sm_count; }

std::int64_t resident_blocks(int block_threads) {
  const auto& s = current_shape();
  return std::int64_t{s.sm_count} * s.threads_per_sm / block_threads;
}

unsigned int wave_grid(std::int64_t items, int block_threads) {
  const std::int64_t wanted = (items + block_threads - 1) / block_threads;
  return static_cast<unsigned int>(std::clamp<std::int64_t>(wanted, 1, resident_blocks(block_threads)));
}

}  // namespace aisp
