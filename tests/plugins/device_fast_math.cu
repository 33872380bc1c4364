// A user's CUDA plugin whose candidate kernel sits in a unit built with nvcc --use_fast_math
// (tests/CMakeLists.txt: device_fast_math_kernel.cu), as red team four's was: the host compiler
// never sees the switch, so the build record cannot (Note [plugin build symmetry]); the kernel's
// machine code can (Note [device fast math], src/runner/math_unit_checks.cpp): the optimized
// variant fails build-symmetry (tests/gpu/plugin_cheats_test.cpp).
#include <cstdint>
#include <string>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "device_fast_math.cuh"

namespace {

// The same arithmetic as the fast-math unit's, built with the default (IEEE) switches.
__global__ void affine_by_division(const float* __restrict__ x, float* __restrict__ y, std::int64_t n) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (4.0f * x[i] + 2.0f) / 2.0f;
}

void launch_precise(aisp::run_context& ctx) {
  const std::int64_t n = ctx.param("n");
  affine_by_division<<<static_cast<unsigned int>((n + fast_math_block - 1) / fast_math_block), fast_math_block, 0, ctx.stream()>>>(
      ctx.as<const float>("x"), ctx.as<float>("y"), n);
  AISP_CHECK_LAUNCH();
}

void launch_fast(aisp::run_context& ctx) {
  launch_fast_math_affine(ctx.as<const float>("x"), ctx.as<float>("y"), ctx.param("n"), ctx.stream());
  AISP_CHECK_LAUNCH();
}

[[nodiscard]] std::int64_t elements(const aisp::workload& w) { return w.get("n"); }

}  // namespace

AISP_REGISTER(aisp::pair("plugin_cheat:device_fast_math")
                  .summary("y = (4x + 2) / 2; the optimized kernel's unit is built with nvcc --use_fast_math (plugin fixture)")
                  .benchmark_size({{"n", std::int64_t{1} << 25}})
                  .validation_size({{"n", 1}})
                  .validation_size({{"n", 4099}})
                  .held_out_size({{"n", 65537}})
                  .input("x", aisp::dtype::f32, elements)
                  .output("y", aisp::dtype::f32, elements)
                  .work([](const aisp::workload& w) {
                    const double n = static_cast<double>(w.get("n"));
                    return aisp::work_amount{.bytes = 8.0 * n, .flops = 3.0 * n};
                  })
                  .reference([](aisp::reference_io& io) {
                    const auto x = io.input("x");
                    const auto y = io.output("y");
                    for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0 * x[i] + 1.0;
                  })
                  .add_variant("baseline", "IEEE division", launch_precise)
                  .add_variant("optimized", "the same kernel in a unit built with --use_fast_math", launch_fast));
