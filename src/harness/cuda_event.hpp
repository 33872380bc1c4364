// A CUDA event owned for its scope (created at construction, destroyed at the end).
#pragma once

#include <cuda_runtime_api.h>

#include "aisp/check.hpp"

namespace aisp {

class cuda_event {
 public:
  cuda_event() { AISP_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~cuda_event() { static_cast<void>(cudaEventDestroy(event_)); }  // nobody is left to tell
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;
  [[nodiscard]] cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace aisp
