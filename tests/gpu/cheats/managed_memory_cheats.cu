// C10 on the device: managed (unified) memory the pair never declared. Its migrations move
// data inside or outside the timed window as the driver pleases; the first fixture computes on
// the host through it, the second only keeps a managed scratch the host peeks at. Both are
// refused: the allocation is seen by the audit's callbacks (setup included), the migrations by
// CUPTI's unified-memory counters.
// Run: aisp_cheats bench run --targets cheats_gpu --verify-phase detect (tests/gpu/gpu_cheats_test).
#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

struct managed_pair {
  float* x = nullptr;
  float* y = nullptr;
};

void allocate_managed(run_context& ctx) {
  auto* m = new managed_pair;
  const auto bytes = static_cast<std::size_t>(ctx.num_elements("x")) * sizeof(float);
  AISP_CUDA_CHECK(cudaMallocManaged(&m->x, bytes));
  AISP_CUDA_CHECK(cudaMallocManaged(&m->y, bytes));
  ctx.user_state() = m;
}

void free_managed(run_context& ctx) {
  auto& m = state_of<managed_pair>(ctx);
  cudaFree(m.x);
  cudaFree(m.y);
  release_state<managed_pair>(ctx);
}

// x copied into managed memory, y computed by the host there (the pages migrate to it), then
// copied out (they migrate back).
void host_computes_in_managed_memory(run_context& ctx) {
  auto& m = state_of<managed_pair>(ctx);
  const auto n = static_cast<std::size_t>(ctx.num_elements("x"));
  AISP_CUDA_CHECK(cudaMemcpyAsync(m.x, ctx.as<const float>("x"), n * sizeof(float), cudaMemcpyDefault, ctx.stream()));
  AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  for (std::size_t i = 0; i < n; ++i) m.y[i] = 2.0f * m.x[i] + 1.0f;
  AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.as<float>("y"), m.y, n * sizeof(float), cudaMemcpyDefault, ctx.stream()));
}

// The device computes into a managed scratch and copies it to y; the host then reads the last
// element "to check it", which faults that page over.
void device_computes_through_managed_scratch(run_context& ctx) {
  auto& m = state_of<managed_pair>(ctx);
  const std::int64_t n = ctx.num_elements("x");
  affine_kernel<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), m.y, n, 0);
  AISP_CHECK_LAUNCH();
  AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.as<float>("y"), m.y, n * sizeof(float), cudaMemcpyDefault, ctx.stream()));
  AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  volatile float last = m.y[n - 1];
  (void)last;
}

AISP_REGISTER(gpu_fixture("c10_host_computes_in_managed_memory", "C10",
                          "computes y on the host in managed memory the pair never declared (pages migrate each call)",
                          with_setup(host_computes_in_managed_memory, allocate_managed, free_managed))
                  .tag("check:unified-memory"));

AISP_REGISTER(gpu_fixture("c10_managed_scratch_peeked_by_the_host", "C10",
                          "computes through an undeclared managed scratch whose last page the host reads back",
                          with_setup(device_computes_through_managed_scratch, allocate_managed, free_managed))
                  .tag("check:unified-memory"));

}  // namespace
}  // namespace aisp::cheats_gpu
