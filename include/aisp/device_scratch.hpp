// Device scratch that a library call sizes for itself (CUB's temporary storage, say), beside the
// buffers the harness owns: allocated once in setup(), kept in variant state, freed with it
// (RAII). Usage: `make_state<device_scratch>(ctx, bytes)` in setup(), `state_of<...>` in run(),
// `release_state<...>` in teardown(). Host-only.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "aisp/check.hpp"

namespace aisp {

class device_scratch {
 public:
  // At least one byte, so data() is never null: CUB reads a null storage pointer as "only tell
  // me the size" and does no work.
  explicit device_scratch(std::size_t bytes) : bytes_(std::max<std::size_t>(bytes, 1)) {
    AISP_CUDA_CHECK(cudaMalloc(&data_, bytes_));
  }
  device_scratch(const device_scratch&) = delete;
  device_scratch& operator=(const device_scratch&) = delete;
  ~device_scratch() { static_cast<void>(cudaFree(data_)); }  // nobody is left to tell

  [[nodiscard]] void* data() const { return data_; }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

}  // namespace aisp
