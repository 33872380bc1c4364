// E4 on the device: a pair whose declared scratch (256 GiB at the benchmark size) cannot fit in
// the card's memory. The judge refuses it before any worker allocates, in one line, instead of
// an out-of-memory error partway through a worker.
// Run: aisp_cheats bench run --targets cheats_gpu --verify-phase detect (tests/gpu/gpu_cheats_test).
#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

pair larger_than_the_card() {
  pair declared = gpu_fixture("e4_declares_more_than_device_memory", "E4",
                              "declares a 256 GiB scratch it never touches", plain(honest));
  // The validation sizes get a scratch as large as x; only the benchmark size asks for 2^36 floats.
  declared.scratch("workspace", dtype::f32, [](const workload& w) {
    return w.get("n") >= (std::int64_t{1} << 24) ? std::int64_t{1} << 36 : w.get("n");
  });
  return declared.tag("check:memory-fit");
}

AISP_REGISTER(larger_than_the_card());

}  // namespace
}  // namespace aisp::cheats_gpu
