// Cheating CUDA plugins, whose kernels go through the plugin's own CUDA runtime (Note [plugins]);
// the judge must catch them as it does the lab's (tests/gpu/plugin_cheats_test.cpp):
// - plugin_cheat:stream_escape (T1): the optimized launch runs on a non-blocking side stream it
//   never joins, so the stop event does not wait for it;
// - plugin_cheat:silent_failed_launch (X8): the optimized launch asks for 2048 threads a block,
//   fails, and run() never checks: only the plugin's runtime knows.
#include <cstdint>
#include <string>

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

// Fails at launch (2048 > 1024 threads a block) and leaves the error in the plugin's runtime.
void launch_unchecked(aisp::run_context& ctx) {
  const std::int64_t n = ctx.param("n");
  triple_kernel<<<1, 2048, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("y"), n);
}

[[nodiscard]] std::int64_t elements(const aisp::workload& w) { return w.get("n"); }

aisp::pair triple_pair(std::string target, std::string summary) {
  return aisp::pair(std::move(target))
      .summary(std::move(summary))
      // 2^25: at 2^24 the honest twin's median read 49.7 us, under T4's 50 us floor (H200, 2026-12-03)
      .benchmark_size({{"n", std::int64_t{1} << 25}})
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
      .add_variant("baseline", "on the timed stream", on_the_timed_stream);
}

}  // namespace

AISP_REGISTER(triple_pair("plugin_cheat:stream_escape", "y = 3x; the optimized launch escapes to a side stream (plugin fixture)")
                  .add_variant(aisp::variant{.name = "optimized",
                                             .summary = "on a non-blocking side stream, never joined",
                                             .run = on_a_side_stream,
                                             .setup = make_side_stream,
                                             .teardown = drop_side_stream}));
AISP_REGISTER(triple_pair("plugin_cheat:silent_failed_launch", "y = 3x; the optimized launch fails and is never checked (plugin fixture)")
                  .add_variant("optimized", "2048 threads a block: fails at launch, unchecked", launch_unchecked));
