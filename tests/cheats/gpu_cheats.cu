// GPU planted cheats for the rows this issue covers without CUPTI: T5 (warmup bleed), X8
// (a failed launch left silent), and the device side of O10 (unwritten elements) and L2
// (outputs computed in setup). Each is y = 2x + 1 in fp32 with an honest baseline.
// Run on a GPU: aisp_cheats bench run --targets cheats_gpu --verify-phase detect
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"

namespace aisp::cheats_gpu {
namespace {

constexpr int block_threads = 256;

__global__ void affine_kernel(const float* x, float* y, std::int64_t n, int skip_modulus) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  if (skip_modulus > 0 && i % skip_modulus == 3) return;  // O10: scattered elements never written
  y[i] = 2.0f * x[i] + 1.0f;
}

unsigned blocks_for(std::int64_t n) { return static_cast<unsigned>((n + block_threads - 1) / block_threads); }

void launch_affine(run_context& ctx, int skip_modulus, int threads = block_threads) {
  const std::int64_t n = ctx.num_elements("x");
  affine_kernel<<<blocks_for(n), threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("y"), n, skip_modulus);
}

void honest(run_context& ctx) {
  launch_affine(ctx, 0);
  AISP_CHECK_LAUNCH();
}

// A stash the T5 cheat fills on its first call and replays afterwards.
struct stash {
  float* values = nullptr;
  bool filled = false;
};

pair gpu_fixture(const std::string& name, const std::string& code, const std::string& what, variant cheat) {
  const auto count = [](const workload& w) { return w.get("n"); };
  cheat.name = "optimized";
  cheat.summary = "planted cheat " + code + ": " + what;
  return pair("cheats_gpu:" + name)
      .summary("planted cheat " + code + ": " + what)
      .tag("cheat:" + code)
      .benchmark_size({{"n", std::int64_t{1} << 24}})
      .validation_size({{"n", 1}})
      .validation_size({{"n", 7}})
      .validation_size({{"n", 1000}})
      .held_out_size({{"n", 1003}})
      .input("x", dtype::f32, count)
      .output("y", dtype::f32, count)
      .work([](const workload& w) { return work_amount{8.0 * static_cast<double>(w.get("n")), 2.0 * static_cast<double>(w.get("n"))}; })
      .reference([](reference_io& io) {
        const auto x = io.input("x");
        auto y = io.output("y");
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0 * x[i] + 1.0;
      })
      .add_variant("baseline", "honest y = 2x + 1", honest)
      .add_variant(std::move(cheat));
}

variant plain(stage_fn run) { return variant{"", "", std::move(run), {}, {}}; }

}  // namespace

AISP_REGISTER(gpu_fixture("o10_device_skips_elements", "O10", "the kernel skips every element i % 97 == 3",
                          plain([](run_context& ctx) {
                            launch_affine(ctx, 97);
                            AISP_CHECK_LAUNCH();
                          })));

AISP_REGISTER(gpu_fixture("l2_device_output_in_setup", "L2", "the kernel runs in setup(); run() does nothing",
                          variant{"", "", [](run_context&) {},
                                  [](run_context& ctx) {
                                    launch_affine(ctx, 0);
                                    AISP_CHECK_LAUNCH();
                                  },
                                  {}}));

AISP_REGISTER(gpu_fixture("t5_device_first_call_replayed", "T5",
                          "the first call's result is stashed on the device and copied on later calls",
                          variant{"", "",
                                  [](run_context& ctx) {
                                    auto* s = static_cast<stash*>(ctx.user_state());
                                    const auto bytes = static_cast<std::size_t>(ctx.num_elements("y")) * sizeof(float);
                                    if (!s->filled) {
                                      launch_affine(ctx, 0);
                                      AISP_CHECK_LAUNCH();
                                      AISP_CUDA_CHECK(cudaMemcpyAsync(s->values, ctx.as<float>("y"), bytes, cudaMemcpyDeviceToDevice, ctx.stream()));
                                      s->filled = true;
                                    } else {
                                      AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.as<float>("y"), s->values, bytes, cudaMemcpyDeviceToDevice, ctx.stream()));
                                    }
                                  },
                                  [](run_context& ctx) {
                                    auto* s = new stash;
                                    AISP_CUDA_CHECK(cudaMalloc(&s->values, static_cast<std::size_t>(ctx.num_elements("y")) * sizeof(float)));
                                    ctx.user_state() = s;
                                  },
                                  [](run_context& ctx) {
                                    auto* s = static_cast<stash*>(ctx.user_state());
                                    cudaFree(s->values);
                                    delete s;
                                    ctx.user_state() = nullptr;
                                  }}));

AISP_REGISTER(gpu_fixture("x8_silent_failed_launch", "X8",
                          "launches with 2048 threads per block (invalid) and never checks the launch",
                          plain([](run_context& ctx) { launch_affine(ctx, 0, 2048); })));

}  // namespace aisp::cheats_gpu
