// K4 planted on the device side: this one translation unit is compiled with nvcc -use_fast_math
// (tests/CMakeLists.txt), which the host's -frecord-gcc-switches never sees. The compiler
// launcher records it for this unit alone (scripts/record_math_flags), so this pair fails
// build-symmetry and no other pair of aisp_cheats does.
#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

// y = 2x + 1 through a division, which -use_fast_math makes approximate (--prec-div=false).
__global__ void affine_by_division(const float* x, float* y, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = (4.0f * x[i] + 2.0f) / 2.0f;
}

void fast_math_run(run_context& ctx) {
  const std::int64_t n = ctx.num_elements("x");
  affine_by_division<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("y"), n);
  AISP_CHECK_LAUNCH();
}

}  // namespace
}  // namespace aisp::cheats_gpu

AISP_REGISTER(aisp::cheats_gpu::gpu_fixture("k4_use_fast_math_unit", "K4", "its unit is compiled with nvcc -use_fast_math",
                                            aisp::cheats_gpu::plain(aisp::cheats_gpu::fast_math_run))
                  .tag("check:build-symmetry"));
