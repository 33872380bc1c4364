// L5 on the device: a helper thread started in setup() launches the second half of every call on
// a stream of its own after run() returned, so no timed window holds it. Where it lands shows:
// in a later sample (foreign-activity), after the verified call's synchronization (late-write),
// past the stop event (escaped-work).
// Run: aisp_cheats bench run --targets cheats_gpu --verify-phase detect (tests/gpu/gpu_cheats_test).
#include <atomic>
#include <thread>

#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

struct device_helper {
  std::atomic<unsigned> calls{0};
  std::atomic<unsigned> done{0};
  const float* x = nullptr;
  float* y = nullptr;
  std::int64_t count = 0;
  cudaStream_t stream = nullptr;
};

device_helper* the_helper = nullptr;

void start_device_helper(run_context&) {
  if (the_helper != nullptr) return;
  the_helper = new device_helper;
  AISP_CUDA_CHECK(cudaStreamCreateWithFlags(&the_helper->stream, cudaStreamNonBlocking));
  std::thread([helper = the_helper] {
    for (unsigned seen = 0;;) {
      helper->calls.wait(seen, std::memory_order_acquire);
      seen = helper->calls.load(std::memory_order_acquire);
      affine_kernel<<<blocks_for(helper->count), block_threads, 0, helper->stream>>>(helper->x, helper->y, helper->count, 0);
      cudaStreamSynchronize(helper->stream);
      helper->done.store(seen, std::memory_order_release);
      helper->done.notify_one();
    }
  }).detach();
}

void first_half_then_helper(run_context& ctx) {
  const std::int64_t n = ctx.num_elements("x");
  const std::int64_t half = n / 2;
  if (half > 0) {
    affine_kernel<<<blocks_for(half), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("y"), half, 0);
    AISP_CHECK_LAUNCH();
  }
  auto& helper = *the_helper;
  const unsigned previous = helper.calls.load(std::memory_order_relaxed);
  for (unsigned done = helper.done.load(std::memory_order_acquire); done != previous; done = helper.done.load(std::memory_order_acquire))
    helper.done.wait(done, std::memory_order_acquire);
  helper.x = ctx.as<const float>("x") + half;
  helper.y = ctx.as<float>("y") + half;
  helper.count = n - half;
  helper.calls.store(previous + 1, std::memory_order_release);
  helper.calls.notify_one();
}

}  // namespace
}  // namespace aisp::cheats_gpu

AISP_REGISTER(aisp::cheats_gpu::gpu_fixture("l5_helper_thread_launches_after_return", "L5",
                                            "a helper thread from setup() launches the second half after run() returned",
                                            aisp::cheats_gpu::with_setup(aisp::cheats_gpu::first_half_then_helper,
                                                                         aisp::cheats_gpu::start_device_helper, {}))
                  .tag("check:foreign-activity")
                  .tag("check:late-write"));
