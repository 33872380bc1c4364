// A control for the cold flush itself (group flush_gpu, not cheats): y = 2x + 1 on 2^22 fp32,
// 32 MiB in and out, which fits in the H100's 50 MiB L2. Hot mode times it from L2; a cold
// sample whose flush does not evict would be as fast. No fixture of the cheats could show that.
// Run: aisp_cheats bench run --targets flush_gpu (tests/gpu/flush_test.cpp).
#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

pair l2_resident_affine() {
  return affine_declaration("flush_gpu:l2_resident_affine", "honest y = 2x + 1 whose 32 MiB fit in L2: the cold flush must evict them",
                            std::int64_t{1} << 22)
      .add_variant("optimized", "the same kernel", honest);
}

AISP_REGISTER(l2_resident_affine());

}  // namespace
}  // namespace aisp::cheats_gpu
