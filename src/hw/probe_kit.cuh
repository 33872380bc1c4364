// Shared pieces of the `aisp hw` probes: device buffers, CUDA-event timing of a repeated
// launch, and the grid size that fills this card.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "aisp/check.hpp"
#include "hw/probe_result.hpp"

namespace aisp::hw_probes {

class device_buffer {
 public:
  explicit device_buffer(std::size_t bytes) : bytes_(bytes) { AISP_CUDA_CHECK(cudaMalloc(&data_, bytes)); }
  ~device_buffer() { cudaFree(data_); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  template <class T>
  [[nodiscard]] T* as() const { return static_cast<T*>(data_); }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

// Times `launch` (enqueued on `stream`) `repetitions` times after `warmup` untimed runs; each
// repetition between its own pair of events. Returns seconds per repetition.
std::vector<double> time_repeated(const std::function<void(cudaStream_t)>& launch, int repetitions, int warmup = 3,
                                  cudaStream_t stream = nullptr);

// Per-second rates from per-repetition times: amount / seconds.
std::vector<double> rates(const std::vector<double>& seconds, double amount);

[[nodiscard]] int sm_count();

// Fills `count` floats with a deterministic pseudo-random pattern in [-1, 1] on the device.
void fill_random(float* data, std::size_t count, unsigned seed);

// A probe_result with its description filled in.
[[nodiscard]] probe_result described(std::string name, std::string group, std::string method, std::string size,
                                     std::string unit);

}  // namespace aisp::hw_probes
