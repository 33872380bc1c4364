// K4 planted in the source: the cheating variant is compiled under #pragma GCC optimize
// ("fast-math"), which no compiler switch shows (-frecord-gcc-switches records the command
// line only). The compiler launcher finds the pragma in this unit (scripts/record_math_flags),
// so this pair fails build-symmetry and no other pair of aisp_cheats does.
// Run: aisp_cheats bench run --targets cheats:k4_fast_math_pragma
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

#pragma GCC push_options
#pragma GCC optimize("fast-math")

namespace aisp::cheats {
namespace {

// y = 2x + 1 with reassociation and reciprocals allowed: the compiler may vectorize the sum
// differently from the baseline's.
void affine_under_fast_math(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  const auto n = elements_of(ctx, "x");
  for (std::size_t i = 0; i < n; ++i) y[i] = (4.0f * x[i] + 2.0f) / 2.0f;
}

}  // namespace
}  // namespace aisp::cheats

#pragma GCC pop_options

AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:k4_fast_math_pragma", "K4",
                                             "computes under #pragma GCC optimize(\"fast-math\")",
                                             aisp::cheats::affine_under_fast_math)
                  .tag("check:build-symmetry"));
