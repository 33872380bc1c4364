// K4 planted cheat: this file alone is compiled with -ffast-math, into a binary of its own,
// aisp_cheats_k4 (tests/CMakeLists.txt); own_process_cheats_test.cpp runs it. It is the
// build asymmetry of "-use_fast_math only on the optimized variant". Its optimized variant
// computes the honest result; the cheat is the flag.
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

void fast_math_affine(run_context& ctx) {
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t i = 0; i < elements_of(ctx, "x"); ++i) y[i] = 2.0f * x[i] + 1.0f;
}

}  // namespace

AISP_REGISTER(elementwise_pair("cheats_k4:fast_math_unit", "K4", "the optimized variant's file is built with -ffast-math",
                               fast_math_affine));

}  // namespace aisp::cheats
