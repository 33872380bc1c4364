// GPU planted cheats for the rows this issue covers without CUPTI: T5 (warmup bleed), X8
// (a failed launch left silent), and the device side of O10 (unwritten elements) and L2
// (outputs computed in setup). Each is y = 2x + 1 in fp32 with an honest baseline.
// Run on a GPU: aisp_cheats bench run --targets cheats_gpu --verify-phase detect
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "../gpu/cheats/gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

void launch_affine(run_context& ctx, int skip_modulus, int threads = block_threads) {
  launch_affine(ctx, ctx.stream(), skip_modulus, threads);
}

// A stash the T5 cheat fills on its first call and replays afterwards.
struct stash {
  float* values = nullptr;
  bool filled = false;
};

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
                                  {}, {}, {}, {}, {}, {}}));

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
                                  }, {}, {}, {}, {}, {}}));

AISP_REGISTER(gpu_fixture("x8_silent_failed_launch", "X8",
                          "launches with 2048 threads per block (invalid) and never checks the launch",
                          plain([](run_context& ctx) { launch_affine(ctx, 0, 2048); })).tag("check:launch-error"));

}  // namespace aisp::cheats_gpu
