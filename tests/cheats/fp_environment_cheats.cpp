// K4 at run time (Note [floating-point environment]): the candidate runs the baseline's own loop
// with its thread's MXCSR switched to flush-to-zero and denormals-are-zero, as -ffast-math's
// start-up code would, and leaves it so. Its outputs match (the mode changes only subnormal
// results), so only fp-environment sees it. Run: aisp_cheats bench run --targets cheats:k4_flush_to_zero_at_run_time
#include <xmmintrin.h>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

constexpr unsigned flush_to_zero_and_denormals_are_zero = 0x8040;

void affine_with_flush_to_zero(run_context& ctx) {
  _mm_setcsr(_mm_getcsr() | flush_to_zero_and_denormals_are_zero);
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:k4_flush_to_zero_at_run_time", "K4",
                                             "switches its thread to flush-to-zero and denormals-are-zero (MXCSR) and stays so",
                                             aisp::cheats::affine_with_flush_to_zero)
                  .tag("check:fp-environment"));
