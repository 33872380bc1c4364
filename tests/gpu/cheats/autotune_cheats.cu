// K6 on the device: the variant tunes while it is timed. Every configuration computes the same y,
// so verification passes; the samples measure a moving mix of configurations, and which one
// the reported time belongs to depends on where the samples fell. The audit records the kernels
// each sample ran per call; they must be the same in every sample.
// Run: aisp_cheats bench run --targets cheats_gpu --verify-phase detect (tests/gpu/gpu_cheats_test).
#include <chrono>

#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

// The same y = 2x + 1, with `per_thread` elements per thread: a tile size to tune.
template <int per_thread>
__global__ void affine_tile(const float* __restrict__ x, float* __restrict__ y, std::int64_t n) {
  const std::int64_t first = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) * per_thread;
#pragma unroll
  for (int k = 0; k < per_thread; ++k) {
    if (first + k < n) y[first + k] = 2.0f * x[first + k] + 1.0f;
  }
}

template <int per_thread>
void launch_tile(run_context& ctx) {
  const std::int64_t n = ctx.num_elements("x");
  const auto threads = (n + per_thread - 1) / per_thread;
  affine_tile<per_thread><<<blocks_for(threads), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("y"), n);
  AISP_CHECK_LAUNCH();
}

void launch_config(run_context& ctx, unsigned config) {
  switch (config % 3) {
    case 0: launch_tile<1>(ctx); break;
    case 1: launch_tile<2>(ctx); break;
    default: launch_tile<4>(ctx); break;
  }
}

// Tries the next tile every 40 calls, forever ("online tuning").
void next_tile_every_40_calls(run_context& ctx) {
  static unsigned calls = 0;
  launch_config(ctx, calls++ / 40);
}

// Re-tunes on the wall clock: another tile whenever 3 ms have passed since the last change.
void next_tile_every_3_ms(run_context& ctx) {
  using clock = std::chrono::steady_clock;
  static auto changed = clock::now();
  static unsigned config = 0;
  if (clock::now() - changed > std::chrono::milliseconds(3)) {
    ++config;
    changed = clock::now();
  }
  launch_config(ctx, config);
}

AISP_REGISTER(gpu_fixture("k6_tries_another_tile_every_40_calls", "K6",
                          "tunes its tile size while timed, moving to the next of three every 40 calls",
                          plain(next_tile_every_40_calls))
                  .tag("check:kernel-choice"));

AISP_REGISTER(gpu_fixture("k6_retunes_on_the_wall_clock", "K6",
                          "moves to another tile size whenever 3 ms have passed, so each sample runs what the clock chose",
                          plain(next_tile_every_3_ms))
                  .tag("check:kernel-choice"));

}  // namespace
}  // namespace aisp::cheats_gpu
