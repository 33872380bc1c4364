#include "harness/launch_gate.hpp"

#include <cuda_runtime.h>

#include "aisp/check.hpp"
#include "harness/global_timer.cuh"

namespace aisp {
namespace {

constexpr int open_flag = 0;
constexpr int timed_out_flag = 1;

// One thread spins on the host-written flag (volatile: read from memory each time).
__global__ void launch_gate_kernel(volatile int* flags, unsigned long long timeout_ns) {
  const unsigned long long start = global_timer_ns();
  while (flags[open_flag] == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      flags[timed_out_flag] = 1;
      return;
    }
  }
}

}  // namespace

launch_gate::launch_gate(double timeout_ms) : timeout_ms_(timeout_ms) {
  void* host = nullptr;
  AISP_CUDA_CHECK(cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped));
  host_flags_ = static_cast<volatile int*>(host);
  host_flags_[open_flag] = 1;
  host_flags_[timed_out_flag] = 0;
  void* device = nullptr;
  AISP_CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
  device_flags_ = static_cast<int*>(device);
}

launch_gate::~launch_gate() {
  if (host_flags_ == nullptr) return;
  host_flags_[open_flag] = 1;  // a gate still closed (an exception between close and open) ends now
  static_cast<void>(cudaDeviceSynchronize());
  static_cast<void>(cudaFreeHost(const_cast<int*>(host_flags_)));
}

void launch_gate::close(cudaStream_t stream) {
  host_flags_[open_flag] = 0;
  host_flags_[timed_out_flag] = 0;
  const auto timeout_ns = static_cast<unsigned long long>(timeout_ms_ * 1e6);
  launch_gate_kernel<<<1, 1, 0, stream>>>(device_flags_, timeout_ns);
  AISP_CHECK_LAUNCH();
}

void launch_gate::open() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);  // the launches before it are issued first
  host_flags_[open_flag] = 1;
}

bool launch_gate::timed_out() const { return host_flags_[timed_out_flag] != 0; }

}  // namespace aisp
