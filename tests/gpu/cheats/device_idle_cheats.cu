// L1 on the device, past the old rule's blind spot: the host computes y while the device sits
// idle, and empty kernels pad the sample so it no longer has "a handful of operations". The
// idle shows as the part of the window spent in gaps longer than a launch's latency.
// Run: aisp_cheats bench run --targets cheats_gpu --verify-phase detect (tests/gpu/gpu_cheats_test).
#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

__global__ void empty_kernel() {}

struct pinned_mirror {
  float* x = nullptr;
  float* y = nullptr;
};

void allocate_mirror(run_context& ctx) {
  auto* m = new pinned_mirror;
  const auto bytes = static_cast<std::size_t>(ctx.num_elements("x")) * sizeof(float);
  AISP_CUDA_CHECK(cudaMallocHost(&m->x, bytes));
  AISP_CUDA_CHECK(cudaMallocHost(&m->y, bytes));
  ctx.user_state() = m;
}

void free_mirror(run_context& ctx) {
  auto& m = state_of<pinned_mirror>(ctx);
  cudaFreeHost(m.x);
  cudaFreeHost(m.y);
  release_state<pinned_mirror>(ctx);
}

void launch_empty(run_context& ctx, int count) {
  for (int k = 0; k < count; ++k) empty_kernel<<<1, 32, 0, ctx.stream()>>>();
  AISP_CHECK_LAUNCH();
}

// x to the host, y computed there in `chunks` pieces with `pads` empty kernels after each, y back.
void host_compute_padded(run_context& ctx, int chunks, int pads) {
  auto& m = state_of<pinned_mirror>(ctx);
  const auto n = static_cast<std::size_t>(ctx.num_elements("x"));
  AISP_CUDA_CHECK(cudaMemcpyAsync(m.x, ctx.as<const float>("x"), n * sizeof(float), cudaMemcpyDeviceToHost, ctx.stream()));
  AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  const std::size_t per_chunk = (n + chunks - 1) / chunks;
  for (int c = 0; c < chunks; ++c) {
    const std::size_t end = std::min(n, (c + 1) * per_chunk);
    for (std::size_t i = c * per_chunk; i < end; ++i) m.y[i] = 2.0f * m.x[i] + 1.0f;
    launch_empty(ctx, pads);
  }
  AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.as<float>("y"), m.y, n * sizeof(float), cudaMemcpyHostToDevice, ctx.stream()));
}

AISP_REGISTER(gpu_fixture("l1_host_work_behind_empty_kernels", "L1",
                          "launches five empty kernels, then computes y on the host between two copies",
                          with_setup([](run_context& ctx) { host_compute_padded(ctx, 1, 5); }, allocate_mirror, free_mirror))
                  .tag("check:device-idle"));

AISP_REGISTER(gpu_fixture("l1_host_chunks_between_empty_kernels", "L1",
                          "computes y on the host in 32 chunks with an empty kernel after each, so the device never looks idle for long",
                          with_setup([](run_context& ctx) { host_compute_padded(ctx, 32, 1); }, allocate_mirror, free_mirror))
                  .tag("check:device-idle"));

}  // namespace
}  // namespace aisp::cheats_gpu
