// C9: the timed kernel hands its work to child grids launched from the device (dynamic
// parallelism). Built with relocatable device code into its own library (tests/CMakeLists.txt).
#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

__global__ void parent_launches_children(const float* x, float* y, std::int64_t n) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  affine_kernel<<<blocks_for(n), block_threads, 0, cudaStreamFireAndForget>>>(x, y, n, 0);
}

}  // namespace

AISP_REGISTER(gpu_fixture("c9_child_kernels", "C9", "one thread launches the real work as a child grid",
                          plain([](run_context& ctx) {
                            parent_launches_children<<<1, 32, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("y"),
                                                                                  ctx.num_elements("x"));
                            AISP_CHECK_LAUNCH();
                          })).tag("check:child-kernels"));

}  // namespace aisp::cheats_gpu
