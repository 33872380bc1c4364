// Programmatic dependent launch (sm_90+): a kernel launched with launch_dependent() may start
// while the kernel before it on the stream still runs, once every block of that one has called
// let_next_kernel_start() (or exited). It must call wait_for_previous_kernel() before it reads
// what an earlier kernel wrote or writes what one reads: the wait returns when the earlier grids
// have completed and their writes are visible. What comes before the wait may only touch memory
// no kernel of the stream writes (a model's weights), which is what it buys: those loads overlap
// the earlier kernel's tail. Both calls are no-ops for a plain launch and below sm_90, so one
// kernel serves both launches; a stream capture records the launch as a programmatic graph edge.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "aisp/check.hpp"

namespace aisp::ptx {

// Lets the next kernel on the stream, if launched with launch_dependent(), start now.
__device__ __forceinline__ void let_next_kernel_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Waits until the kernels before this one on the stream have completed, their writes visible.
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace aisp::ptx

namespace aisp {

// Whether the current device runs programmatic dependent launches (compute capability 9.0+);
// two host-side lookups, no work on the GPU.
inline bool device_runs_dependent_launches() {
  int device = 0;
  int major = 0;
  AISP_CUDA_CHECK(cudaGetDevice(&device));
  AISP_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9;
}

// kernel<<<grid, block, shared_bytes, stream>>>(args...) as a programmatic dependent launch
// (a plain launch below sm_90).
template <class... Params, class... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream,
                      const Args&... args) {
  cudaLaunchAttribute early{};
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = &early;
  config.numAttrs = device_runs_dependent_launches() ? 1 : 0;
  AISP_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...));
  AISP_CHECK_LAUNCH();
}

}  // namespace aisp
