// W3 on the device: a pair declares a pass its outputs never show (side features, four per
// element, kept for a later step and never verified), so skipping it or part of it passes every
// output check. The hardware counters see the bytes that were not moved.
// Run: aisp_cheats bench run --targets cheats_gpu --verify-phase detect (tests/gpu/gpu_cheats_test).
#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

constexpr int features_per_element = 4;

// y = 2x + 1, and features[i][k] = x[i] * (k + 1) unless the row (a 4096-element block of x) is
// skipped: every row with `keep_every` 1, every other row with 2, none with 0.
__global__ void affine_with_features(const float* __restrict__ x, float* __restrict__ y, float4* __restrict__ features,
                                     std::int64_t n, int keep_every) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float v = x[i];
  y[i] = 2.0f * v + 1.0f;
  if (keep_every > 0 && (i / 4096) % keep_every == 0) features[i] = make_float4(v, 2.0f * v, 3.0f * v, 4.0f * v);
}

void launch_features(run_context& ctx, int keep_every) {
  const std::int64_t n = ctx.num_elements("x");
  affine_with_features<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("y"),
                                                                          ctx.as<float4>("features"), n, keep_every);
  AISP_CHECK_LAUNCH();
}

// x in, y out, the features pass in a scratch: 24 bytes per element declared.
pair features_pair(const std::string& name, const std::string& what, stage_fn cheat) {
  const auto count = [](const workload& w) { return w.get("n"); };
  return pair("cheats_gpu:" + name)
      .summary("planted cheat W3: " + what)
      .tag("cheat:W3")
      .tag("check:traffic")
      .benchmark_size({{"n", std::int64_t{1} << 24}})
      .validation_size({{"n", 1}})
      .validation_size({{"n", 7}})
      .validation_size({{"n", 1000}})
      .held_out_size({{"n", 1003}})
      .input("x", dtype::f32, count)
      .output("y", dtype::f32, count)
      .scratch("features", dtype::f32, [](const workload& w) { return features_per_element * w.get("n"); })
      .work([](const workload& w) {
        const auto n = static_cast<double>(w.get("n"));
        return work_amount{(8.0 + 4.0 * features_per_element) * n, 2.0 * n};
      })
      .reference([](reference_io& io) {
        const auto x = io.input("x");
        auto y = io.output("y");
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0 * x[i] + 1.0;
      })
      .add_variant("baseline", "y and every feature", [](run_context& ctx) { launch_features(ctx, 1); })
      .add_variant(variant{"optimized", "planted cheat W3: " + what, std::move(cheat), {}, {}, {}, {}, {}, {}, {}});
}

AISP_REGISTER(features_pair("w3_skips_the_features_pass", "computes y and skips the declared features pass (a third of the bytes)",
                            [](run_context& ctx) { launch_features(ctx, 0); }));
AISP_REGISTER(features_pair("w3_writes_every_other_row_of_features",
                            "writes the features of every other 4096-element row only", [](run_context& ctx) { launch_features(ctx, 2); }));

}  // namespace
}  // namespace aisp::cheats_gpu
