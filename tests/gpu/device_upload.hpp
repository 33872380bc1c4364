// A device copy of a host vector, and a bf16 device result read back as doubles, for GPU tests
// that hand-build a kernel's or a library's inputs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "aisp/check.hpp"
#include "aisp/device_scratch.hpp"
#include "support/element_codec.hpp"

namespace aisp::testing {

template <class T>
std::unique_ptr<aisp::device_scratch> upload(const std::vector<T>& values) {
  auto d = std::make_unique<aisp::device_scratch>(values.size() * sizeof(T));
  AISP_CUDA_CHECK(cudaMemcpy(d->data(), values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// `count` bf16 values at `device` (after a device-wide synchronize), as doubles.
inline std::vector<double> download_bf16(const void* device, std::size_t count) {
  AISP_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint16_t> bits(count);
  AISP_CUDA_CHECK(cudaMemcpy(bits.data(), device, count * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
  std::vector<double> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = aisp::bf16_bits_to_float(bits[i]);
  return out;
}

}  // namespace aisp::testing
