// The physics gate's planted cheat (V3): the declared work is within the buffers (so the
// declared-work check passes), but the math needs one element of the 16 MiB input it claims to
// stream. The "achieved bandwidth" is then far above anything the host can move: speed-of-light.
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

constexpr std::int64_t claimed_elements = std::int64_t{1} << 22;

void first_element_only(run_context& ctx) { ctx.as<float>("y")[0] = 2.0f * ctx.as<const float>("x")[0] + 1.0f; }

[[nodiscard]] pair beyond_physics_pair() {
  const auto count = [](const workload& w) { return w.get("n"); };
  pair declared("cheats:v3_beyond_physics");
  declared.summary(cheat_summary("V3", "claims to stream 16 MiB of x; its math reads x[0]"))
      .on(backend::host)
      .tag("cheat:V3")
      .benchmark_size({{"n", claimed_elements}});
  for (const std::int64_t n : validation_elements) declared.validation_size({{"n", n}});
  declared.held_out_size({{"n", held_out_elements}})
      .input("x", dtype::f32, count)
      .output("y", dtype::f32, [](const workload&) { return std::int64_t{1}; })
      .work([](const workload& w) { return work_amount{.bytes = 4.0 * static_cast<double>(w.get("n")) + 4.0, .flops = 2.0}; })
      .reference([](reference_io& io) { io.output("y")[0] = 2.0 * io.input("x")[0] + 1.0; })
      .add_variant("baseline", "y = 2 x[0] + 1", first_element_only)
      .add_variant("optimized", "the same; the declaration claims all of x", first_element_only);
  return declared;
}

}  // namespace

AISP_REGISTER(beyond_physics_pair().tag("check:speed-of-light"));

}  // namespace aisp::cheats
