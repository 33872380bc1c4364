// A cheating CUDA plugin (T1 through --plugin): the optimized variant launches its kernel on a
// non-blocking side stream it never joins, so the stop event does not wait for it. The plugin's
// kernels go through its own CUDA runtime (Note [plugins]); the device audit must still see the
// escape, as it does for the lab's pairs (tests/gpu/plugin_cheats_test.cpp).
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"

namespace {

constexpr unsigned int block_threads = 256;

__global__ void triple_kernel(const float* __restrict__ x, float* __restrict__ y, std::int64_t n) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 3.0f * x[i];
}

void launch_on(aisp::run_context& ctx, cudaStream_t stream) {
  const std::int64_t n = ctx.param("n");
  triple_kernel<<<static_cast<unsigned int>((n + block_threads - 1) / block_threads), block_threads, 0, stream>>>(
      ctx.as<const float>("x"), ctx.as<float>("y"), n);
  AISP_CHECK_LAUNCH();
}

void on_the_timed_stream(aisp::run_context& ctx) { launch_on(ctx, ctx.stream()); }

void on_a_side_stream(aisp::run_context& ctx) { launch_on(ctx, static_cast<cudaStream_t>(ctx.user_state())); }

void make_side_stream(aisp::run_context& ctx) {
  cudaStream_t side = nullptr;
  AISP_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  ctx.user_state() = side;
}

void drop_side_stream(aisp::run_context& ctx) {
  cudaStreamDestroy(static_cast<cudaStream_t>(ctx.user_state()));
  ctx.user_state() = nullptr;
}

[[nodiscard]] std::int64_t elements(const aisp::workload& w) { return w.get("n"); }

}  // namespace

AISP_REGISTER(aisp::pair("plugin_cheat:stream_escape")
                  .summary("y = 3x over n fp32; the optimized launch escapes to a side stream (plugin fixture)")
                  .benchmark_size({{"n", std::int64_t{1} << 24}})
                  .validation_size({{"n", 1}})
                  .validation_size({{"n", 4099}})
                  .held_out_size({{"n", 65537}})
                  .input("x", aisp::dtype::f32, elements)
                  .output("y", aisp::dtype::f32, elements)
                  .exact_math()
                  .work([](const aisp::workload& w) {
                    const double n = static_cast<double>(w.get("n"));
                    return aisp::work_amount{.bytes = 8.0 * n, .flops = n};
                  })
                  .reference([](aisp::reference_io& io) {
                    const auto x = io.input("x");
                    const auto y = io.output("y");
                    for (std::size_t i = 0; i < x.size(); ++i) y[i] = 3.0 * x[i];
                  })
                  .add_variant("baseline", "on the timed stream", on_the_timed_stream)
                  .add_variant(aisp::variant{.name = "optimized",
                                             .summary = "on a non-blocking side stream, never joined",
                                             .run = on_a_side_stream,
                                             .setup = make_side_stream,
                                             .teardown = drop_side_stream}));
