// tutorial:scale: y = 2x over n fp32 on the GPU. The tutorial's CUDA pair.
// Baseline: one element per thread. Optimized: float4 accesses, a quarter of the memory
// instructions for the same bytes. Skipped with the reason where there is no GPU.
// Run: aisp bench run --plugin libtutorial_pairs.so --targets tutorial:scale
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"

namespace tutorial {
namespace {

constexpr unsigned int block_threads = 256;

__global__ void scale_scalar_kernel(const float* __restrict__ x, float* __restrict__ y, std::int64_t n) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

__global__ void scale_float4_kernel(const float* __restrict__ x, float* __restrict__ y, std::int64_t n) {
  const std::int64_t v = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::int64_t vectors = n / 4;
  if (v < vectors) {
    const float4 in = reinterpret_cast<const float4*>(x)[v];  // the harness aligns buffers to 256 B
    reinterpret_cast<float4*>(y)[v] = make_float4(2.0f * in.x, 2.0f * in.y, 2.0f * in.z, 2.0f * in.w);
  }
  if (v < n % 4) y[vectors * 4 + v] = 2.0f * x[vectors * 4 + v];  // the tail
}

unsigned int blocks_for(std::int64_t items) {
  return static_cast<unsigned int>((items + block_threads - 1) / block_threads);
}

void launch_scalar(aisp::run_context& ctx) {
  const std::int64_t n = ctx.param("n");
  scale_scalar_kernel<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("y"), n);
  AISP_CHECK_LAUNCH();
}

void launch_float4(aisp::run_context& ctx) {
  const std::int64_t n = ctx.param("n");
  scale_float4_kernel<<<blocks_for(n / 4 + 1), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("y"), n);
  AISP_CHECK_LAUNCH();
}

[[nodiscard]] std::int64_t element_count(const aisp::workload& w) { return w.get("n"); }

}  // namespace
}  // namespace tutorial

AISP_REGISTER(aisp::pair("tutorial:scale")
                  .summary("y = 2x over n fp32: one element per thread vs float4")
                  .benchmark_size({{"n", std::int64_t{1} << 26}})
                  .validation_size({{"n", 1}})
                  .validation_size({{"n", 7}})
                  .validation_size({{"n", 4099}})
                  .held_out_size({{"n", 65537}})
                  .input("x", aisp::dtype::f32, tutorial::element_count)
                  .output("y", aisp::dtype::f32, tutorial::element_count)
                  .exact_math()  // doubling is exact
                  .work([](const aisp::workload& w) {
                    const double n = static_cast<double>(w.get("n"));
                    return aisp::work_amount{.bytes = 8.0 * n, .flops = n};
                  })
                  .reference([](aisp::reference_io& io) {
                    const auto x = io.input("x");
                    const auto y = io.output("y");
                    for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0 * x[i];
                  })
                  .add_variant("baseline", "one element per thread, 4-byte accesses", tutorial::launch_scalar)
                  .add_variant("optimized", "float4 accesses, a quarter of the instructions", tutorial::launch_float4));
