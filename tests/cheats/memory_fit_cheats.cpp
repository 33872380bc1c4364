// Planted cheats of E4 (memory overcommit): a pair whose declared buffers cannot fit in the
// host's memory. On an overcommitting host the allocations could succeed and the untouched pages
// cost nothing, so a variant that never reads them would time an impossible workload; the judge
// refuses the pair before any worker allocates (runner/memory_fit.hpp), in one line.
// Run: aisp_cheats bench run --targets cheats
#include <cstdint>

#include "aisp/pair.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// 2^42 floats in and out: 32 TiB of buffers.
pair larger_than_memory() {
  pair declared = elementwise_declaration("cheats:e4_declares_more_than_host_memory", "E4", affine_math, dtype::f32,
                                          std::int64_t{1} << 42);
  declared.summary(cheat_summary("E4", "declares 32 TiB of buffers and relies on pages it never touches"))
      .tag("check:memory-fit")
      .add_variant(honest_baseline())
      .add_variant(cheating_variant("touches only the first page of y", [](run_context& ctx) {
        ctx.as<float>("y")[0] = 2.0f * ctx.as<const float>("x")[0] + 1.0f;
      }));
  return declared;
}

// A scratch buffer quadratic in n: 64 GiB of "workspace" at the benchmark size next to a small
// x and y, a few MiB at the validation sizes (which are allocated for real).
pair quadratic_scratch() {
  pair declared = elementwise_declaration("cheats:e4_quadratic_scratch", "E4");
  declared.summary(cheat_summary("E4", "declares a workspace quadratic in n (64 GiB at the benchmark size)"))
      .tag("check:memory-fit")
      .scratch("workspace", dtype::f32, [](const workload& w) { return w.get("n") * (w.get("n") / 64) * 256; })
      .add_variant(honest_baseline())
      .add_variant(cheating_variant("never touches the workspace", honest_run(affine_math)));
  return declared;
}

AISP_REGISTER(larger_than_memory());
AISP_REGISTER(quadratic_scratch());

}  // namespace
}  // namespace aisp::cheats
