// GPU planted cheats of issue 16's "the audit fails closed": a variant switches the device audit
// off from inside its worker, through the CUPTI entry points the executable watches. The kernels
// stay honest; the pair must fail device-audit with T1 (every
// row the audit guards goes blind, the escape rows first). The third way, a static initializer
// that takes the CUPTI subscription first, lives in tests/cheats/static_initializer_cheats.cpp
// and is run by tests/gpu/audit_fail_closed_test.cpp.
#include <cupti.h>

#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

constexpr CUpti_ActivityKind device_activity[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_KERNEL,
                                                  CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};

// ---- T1: setup() disables the kernel, copy and memset records through the CUPTI API ----
void disable_device_activity(run_context&) {
  for (const auto kind : device_activity) cuptiActivityDisable(kind);
}

// An honest GPU pair outside cheats_gpu, for the static-initializer cheat that takes CUPTI first.
pair honest_gpu_pair() {
  return gpu_pair("cheats_static_gpu:honest_affine", "T1", "none, an honest pair (for a static initializer's CUPTI grab)",
                  plain(honest));
}

}  // namespace
}  // namespace aisp::cheats_gpu

namespace cheats_gpu = aisp::cheats_gpu;

AISP_REGISTER(cheats_gpu::honest_gpu_pair());
AISP_REGISTER(cheats_gpu::gpu_fixture("t1_disables_device_activity", "T1",
                                      "setup() disables CUPTI's kernel, copy and memset records",
                                      cheats_gpu::with_setup(cheats_gpu::honest, cheats_gpu::disable_device_activity, {})).tag("check:device-audit"));
