// Honest pairs whose launches the audit must record without failing them (group records_gpu,
// not cheats): C8, a cooperative launch, and C7, a variant bound by its launches, with a
// stream synchronization after each of its small kernels (short idle gaps, never L1).
// Run: aisp_cheats bench run --targets records_gpu (tests/gpu/launch_records_test.cpp).
#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

__global__ void affine_grid_stride(const float* __restrict__ x, float* __restrict__ y, std::int64_t n) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += stride) y[i] = 2.0f * x[i] + 1.0f;
}

// One block per SM, launched cooperatively (it could grid-sync; it does not need to).
void cooperative(run_context& ctx) {
  static const int sms = [] {
    int device = 0;
    int count = 0;
    AISP_CUDA_CHECK(cudaGetDevice(&device));
    AISP_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return count;
  }();
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  std::int64_t n = ctx.num_elements("x");
  void* arguments[] = {&x, &y, &n};
  AISP_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&affine_grid_stride), dim3(sms), dim3(block_threads),
                                              arguments, 0, ctx.stream()));
}

// 64 slices, each its own launch followed by a stream synchronization.
void synced_slices(run_context& ctx) {
  const std::int64_t n = ctx.num_elements("x");
  constexpr std::int64_t slices = 64;
  const std::int64_t per_slice = (n + slices - 1) / slices;
  for (std::int64_t first = 0; first < n; first += per_slice) {
    const std::int64_t count = std::min(per_slice, n - first);
    affine_kernel<<<blocks_for(count), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x") + first,
                                                                       ctx.as<float>("y") + first, count, 0);
    AISP_CHECK_LAUNCH();
    AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  }
}

pair launch_records() {
  // 2^24 elements: the baseline streams 128 MiB per call and keeps the device busy; each synced
  // slice moves 2 MiB in about a microsecond and then waits for the host.
  return affine_declaration("records_gpu:launch_shapes", "honest launches the audit records: cooperative (C8), launch-bound (C7)")
      .add_variant("optimized_cooperative", "one block per SM, cudaLaunchCooperativeKernel", cooperative)
      .add_variant("optimized_synced_slices", "64 launches, each followed by cudaStreamSynchronize", synced_slices);
}

AISP_REGISTER(launch_records());

}  // namespace
}  // namespace aisp::cheats_gpu
