// A planted cheat on a derived input (Note [derived inputs] in aisp/buffer_spec.hpp): the variant
// keeps setup()'s copy of the bf16 input instead of reading it each call, as an fp8 KV cache
// variant could keep a quantized copy made once. It is caught only because the harness
// re-derives the input with every fresh fill: were the derived buffer left stale, the honest
// baseline would read the same stale values and agree with the cheat.
// Run: aisp_cheats bench run --targets cheats:l3_derived_input_copied_in_setup
#include <algorithm>
#include <cstdint>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

constexpr const char* rounded = "x_bf16";

// y = 2 x_bf16 + 1 on elements [0, count).
void affine_of_rounded(const std::uint16_t* x, float* y, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) y[i] = 2.0f * bf16_value(x[i]) + 1.0f;
}

void honest(run_context& ctx) { affine_of_rounded(ctx.as<const std::uint16_t>(rounded), ctx.as<float>("y"), elements_of(ctx, "x")); }

std::vector<std::uint16_t>& kept() {
  static std::vector<std::uint16_t> copy;
  return copy;
}

// At the benchmark size only: the validation sizes see an honest variant.
void keep_in_setup(run_context& ctx) {
  kept().clear();
  if (static_cast<std::int64_t>(elements_of(ctx, "x")) != benchmark_elements) return;
  const auto* x = ctx.as<const std::uint16_t>(rounded);
  kept().assign(x, x + elements_of(ctx, "x"));
}

void from_kept_copy(run_context& ctx) {
  if (kept().empty()) return honest(ctx);
  affine_of_rounded(kept().data(), ctx.as<float>("y"), kept().size());
}

pair derived_input_pair() {
  return elementwise_declaration("cheats:l3_derived_input_copied_in_setup", "L3")
      .summary(cheat_summary("L3", "keeps setup()'s copy of a derived bf16 input instead of reading it each call"))
      .derived_input(rounded, dtype::bf16, "x")
      .reference([](reference_io& io) {
        const auto x = io.input(rounded);
        const auto y = io.output("y");
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0 * x[i] + 1.0;
      })
      .add_variant(variant{"baseline", "honest loop: y = 2 x_bf16 + 1, x_bf16 derived from x", honest, {}, {}, {}, {}, {}, {}, {}})
      .add_variant(cheating_variant("keeps setup()'s copy of x_bf16 at the benchmark size", from_kept_copy, keep_in_setup));
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::derived_input_pair().tag("check:baseline-match"));
